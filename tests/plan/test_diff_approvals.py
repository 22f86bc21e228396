"""Structural diff, share deltas and approval rules on many tree shapes (hypothesis)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy
from allotment.plan.approvals import PLATFORM, check_approvals, required_approvals
from allotment.plan.diff import diff_configs, diff_revisions
from allotment.plan.shares import leaf_totals, share_rows
from tests.plan.factory import N, build


@st.composite
def trees(draw: st.DrawFn, depth: int = 3) -> N:
    def node(level: int, name: str) -> N:
        n_kids = draw(st.integers(0 if level else 2, 3 if level < depth else 0))
        kids = {f"{name}-{i}": node(level + 1, f"{name}-{i}") for i in range(n_kids)}
        return N(draw(st.integers(1, 9)), (f"{name}@o.org",), kids or None)

    return node(0, "org")


def all_names(spec: N, name: str = "org") -> list[tuple[str, str | None]]:
    out = [(name, None)]
    for k, v in (spec.children or {}).items():
        out += [(n, p if p is not None else name) for n, p in all_names(v, k)]
    return out


def bump(spec: N, target: str, weight: int) -> N:
    kids = {
        k: (replace(v, weight=weight) if k == target else bump(v, target, weight))
        for k, v in (spec.children or {}).items()
    }
    return replace(spec, children=kids or None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_a_config_has_no_diff_with_itself(spec: N) -> None:
    a = build("org", spec)
    d = diff_configs(a, a)
    assert d.empty
    assert all(r.delta_pp == 0 for r in share_rows(a, a))
    assert required_approvals(a, a, d) == ()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.data())
def test_a_share_change_is_diffed_conserved_and_needs_the_parent(
    spec: N, data: st.DataObject
) -> None:
    nodes = [(n, p) for n, p in all_names(spec) if p is not None]
    target, parent = data.draw(st.sampled_from(nodes))
    old = next(v for k, v in _walk(spec) if k == target).weight
    new_weight = data.draw(st.integers(1, 30).filter(lambda w: w != old))
    a, b = build("org", spec), build("org", bump(spec, target, new_weight))
    d = diff_configs(a, b)
    assert (target, "share") in {(c.node, c.kind) for c in d.nodes}
    assert sum(t.delta_pp for t in leaf_totals(a, b)) == pytest.approx(0.0, abs=1e-9)
    groups = required_approvals(a, b, d)
    assert [(g.node, g.owners) for g in groups] == [(parent, (f"{parent}@o.org",))]


def _walk(spec: N) -> list[tuple[str, N]]:
    out: list[tuple[str, N]] = []
    for k, v in (spec.children or {}).items():
        out.append((k, v))
        out += _walk(v)
    return out


def test_sole_owner_author_escalates_to_the_parent_and_cannot_approve() -> None:
    spec = N(
        owners=("ceo@o.org",),
        children={"ml": N(1, ("lead@o.org",), {"a": N(1), "b": N(1)}), "ops": N(1, ("ops@o.org",))},
    )
    a, b = build("org", spec), build("org", bump(spec, "a", 3))
    groups = required_approvals(a, b, diff_configs(a, b), ["Lead <LEAD@o.org>"])
    assert [(g.node, g.escalated_from, g.owners) for g in groups] == [("org", "ml", ("ceo@o.org",))]
    status = check_approvals(groups, ["lead@o.org"], ["lead@o.org"])
    assert not status[0].satisfied
    assert check_approvals(groups, ["C <ceo@o.org>"], ["lead@o.org"])[0].satisfied


def test_co_owner_author_does_not_escalate_but_is_flagged() -> None:
    spec = N(
        owners=("ceo@o.org",),
        children={"ml": N(1, ("lead@o.org", "dep@o.org"), {"a": N(1), "b": N(1)})},
    )
    a, b = build("org", spec), build("org", bump(spec, "a", 3))
    (g,) = required_approvals(a, b, diff_configs(a, b), ["lead@o.org"])
    assert (g.node, g.author_is_owner, g.escalated_from) == ("ml", True, None)


def test_moves_owner_and_cap_changes() -> None:
    base = N(
        owners=("r@o.org",),
        children={
            "p": N(1, ("p@o.org",), {"t": N(1, ("t@o.org",))}),
            "q": N(1, ("q@o.org",), {"u": N(1)}),
        },
    )
    head = N(
        owners=("r@o.org",),
        children={
            "p": N(1, ("p@o.org",), {"x": N(1)}),
            "q": N(1, ("q@o.org",), {"u": N(1, max_gpus=8), "t": N(1, ("t2@o.org",))}),
        },
    )
    a, b = build("org", base), build("org", head)
    d = diff_configs(a, b)
    kinds = {(c.node, c.kind) for c in d.nodes}
    assert {("t", "moved"), ("t", "owners"), ("u", "cap"), ("x", "added")} <= kinds
    nodes = {g.node for g in required_approvals(a, b, d)}
    assert {"p", "q", "t"} <= nodes  # old parent, new parent, and t's own owners for its owners


def test_policy_change_needs_platform_team_and_is_listed_once() -> None:
    a = build("org", N(children={"a": N(), "b": N()}), policy=Policy(platform_team=("pat@o.org",)))
    before = {"policies/scheduler.yaml": b"platform_team: [pat@o.org]\nlookback: 7d\n"}
    after = {"policies/scheduler.yaml": b"platform_team: [pat@o.org]\nlookback: 3d\nshare_floor: 0.1\n"}
    d = diff_revisions(a, a, before, after)
    assert [(f.field, f.before, f.after) for f in d.fields] == [
        ("lookback", "7d", "3d"),
        ("share_floor", "(unset)", "0.1"),
    ]
    (g,) = required_approvals(a, a, d)
    assert (g.node, g.owners) == (PLATFORM, ("pat@o.org",))
