"""The fast within-team order (issue 28, item 5) decides exactly as the plain reference:
``core.within_team_arrays`` ranks a queue with the keys ``Scorer.ranked_by_key`` gives, to the
bit, and ``priority.dependency_pass`` / ``propagate`` give what their definitions do
(``dependants_by_search``, ``propagate_by_relaxing``), cycles included."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Boost, Policy, PriorityWeights
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.inherited import DependantFactsCache
from allotment.core.jobs import JobSpec
from allotment.core.priority import (
    Scorer,
    active_boosts,
    dependants,
    dependants_by_search,
    dependency_pass,
    propagate,
    propagate_by_relaxing,
)
from allotment.core.state import Pend
from allotment.core.within_team_arrays import ARRAYS_FROM, ranked_arrays
from tests.core.builders import make_config

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
_BOOSTS = (Boost("job:j3", 0.5, T0 + dt.timedelta(seconds=3000), "t", "lead"),
           Boost("user:u1", 0.25, T0 + dt.timedelta(days=400), "t", "lead"),
           Boost("account:a", 0.125, T0 + dt.timedelta(seconds=6000), "t", "lead"))


@st.composite
def _graphs(draw: st.DrawFn) -> list[JobSpec]:
    """Jobs of two teams whose prerequisites are mostly earlier jobs (chains, fans, diamonds),
    sometimes any job (cycles, a job waiting on itself) or another team's; some with deadlines,
    equal submission times (ties broken by id); times with fractions, so that a sum grouped
    otherwise rounds otherwise."""
    n = draw(st.integers(2, 30))
    specs = []
    for i in range(n):
        earlier = st.sampled_from([f"j{k}" for k in range(i)]) if i else st.nothing()
        anyone = st.sampled_from([f"j{k}" for k in range(n)])
        deps = draw(st.lists(st.one_of(earlier, earlier, earlier, anyone, st.just(f"j{i}")) if i else anyone, max_size=3,
                             unique=True))
        specs.append(JobSpec(
            id=f"j{i}", submit=draw(st.sampled_from([0.0, 0.0, 50.3, 3000.7])),
            account=draw(st.sampled_from(["a", "a", "a", "b"])), gpus=draw(st.sampled_from([1, 2, 8])),
            work=draw(st.sampled_from([100.3, 600.0, 3600.9, 20_000.1])), user=draw(st.sampled_from(["u0", "u1", "u2"])),
            priority=draw(st.sampled_from([-2, 0, 0, 1, 3, 2**31 - 1, -(2**31)])),
            deadline=draw(st.one_of(st.none(), st.none(), st.sampled_from([100.0, 2000.3, 9000.7, 50_000.1]))),
            depends_on=tuple(deps),
        ))
    return specs


@settings(max_examples=300, deadline=None)
@given(_graphs(), st.sampled_from(["fixed", "adaptive", "fifo"]), st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from([0.0, 100.7, 4000.3, 7000.1]), st.sampled_from([0.3, 1.0, 1.4, 2.5]), st.sampled_from([0, 2, 8]),
       st.lists(st.integers(0, 16), min_size=1, max_size=4), st.data())
def test_arrays_rank_a_queue_with_the_reference_keys_to_the_bit(
    specs: list[JobSpec], mode: str, dependencies: bool, boosted: bool, memo: bool, t: float, load: float,
    max_free: int, running: list[int], data: st.DataObject,
) -> None:
    weights = PriorityWeights(mode=mode, dependencies=dependencies,  # type: ignore[arg-type]
                              deadline=data.draw(st.sampled_from([1.0, 3.7])), declared=data.draw(st.sampled_from([1.0, 0.3])),
                              age_cap_s=data.draw(st.sampled_from([86400, 1000])))
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2,
                                    policy=Policy(priority_weights=weights, boosts=_BOOSTS if boosted else ())), "c1")
    users = UserGpus()
    for k, g in enumerate(running):
        users.set("a" if k % 2 else "b", f"u{k % 3}", g)
    # as the scheduler queues them (propagated), or as any caller may: each its own
    declared = propagate(specs) if data.draw(st.booleans()) else {s.id: s.priority for s in specs}
    pends = []
    for s in specs:
        p = Pend(s, s.submit, s.submit, data.draw(st.sampled_from([0.0, 0.0, 500.5, 30_000.3])), declared[s.id], None,
                 s.account)
        if data.draw(st.booleans()):  # queued by the scheduler (its id set), or made by explain (by name)
            p.uid = users.id_of(s.account, s.user)
        pends.append(p)
    deps = dependants(specs)
    facts = DependantFactsCache(users)
    args = (ctx, t, load, max_free, users, active_boosts(ctx, t), deps)
    for _ in range(2):  # a memo scorer's second pass reads its kept parts
        ref = Scorer(*args, memo=memo, facts=facts)  # type: ignore[arg-type]
        want_keys, want = ref.ranked_by_key(pends)
        got_keys, got = ranked_arrays(Scorer(*args, memo=memo, facts=facts), pends)  # type: ignore[arg-type]
        assert [repr(k) for k in got_keys] == [repr(k) for k in want_keys]  # repr: -0.0 is not 0.0
        assert [p.jid for p in got] == [p.jid for p in want]


def test_a_long_queue_is_ranked_over_arrays_and_a_short_one_by_key() -> None:
    """``Scorer.ranked`` takes the array path from ``ARRAYS_FROM`` jobs on (same order either way)."""
    ctx = build_context(make_config({"a": 1}, nodes=2), "c1")
    specs = [JobSpec(f"j{i:03d}", float(i % 7), "a", 1 + i % 3, 600.0, user=f"u{i % 5}", priority=i % 4)
             for i in range(ARRAYS_FROM + 5)]
    pends = [Pend(s, s.submit, s.submit, 0.0, s.priority, None, s.account) for s in specs]
    sc = Scorer(ctx, 10.0, 1.0, 2, UserGpus(), {}, {})  # type: ignore[arg-type]
    for queue in (pends, pends[:ARRAYS_FROM - 1]):
        keys, jobs = sc.ranked(queue)
        assert (keys, [p.jid for p in jobs]) == (lambda r: (r[0], [p.jid for p in r[1]]))(sc.ranked_by_key(queue))


@settings(max_examples=300, deadline=None)
@given(_graphs())
def test_the_dependency_pass_gives_what_its_definitions_do(specs: list[JobSpec]) -> None:
    got = dependency_pass(specs)
    assert got.dependants == dependants_by_search(specs) == dependants(specs)
    assert got.declared == propagate_by_relaxing(specs) == propagate(specs)


def test_arrays_are_used_only_where_the_core_runs_interpreted() -> None:
    """Under mypyc the reference's loop ranks faster than the arrays (docs/benchmarks.md), so
    ``Scorer.ranked`` takes them only when ``core.priority`` is interpreted."""
    import allotment.core.priority as priority
    from allotment.core.within_team_arrays import arrays_pay

    assert arrays_pay() == str(priority.__file__).endswith(".py")
