"""What the within-team score keeps on each job across the passes of an epoch (``Pend.static``:
declared + deadline + age and the boost; ``Pend.inherit``: the parts its dependants lend) is read
only by a scorer it was made for: one of the same epoch, the same policy weights (a run switched
to another config scores the same jobs with other weights: ``sim.switch``), that keeps (``memo``:
a scorer that does not -- explain's, the reference's -- may pass other boosts), and, for the
inherited parts, the same table of users' running GPUs (the parts name users by that table's
ids).  Each case scores the same jobs with a keeping scorer, then with another that differs in
one of these, and compares with a scorer that keeps nothing.  ``tests/core/test_priority.py``
checks the kept scores against recomputed ones within one policy and one table."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy, PriorityWeights
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.jobs import JobSpec
from allotment.core.priority import Scorer, active_boosts, dependants
from allotment.core.state import Pend
from allotment.core.weights import ScoreWeights
from tests.core.builders import make_config
from tests.sim.strategies import _boost

CTX = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(boosts=(_boost("user:u1", 0.4, 10**6),))),
                    "c1", epoch=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
T = 1000.0
WEIGHTS = st.builds(PriorityWeights, deadline=st.sampled_from([0.0, 1.0, 3.0]), age=st.sampled_from([0.0, 1.0, 2.0]),
                    declared=st.sampled_from([0.5, 1.0, 4.0]), fairness=st.sampled_from([0.0, 0.5, 2.0]))
jobs = st.lists(st.tuples(st.integers(-1, 2), st.sampled_from([0.0, 300.0, 900.0]), st.sampled_from(["u0", "u1", "u2"]),
                          st.sampled_from([None, 4000.0, 90000.0])), min_size=1, max_size=8)


def _jobs(specs: list[tuple[int, float, str, float | None]]) -> tuple[list[Pend], dict[str, object]]:
    """Pending jobs, every third of which a waiting (not queued) job of higher priority depends on."""
    made = [JobSpec(id=f"j{i}", submit=0.0, account="a", gpus=1 + i % 3, work=1800.0, user=u, deadline=d, priority=pr)
            for i, (pr, _, u, d) in enumerate(specs)]
    waiting = [JobSpec(id=f"w{i}", submit=0.0, account="a", gpus=1, work=600.0, user=f"u{i % 3}", priority=3,
                       depends_on=(f"j{i}",)) for i in range(0, len(made), 3)]
    pend = [Pend(s, e, e, 0.0, s.priority, None, "a") for s, (_, e, _, _) in zip(made, specs, strict=True)]
    return pend, dependants(made + waiting)  # type: ignore[return-value]


def _totals(s: Scorer, pend: list[Pend]) -> list[float]:
    return [s.total(p) for p in pend]


@settings(max_examples=100, deadline=None)
@given(jobs, WEIGHTS, WEIGHTS)
def test_a_job_scored_under_other_weights_is_scored_afresh(specs: list[tuple[int, float, str, float | None]],
                                                           w1: PriorityWeights, w2: PriorityWeights) -> None:
    pend, deps = _jobs(specs)
    users = UserGpus()
    boosts = active_boosts(CTX, T)
    Scorer(CTX, T, 1.0, 2, users, boosts, deps, memo=True, weights=ScoreWeights(w1))  # type: ignore[arg-type]
    _totals(Scorer(CTX, T, 1.0, 2, users, boosts, deps, memo=True, weights=ScoreWeights(w1)), pend)  # type: ignore[arg-type]
    w = ScoreWeights(w2)
    kept = Scorer(CTX, T, 1.0, 2, users, boosts, deps, memo=True, weights=w)  # type: ignore[arg-type]
    fresh = Scorer(CTX, T, 1.0, 2, users, boosts, deps, weights=w)  # type: ignore[arg-type]
    assert _totals(kept, pend) == _totals(fresh, pend)


@settings(max_examples=100, deadline=None)
@given(jobs, st.sampled_from([{}, {"user:u0": 2.0}, {"job:j0": 1.5, "user:u2": 0.25}]))
def test_a_scorer_that_keeps_nothing_reads_its_own_boosts(specs: list[tuple[int, float, str, float | None]],
                                                          other: dict[str, float]) -> None:
    pend, deps = _jobs(specs)
    users = UserGpus()
    _totals(Scorer(CTX, T, 1.0, 2, users, active_boosts(CTX, T), deps, memo=True), pend)  # type: ignore[arg-type]
    plain = Scorer(CTX, T, 1.0, 2, users, other, deps)  # type: ignore[arg-type]
    assert _totals(plain, pend) == [plain.parts(p).total for p in pend]


@settings(max_examples=100, deadline=None)
@given(jobs, st.lists(st.tuples(st.sampled_from(["u0", "u1", "u2"]), st.integers(0, 16)), max_size=4))
def test_the_parts_dependants_lend_are_made_again_for_another_table_of_users(
    specs: list[tuple[int, float, str, float | None]], running: list[tuple[str, int]]
) -> None:
    pend, deps = _jobs(specs)
    boosts = active_boosts(CTX, T)
    first = UserGpus()
    _totals(Scorer(CTX, T, 1.0, 2, first, boosts, deps, memo=True), pend)  # type: ignore[arg-type]
    second = UserGpus()  # another scheduler's table: its users got their ids in another order
    second.set("a", "zz", 0)
    for u, g in running:
        second.set("a", u, g)
    kept = Scorer(CTX, T, 1.0, 2, second, boosts, deps, memo=True)  # type: ignore[arg-type]
    fresh = Scorer(CTX, T, 1.0, 2, second, boosts, deps)  # type: ignore[arg-type]
    assert _totals(kept, pend) == _totals(fresh, pend)


def test_the_boost_kept_by_the_walk_is_not_read_by_a_scorer_without_it() -> None:
    pend, _ = _jobs([(0, 0.0, "u1", None)])
    deps: dict[str, object] = {}  # nobody waits for it: its own score is its total
    users = UserGpus()
    assert active_boosts(CTX, T) == {"user:u1": 0.4}
    walk = Scorer(CTX, T, 1.0, 2, users, active_boosts(CTX, T), deps, memo=True)  # type: ignore[arg-type]
    plain = Scorer(CTX, T, 1.0, 2, users, {}, deps)  # type: ignore[arg-type]
    assert walk.total(pend[0]) == plain.total(pend[0]) + 0.4


def test_parts_kept_across_epochs_are_made_again_for_a_new_list_of_dependants() -> None:
    # no deadlines and no boosts expiring: the parts are kept from one epoch to the next -- but
    # only for the very list of dependants they were made from
    pre = Pend(JobSpec(id="p", submit=0.0, account="a", gpus=1, work=600.0, user="u0", priority=0), 0.0, 0.0, 0.0, 0,
               None, "a")
    low = JobSpec(id="d1", submit=0.0, account="a", gpus=1, work=600.0, user="u1", priority=1, depends_on=("p",))
    high = JobSpec(id="d2", submit=0.0, account="a", gpus=1, work=600.0, user="u2", priority=5, depends_on=("p",))
    users = UserGpus()
    first = Scorer(CTX, T, 1.0, 2, users, active_boosts(CTX, T), dependants([pre.spec, low]), memo=True)  # type: ignore[arg-type]
    first.total(pre)
    deps = dependants([pre.spec, low, high])
    kept = Scorer(CTX, T + 300.0, 1.0, 2, users, active_boosts(CTX, T + 300.0), deps, memo=True)  # type: ignore[arg-type]
    fresh = Scorer(CTX, T + 300.0, 1.0, 2, users, active_boosts(CTX, T + 300.0), deps)  # type: ignore[arg-type]
    assert kept.total(pre) == fresh.total(pre) > first.total(pre)
