from __future__ import annotations

import struct
from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.context import Context, build_context
from allotment.core.fairshare import level_value, rank_leaves
from tests.core.builders import make_config


def _order(tree: dict, usage: dict[str, float]) -> list[str]:
    ctx = build_context(make_config(tree), "c1")
    return [r.leaf for r in rank_leaves(ctx, usage)]


def test_least_used_relative_to_share_comes_first() -> None:
    assert _order({"a": 1, "b": 1}, {"a": 10, "b": 5}) == ["b", "a"]
    assert _order({"a": 3, "b": 1}, {"a": 30, "b": 20}) == ["a", "b"]  # a: .6/.75 < b: .4/.25


def test_whole_subtree_of_the_better_sibling_comes_first() -> None:
    tree = {"p": {"p1": 1, "p2": 1}, "q": {"q1": 1, "q2": 1}}
    # p as a whole is under-served, although p2 alone used more than q1
    order = _order(tree, {"p1": 0, "p2": 40, "q1": 30, "q2": 50})
    assert order == ["p1", "p2", "q1", "q2"]


def test_ties_go_to_the_larger_share_then_the_name() -> None:
    assert _order({"b": 1, "a": 1}, {}) == ["a", "b"]
    assert _order({"a": 1, "b": 2}, {}) == ["b", "a"]


def test_ranking_changes_as_usage_accrues() -> None:
    tree = {"a": 1, "b": 1}
    assert _order(tree, {"a": 1, "b": 2})[0] == "a"
    assert _order(tree, {"a": 3, "b": 2})[0] == "b"


def test_level_fair_share_is_exposed_per_level() -> None:
    ctx = build_context(make_config({"p": {"p1": 1, "p2": 1}, "q": 1}), "c1")
    ranks = {r.leaf: r for r in rank_leaves(ctx, {"p1": 10, "p2": 30, "q": 40})}
    # p has 2/3 of the share (two units of weight) and half the usage; p1 has 1/4 of p's usage
    assert ranks["p1"].level_fair_share == (0.75, 0.5)
    assert ranks["q"].level_fair_share == (1.5,)


def _reference_order(ctx: Context, usage: Mapping[str, float]) -> list[tuple[str, int, tuple[float, ...]]]:
    """The Fair Tree descent as first written (nested closures, ``sum`` over generators, each
    level's total summed again), to hold ``rank_leaves``'s plain functions to it bit for bit."""
    subtree: dict[str, float] = {}

    def total(name: str) -> float:
        node = ctx.tree[name]
        v = max(0.0, usage.get(name, 0.0)) if not node.children else sum(total(c) for c in node.children)
        subtree[name] = v
        return v

    total(ctx.root)
    out: list[tuple[str, int, tuple[float, ...]]] = []

    def walk(name: str, path: tuple[float, ...]) -> None:
        node = ctx.tree[name]
        if not node.children:
            if name in ctx.entitlement_gpus:
                out.append((name, len(out), path))
            return
        sib_total = sum(subtree[c] for c in node.children)
        keyed = []
        for c in node.children:
            share = ctx.tree[c].share
            keyed.append((level_value(subtree[c] / sib_total if sib_total > 0 else 0.0, share), -share, c))
        keyed.sort()
        for v, _, c in keyed:
            walk(c, (*path, v))

    walk(ctx.root, ())
    return out


_TREE = {"p": {"p1": 1, "p2": 3, "p3": {"x": 1, "y": 2}}, "q": {"q1": 1, "q2": 1}, "r": 2}
_LEAVES = ("p1", "p2", "x", "y", "q1", "q2", "r")


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(_LEAVES), st.floats(0.0, 1e4) | st.sampled_from([0.0, 0.1, 0.2, 0.3, 1 / 3])))
def test_the_ranking_is_the_reference_descent_bit_for_bit(usage: dict[str, float]) -> None:
    ctx = build_context(make_config(_TREE), "c1")
    got = [(r.leaf, r.rank, r.level_fair_share) for r in rank_leaves(ctx, usage)]
    assert got == _reference_order(ctx, usage)
    assert [struct.pack(f"{len(p)}d", *p) for _, _, p in got] == [
        struct.pack(f"{len(p)}d", *p) for _, _, p in _reference_order(ctx, usage)]
