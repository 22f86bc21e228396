"""The within-team derivation's modes (issue 28, item 1): ``adaptive`` (two weight sets blended
by load over every factor, scores in [0, 1], the short-prerequisite rule), ``fifo``, and
``dependencies: false``.  The default, ``fixed``, is the order tests/core/test_priority.py pins."""

from __future__ import annotations

import dataclasses
import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import BELOW, Boost, Policy, PriorityWeights, WeightSet
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.jobs import JobSpec
from allotment.core.priority import (
    INHERIT,
    Scorer,
    active_boosts,
    blended,
    declared_factor,
    dependants,
)
from allotment.core.state import Pend
from tests.core.builders import make_config

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
ADAPTIVE = PriorityWeights(mode="adaptive")


def _spec(jid: str, *, account: str = "a", user: str = "u", gpus: int = 1, work: float = 3600.0,
          deadline: float | None = None, priority: int = 0, depends_on: tuple[str, ...] = ()) -> JobSpec:
    return JobSpec(id=jid, submit=0.0, account=account, gpus=gpus, work=work, user=user, deadline=deadline,
                   priority=priority, depends_on=depends_on)


def _pend(spec: JobSpec, eligible: float = 0.0, declared: int | None = None) -> Pend:
    return Pend(spec, eligible, eligible, 0.0, spec.priority if declared is None else declared, None, spec.account)


def _scorer(weights: PriorityWeights = ADAPTIVE, *, t: float = 1000.0, load: float = 1.0, max_free: int = 8,
            specs: tuple[JobSpec, ...] = (), boosts: tuple[Boost, ...] = (),
            users: dict[tuple[str, str], int] | None = None) -> Scorer:
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(priority_weights=weights, boosts=boosts)),
                        "c1")
    return Scorer(ctx, t, load, max_free, UserGpus.of(users or {}), active_boosts(ctx, t), dependants(specs))


def test_adaptive_weights_are_the_write_ups_table_below_and_above_the_threshold() -> None:
    assert blended(ADAPTIVE, 0.1) == (BELOW.declared, BELOW.deadline, BELOW.age, BELOW.fairness, BELOW.fit)
    above = WeightSet()
    assert blended(ADAPTIVE, 0.9) == (above.declared, above.deadline, above.age, above.fairness, above.fit)
    assert (BELOW.deadline, BELOW.fit, BELOW.age, BELOW.fairness) == (0.5, 0.2, 0.2, 0.1)
    assert (above.deadline, above.fit, above.age, above.fairness) == (0.2, 0.5, 0.1, 0.2)


@given(st.floats(0.0, 3.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_the_blend_is_continuous_in_load(load: float, threshold: float, blend: float) -> None:
    """Lipschitz: a small move in load moves each weight by at most |dload| / blend x the gap."""
    pw = dataclasses.replace(ADAPTIVE, threshold=threshold, blend=max(blend, 0.01))
    eps = 1e-6
    a, b = blended(pw, load), blended(pw, load + eps)
    for x, y in zip(a, b, strict=True):
        assert abs(x - y) <= eps / pw.blend + 1e-12


def test_urgency_dominates_under_light_load_and_fit_under_heavy_load() -> None:
    urgent = _spec("urgent", gpus=16, deadline=1000.0 + 3600.0 + 600.0)  # does not fit, deadline near
    fits = _spec("fits", gpus=1)
    light, heavy = _scorer(load=0.2), _scorer(load=2.0)
    assert light.total(_pend(urgent)) > light.total(_pend(fits))
    assert heavy.total(_pend(fits)) > heavy.total(_pend(urgent))


job = st.builds(
    lambda g, w, d, p, e, u: _spec("x", gpus=g, work=w, deadline=d, priority=p, user=u),
    st.integers(1, 64), st.floats(60.0, 1e6), st.one_of(st.none(), st.floats(-1e6, 1e7)),
    st.integers(-(2**31), 2**31 - 1), st.floats(0.0, 1e6), st.sampled_from(["u", "v"]),
)


@settings(max_examples=200)
@given(job, st.floats(0.0, 1e6), st.floats(0.0, 5.0), st.integers(0, 64), st.integers(0, 512))
def test_adaptive_scores_are_in_0_1(spec: JobSpec, eligible: float, load: float, max_free: int, running: int) -> None:
    s = _scorer(load=load, max_free=max_free, t=1e6, users={("a", "u"): running})
    sc = s.parts(_pend(spec, eligible))
    assert 0.0 <= sc.total <= 1.0
    assert all(0.0 <= term.factor <= 1.0 for term in sc.terms)
    assert abs(sc.declared + sc.deadline + sc.age + sc.fairness + sc.fit - sc.total) < 1e-12


@settings(max_examples=200)
@given(st.lists(st.tuples(st.floats(60.0, 1e5), st.one_of(st.none(), st.floats(0.0, 2e5)), st.integers(-5, 5)),
                min_size=2, max_size=6), st.floats(0.0, 3.0), st.sampled_from(["adaptive", "fifo"]))
def test_a_prerequisite_never_ranks_below_0_9x_its_same_team_dependant(
    chain: list[tuple[float, float | None, int]], load: float, mode: str
) -> None:
    """A chain j0 <- j1 <- ...: each prerequisite scores at least INHERIT x each dependant's own
    score as if that dependant were pending now with the prerequisite's work still ahead of it
    (scores of these modes are >= 0; ``fixed``, whose may be negative, is pinned in
    test_priority.py)."""
    specs = tuple(_spec(f"j{i}", work=w, deadline=d, priority=p, depends_on=(f"j{i - 1}",) if i else ())
                  for i, (w, d, p) in enumerate(chain))
    weights = dataclasses.replace(ADAPTIVE, mode=mode)  # type: ignore[arg-type]
    s = _scorer(weights, t=0.0, load=load, specs=specs)
    alone = _scorer(dataclasses.replace(weights, dependencies=False), t=0.0, load=load, specs=specs)
    for i in range(len(specs) - 1):
        pre = s.total(_pend(specs[i]))
        for d in specs[i + 1:]:
            ahead = dataclasses.replace(d, deadline=None if d.deadline is None else d.deadline - specs[i].work)
            assert pre >= INHERIT * alone.total(_pend(ahead)) - 1e-12


def test_a_short_prerequisite_of_a_long_job_goes_first() -> None:
    """The write-up's "3 hours to 45 minutes": a 4-minute prep step unblocking a 3-hour training
    job due soon is scored as high as the training job itself (the write-up's "boost B above
    A"), above a teammate's less urgent job that would otherwise go before it; a prep step of
    an hour (over 5% of the training) only inherits 0.9x."""
    t = 1000.0
    prep = _spec("prep", work=240.0)
    train = _spec("train", work=3 * 3600.0, deadline=t + 3 * 3600.0 + 240.0 + 1800.0, depends_on=("prep",))
    other = _spec("other", work=3600.0, deadline=t + 3600.0 + 7200.0)
    s = _scorer(t=t, load=1.0, specs=(prep, train, other))
    as_if_pending = _scorer(t=t, load=1.0)
    whole = as_if_pending.total(_pend(dataclasses.replace(train, deadline=train.deadline - 240.0, depends_on=()), t))
    assert s.parts(_pend(prep)).inherited == whole  # not 0.9x: it goes first
    assert s.total(_pend(prep)) > s.total(_pend(other))
    long_prep = _spec("prep", work=3600.0)
    s2 = _scorer(t=t, load=1.0, specs=(long_prep, train, other))
    slow = as_if_pending.total(_pend(dataclasses.replace(train, deadline=train.deadline - 3600.0, depends_on=()), t))
    assert s2.parts(_pend(long_prep)).inherited == INHERIT * slow


def test_fifo_orders_by_eligibility_and_boosts_still_count() -> None:
    early, late = _spec("early", priority=0), _spec("late", priority=100)
    boosted = _spec("boosted", user="v")
    b = Boost("user:v", 1.0, T0 + dt.timedelta(days=1), "demo", "lead")
    s = _scorer(dataclasses.replace(ADAPTIVE, mode="fifo"), boosts=(b,))
    order = s.rank([_pend(late, 50.0), _pend(early, 10.0), _pend(boosted, 90.0)])
    assert [p.jid for p in order] == ["boosted", "early", "late"]


def test_dependencies_off_scores_each_job_alone() -> None:
    pre = _spec("pre", priority=0)
    dep = _spec("dep", priority=9, deadline=0.0, depends_on=("pre",))
    for mode in ("fixed", "adaptive"):
        on = _scorer(dataclasses.replace(ADAPTIVE, mode=mode), specs=(pre, dep))  # type: ignore[arg-type]
        off = _scorer(dataclasses.replace(ADAPTIVE, mode=mode, dependencies=False), specs=(pre, dep))  # type: ignore[arg-type]
        p = _pend(pre, declared=9)  # as the scheduler hands it: declared priority propagated
        assert on.parts(p).inherited > 0 and off.parts(p).inherited == 0
        assert off.total(p) < on.total(p)


@settings(max_examples=100)
@given(st.lists(st.tuples(st.integers(-5, 5), st.floats(0, 1e5), st.sampled_from(["a", "b"])), min_size=1,
                max_size=8), st.sampled_from(["adaptive", "fifo", "fixed"]), st.floats(0.0, 3.0))
def test_another_teams_jobs_never_change_a_teams_scores(
    rows: list[tuple[int, float, str]], mode: str, load: float
) -> None:
    """Nothing here orders teams: a team's scores are the same with or without another team's
    jobs, even ones that depend on it with the highest priority and a deadline now."""
    mine = tuple(_spec(f"a{i}", priority=p, depends_on=(f"a{i - 1}",) if i else ()) for i, (p, _, _) in enumerate(rows))
    theirs = tuple(_spec(f"b{i}", account="b", priority=2**31 - 1, deadline=0.0, depends_on=(f"a{i}",))
                   for i in range(len(rows)))
    weights = dataclasses.replace(ADAPTIVE, mode=mode)  # type: ignore[arg-type]
    alone, together = _scorer(weights, load=load, specs=mine), _scorer(weights, load=load, specs=mine + theirs)
    for spec, (_, eligible, _) in zip(mine, rows, strict=True):
        assert alone.total(_pend(spec, eligible)) == together.total(_pend(spec, eligible))


def test_an_expired_boost_has_no_effect() -> None:
    spec = _spec("j", user="v")
    b = Boost("user:v", 5.0, T0 + dt.timedelta(seconds=500), "demo", "lead")
    for mode in ("fixed", "adaptive", "fifo"):
        w = dataclasses.replace(ADAPTIVE, mode=mode)  # type: ignore[arg-type]
        assert _scorer(w, t=1000.0, boosts=(b,)).parts(_pend(spec)) == _scorer(w, t=1000.0).parts(_pend(spec))
        assert _scorer(w, t=100.0, boosts=(b,)).total(_pend(spec)) > _scorer(w, t=100.0).total(_pend(spec))


def test_declared_factor_keeps_the_order_and_stays_in_0_1() -> None:
    xs = [-(2**31), -5, -1, 0, 1, 5, 2**31 - 1]
    fs = [declared_factor(x) for x in xs]
    assert fs == sorted(fs) and len(set(fs)) == len(fs) and all(0 < f < 1 for f in fs)
    assert declared_factor(0) == 0.5


def test_a_non_fixed_mode_keeps_no_orders() -> None:
    """The fast walk keeps each queue's order while the load's fit weight is unchanged
    (core.candidates); an adaptive order moves with load everywhere, so it is never kept: the
    fast walk falls back to UNKEPT (the reference's visits, the dependants read merged), and
    the reference (``--no-skip``) stays the reference."""
    from allotment.core.scheduler import Scheduler
    from allotment.core.snapshot import NodeState
    from allotment.core.walk import FAST, REFERENCE, UNKEPT

    nodes = (NodeState("n1", 8, True, None),)
    for mode, walk in (("fixed", FAST), ("adaptive", UNKEPT), ("fifo", UNKEPT)):
        weights = dataclasses.replace(ADAPTIVE, mode=mode)  # type: ignore[arg-type]
        ctx = build_context(make_config({"a": 1}, nodes=1, policy=Policy(priority_weights=weights)), "c1")
        assert Scheduler(ctx, nodes, walk=FAST).walk is walk
        assert Scheduler(ctx, nodes, walk=REFERENCE).walk is REFERENCE
        assert walk.reuses == (mode == "fixed") and walk.merges


def test_set_names_every_within_team_knob() -> None:
    from allotment.sim.overrides import apply_overrides

    pol = apply_overrides(Policy(), {"within_team.mode": "adaptive", "within_team.dependencies": "false",
                                     "within_team.below.fit": "0.7", "within_team.above.deadline": "0.3",
                                     "within_team.threshold": "0.8", "within_team.short_prerequisite": "0.1"})
    w = pol.priority_weights
    assert (w.mode, w.dependencies, w.threshold, w.short_prerequisite) == ("adaptive", False, 0.8, 0.1)
    assert w.below == dataclasses.replace(BELOW, fit=0.7) and w.above == WeightSet(deadline=0.3)
