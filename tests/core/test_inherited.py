"""The fast walks' merged dependants (core.inherited) score every prerequisite exactly as the
reference's dependant-by-dependant reading does: in ``fixed`` (``closure``) and in ``adaptive``
and ``fifo`` (``derived``)."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Boost, Policy, PriorityWeights, WeightSet
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.inherited import DependantFactsCache
from allotment.core.jobs import JobSpec
from allotment.core.priority import BoostIndex, Scorer, active_boosts, boost_of, dependants
from allotment.core.state import Pend
from allotment.core.weights import ScoreWeights
from allotment.core.within_team_arrays import ranked_arrays
from tests.core.builders import make_config

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _ctx(boosts: tuple[Boost, ...] = ()) -> object:
    return build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(boosts=boosts)), "c1")  # type: ignore[arg-type]


@st.composite
def _graphs(draw: st.DrawFn) -> list[JobSpec]:
    """Jobs of two teams whose prerequisites are mostly earlier jobs (chains, fans, diamonds),
    sometimes later ones (cycles) or another team's; some with deadlines."""
    n = draw(st.integers(2, 24))
    specs = []
    for i in range(n):
        earlier = st.sampled_from([f"j{k}" for k in range(i)]) if i else st.nothing()
        anyone = st.sampled_from([f"j{k}" for k in range(n)])
        deps = draw(st.lists(st.one_of(earlier, earlier, earlier, anyone) if i else anyone, max_size=3, unique=True))
        specs.append(JobSpec(
            id=f"j{i}", submit=0.0, account=draw(st.sampled_from(["a", "a", "a", "b"])), gpus=1,
            work=draw(st.sampled_from([600.0, 3600.0, 20_000.0])), user=draw(st.sampled_from(["u0", "u1", "u2"])),
            priority=draw(st.integers(-2, 3)),
            deadline=draw(st.one_of(st.none(), st.none(), st.sampled_from([2000.0, 9000.0, 50_000.0]))),
            depends_on=tuple(d for d in deps if d != f"j{i}"),
        ))
    return specs


_BOOSTS = (Boost("job:j3", 0.5, T0 + dt.timedelta(seconds=3000), "t", "lead"),
           Boost("user:u1", 0.25, T0 + dt.timedelta(days=400), "t", "lead"),
           Boost("account:a", 0.125, T0 + dt.timedelta(seconds=6000), "t", "lead"))


@settings(max_examples=150, deadline=None)
@given(_graphs(), st.booleans(), st.lists(st.integers(0, 8), min_size=1, max_size=3))
def test_merged_dependants_score_every_prerequisite_as_reading_them_one_by_one(
    specs: list[JobSpec], boosted: bool, running: list[int]
) -> None:
    ctx = _ctx(_BOOSTS if boosted else ())
    waiting = dependants(specs)
    users = UserGpus()
    facts = DependantFactsCache(users)  # one for the whole run, as the scheduler keeps it
    pends = [Pend(s, 0.0, 0.0, 0.0, s.priority, None, s.account) for s in specs]
    for t in (100.0, 100.0, 4000.0, 7000.0):  # boosts expire between epochs
        for k, g in enumerate(running):
            users.set("a", f"u{k % 3}", g)
            args = (ctx, t, 1.0, 4, users, active_boosts(ctx, t), waiting)
            kept = Scorer(*args, memo=True, facts=facts)  # type: ignore[arg-type]
            ref = Scorer(*args)  # type: ignore[arg-type]
            assert [kept._inherited(p) for p in pends] == [ref._inherited(p) for p in pends]
            assert [kept.total(p) for p in pends] == [ref.total(p) for p in pends]
    w = ScoreWeights(ctx.policy.priority_weights)  # type: ignore[attr-defined]
    for root, got in waiting.items():  # each dependant with a deadline listed once, the rest merged
        boosts = active_boosts(ctx, 7000.0)  # the last epoch's: its parts are the kept ones
        c = facts.closure(root, waiting, w, boosts, BoostIndex(boosts))
        assert sorted(d.jid for d in c.dated) == sorted(s.id for s in got if s.deadline is not None)
        best: dict[tuple[int, float], float] = {}
        for s in got:
            if s.deadline is None:
                k = (users.id_of(s.account, s.user), boost_of(BoostIndex(boosts), s.id, s.user, s.account))
                best[k] = max(best.get(k, -9.0), w.declared * s.priority)
        assert {(who, boost): head for who, head, boost in c.timeless} == best


def test_a_chain_longer_than_the_recursion_limit_is_merged_once_per_job() -> None:
    n = 1500
    chain = [JobSpec(id=f"r{i:04d}", submit=0.0, account="a", gpus=1, work=60.0, user="u", priority=i % 5,
                     depends_on=(f"r{i - 1:04d}",) if i else ()) for i in range(n)]
    waiting = dependants(chain)
    ctx, users = _ctx(), UserGpus()
    facts = DependantFactsCache(users)
    head = Pend(chain[0], 0.0, 0.0, 0.0, 0, None, "a")
    kept = Scorer(ctx, 0.0, 1.0, 4, users, {}, waiting, memo=True, facts=facts)  # type: ignore[arg-type]
    assert kept._inherited(head) == Scorer(ctx, 0.0, 1.0, 4, users, {}, waiting)._inherited(head) > 0  # type: ignore[arg-type]
    c = facts.closure(chain[0].id, waiting, ScoreWeights(ctx.policy.priority_weights), {}, None)  # type: ignore[attr-defined]
    assert len(c.timeless) == 1 and not c.dated  # one user, no boost: its best declared priority
    assert len(facts._kept) == n - 1  # every job with dependants merged, each once
    assert all(len(kids) == 1 for _, kids in facts._direct.values())  # from its one direct dependant


def test_a_dependency_cycle_is_read_flat_and_still_scores_as_the_reference() -> None:
    specs = [JobSpec(id="x", submit=0.0, account="a", gpus=1, work=60.0, user="u", priority=1, depends_on=("z",)),
             JobSpec(id="y", submit=0.0, account="a", gpus=1, work=60.0, user="v", priority=3, depends_on=("x",)),
             JobSpec(id="z", submit=0.0, account="a", gpus=1, work=60.0, user="u", priority=2, depends_on=("y",))]
    waiting = dependants(specs)
    ctx, users = _ctx(), UserGpus()
    pends = [Pend(s, 0.0, 0.0, 0.0, s.priority, None, "a") for s in specs]
    kept = Scorer(ctx, 0.0, 1.0, 4, users, {}, waiting, memo=True)  # type: ignore[arg-type]
    ref = Scorer(ctx, 0.0, 1.0, 4, users, {}, waiting)  # type: ignore[arg-type]
    assert [kept._inherited(p) for p in pends] == [ref._inherited(p) for p in pends]
    w = ScoreWeights(ctx.policy.priority_weights)  # type: ignore[attr-defined]
    # each job's two others, itself left out: by two users for x and z, by one (u) for y
    assert [len(kept.facts.closure(s.id, waiting, w, {}, None).timeless) for s in specs] == [2, 1, 2]


def test_a_chains_merged_parts_are_shared_along_it_not_copied_at_each_link() -> None:
    """Along a chain of runs, each job's merged part of a user other than its successor's is the
    very object its successor holds.  Compiled, a plain ``tuple[...]`` part was unboxed and boxed again at each link: a
    new tuple and two floats per user per job, about 130 MiB at the first pass of a 90-day
    ``ai2`` run (issue 27 item 4).  (Pure Python shares them either way; this fails on a
    compiled build of the code before.)"""
    users = ("u0", "u1", "u2")
    specs = [JobSpec(id=f"j{i:03d}", submit=float(i), account="a", gpus=1, work=600.0, user=users[i % 3],
                     depends_on=(f"j{i - 1:03d}",) if i else ()) for i in range(30)]
    waiting = dependants(specs)
    facts = DependantFactsCache(UserGpus())
    w = ScoreWeights(_ctx().policy.priority_weights)  # type: ignore[attr-defined]
    first = facts.closure("j000", waiting, w, {}, None)
    assert len(first.timeless) == 3  # one part per user of the chain
    for i in range(26):
        mine = facts.closure(f"j{i:03d}", waiting, w, {}, None).timeless
        theirs = facts.closure(f"j{i + 1:03d}", waiting, w, {}, None).timeless
        own = facts.of(specs[i + 1]).who  # the successor's own part is made for this link
        others = [p for p in mine if p[0] != own]
        assert len(others) == 2
        assert all(any(p is q for q in theirs) for p in others), f"j{i:03d} copied its successor's parts"


# and one below 0 (the config refuses it, the core takes any): a negative score lends more as
# INHERIT x it than whole, so a group's shortest dependant decides too
_LOWERED = (*_BOOSTS, Boost("user:u2", -0.75, T0 + dt.timedelta(days=400), "t", "lead"))


@settings(max_examples=150, deadline=None)
@given(_graphs(), st.sampled_from(["adaptive", "fifo"]), st.booleans(), st.sampled_from([0.0, 0.05, 0.3, 1.0]),
       st.sampled_from([0.0, 1.0]), st.lists(st.integers(0, 8), min_size=1, max_size=3),
       st.lists(st.sampled_from([0.0, 500.0, 5000.0]), min_size=1, max_size=4), st.sampled_from([0, 2, 16]))
def test_merged_groups_lend_every_derived_score_as_reading_dependants_one_by_one(
    specs: list[JobSpec], mode: str, boosted: bool, short: float, declared: float, running: list[int],
    done: list[float], merge_from: int,
) -> None:
    # adaptive / fifo: a dependant lends its score whole when the prerequisite's remaining work
    # is under ``short`` x its own, else INHERIT x it; its groups (user, priority, boost) keep
    # the most and least work, so the same maximum comes out, to the bit, walk after walk
    weights = PriorityWeights(mode=mode, short_prerequisite=short,  # type: ignore[arg-type]
                              below=WeightSet(declared=declared), above=WeightSet(declared=declared))
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2,
                                    policy=Policy(priority_weights=weights, boosts=_LOWERED if boosted else ())), "c1")
    waiting = dependants(specs)
    users = UserGpus()
    facts = DependantFactsCache(users)  # one for the whole run, as the scheduler keeps it
    pends = [Pend(s, 0.0, 0.0, done[i % len(done)], s.priority, None, s.account) for i, s in enumerate(specs)]
    for t in (100.0, 100.0, 4000.0, 7000.0):  # boosts expire between epochs
        for k, g in enumerate(running):
            users.set("a", f"u{k % 3}", g)
            for load in (0.3, 2.0):
                args = (ctx, t, load, 4, users, active_boosts(ctx, t), waiting)
                merged = Scorer(*args, merged=True, facts=facts)  # type: ignore[arg-type]
                merged.merge_from = merge_from  # 0: every prerequisite's merged; 16: only long ones
                ref = Scorer(*args)  # type: ignore[arg-type]
                lenders = [(p, waiting[p.jid]) for p in pends if waiting.get(p.jid)]
                assert [repr(merged._inherited_derived(p, got)) for p, got in lenders] == [
                    repr(ref._inherited_derived(p, got)) for p, got in lenders]
                assert [repr(merged.total(p)) for p in pends] == [repr(ref.total(p)) for p in pends]
                assert [repr(k) for k in ranked_arrays(merged, pends)[0]] == [repr(k) for k in ref.ranked_by_key(pends)[0]]
    boosts = active_boosts(ctx, 7000.0)  # the last epoch's: its groups are the kept ones
    for root, got in waiting.items():  # each dependant with a deadline listed once, the rest grouped
        c = facts.derived(root, waiting, boosts, BoostIndex(boosts) if boosts else None)
        assert sorted(d.jid for d in c.dated) == sorted(s.id for s in got if s.deadline is not None)
        want: dict[tuple[int, int, float], tuple[float, float]] = {}
        for s in got:
            if s.deadline is None:
                k = (users.id_of(s.account, s.user), s.priority,
                     boost_of(BoostIndex(boosts), s.id, s.user, s.account) if boosts else 0.0)
                most, least = want.get(k, (s.work, s.work))
                want[k] = (max(most, s.work), min(least, s.work))
        assert {(g[0], g[1], g[2]): (g[3], g[4]) for g in c.groups} == want


def test_a_long_chain_lends_to_adaptive_from_one_group_made_once_per_job() -> None:
    # ``ai2``'s closed-loop streams: a job's dependants are the rest of its stream; merged, each
    # job holds one group (one user, one priority, no boost), made from its successor's
    n = 1500
    chain = [JobSpec(id=f"r{i:04d}", submit=0.0, account="a", gpus=1, work=60.0 * (1 + i % 7), user="u",
                     priority=0, depends_on=(f"r{i - 1:04d}",) if i else ()) for i in range(n)]
    waiting = dependants(chain)
    ctx = build_context(make_config({"a": 1}, nodes=2, policy=Policy(priority_weights=PriorityWeights(mode="adaptive"))),
                        "c1")
    users = UserGpus()
    facts = DependantFactsCache(users)
    pends = [Pend(s, 0.0, 0.0, 0.0, 0, None, "a") for s in chain[:50]]
    merged = Scorer(ctx, 0.0, 1.0, 4, users, {}, waiting, merged=True, facts=facts)
    ref = Scorer(ctx, 0.0, 1.0, 4, users, {}, waiting)
    assert [merged.total(p) for p in pends] == [ref.total(p) for p in pends]
    c = facts.derived(chain[0].id, waiting, {}, None)
    assert [g[3:] for g in c.groups] == [(420.0, 60.0)] and not c.dated  # the most and the least work
    assert len(facts._derived) == n - 1  # every job with dependants merged, each once


def test_a_group_lends_whole_through_its_longest_dependant_and_in_part_through_its_shortest() -> None:
    # one prerequisite, two dependants alike but for their work: the long one lends its score
    # whole, the short one INHERIT x it, which is the more when the score is below 0
    specs = [JobSpec(id="p", submit=0.0, account="a", gpus=1, work=1000.0, user="u2"),
             JobSpec(id="d1", submit=0.0, account="a", gpus=1, work=100.0, user="u2", depends_on=("p",)),
             JobSpec(id="d2", submit=0.0, account="a", gpus=1, work=100_000.0, user="u2", depends_on=("p",))]
    waiting = dependants(specs)
    ctx = build_context(make_config({"a": 1}, nodes=2, policy=Policy(
        priority_weights=PriorityWeights(mode="fifo"), boosts=(Boost("user:u2", -0.75, T0 + dt.timedelta(days=9), "t", "l"),))),
        "c1")
    users = UserGpus()
    p = Pend(specs[0], 0.0, 0.0, 0.0, 0, None, "a")
    args = (ctx, 0.0, 1.0, 4, users, active_boosts(ctx, 0.0), waiting)
    want = Scorer(*args)._inherited_derived(p, waiting["p"])  # type: ignore[arg-type]
    assert want == 0.9 * -0.75
    merged = Scorer(*args, merged=True)  # type: ignore[arg-type]
    merged.merge_from = 0  # two dependants: merged only when told
    assert merged._inherited_derived(p, waiting["p"]) == want
    pends = [p, *(Pend(s, 0.0, 0.0, 0.0, 0, None, "a") for s in specs[1:])]
    assert ranked_arrays(merged, pends)[0] == Scorer(*args).ranked_by_key(pends)[0]  # type: ignore[arg-type]


def test_kept_parts_are_read_again_when_the_dependants_change_within_an_epoch() -> None:
    """Stop 42's note: the kept parts were reused at the same time whatever the dependants.  A
    prerequisite first waited on by a low-priority job, then (same ``t``) also by an urgent one,
    must inherit the urgent one's score, as the reference reads it."""
    ctx = _ctx()
    a = JobSpec(id="j0", submit=0.0, account="a", gpus=1, work=3600.0, user="u0", priority=0)
    low = JobSpec(id="j1", submit=0.0, account="a", gpus=1, work=3600.0, user="u1", priority=-2, depends_on=("j0",))
    high = JobSpec(id="j2", submit=0.0, account="a", gpus=1, work=3600.0, user="u2", priority=3,
                   deadline=2000.0, depends_on=("j0",))
    users = UserGpus()
    facts = DependantFactsCache(users)
    p = Pend(a, 0.0, 0.0, 0.0, 0, None, "a")
    got = []
    for specs in ([a, low], [a, low, high], [a, high]):
        args = (ctx, 100.0, 1.0, 4, users, active_boosts(ctx, 100.0), dependants(specs))  # type: ignore[arg-type]
        kept = Scorer(*args, memo=True, facts=facts)  # type: ignore[arg-type]
        ref = Scorer(*args)  # type: ignore[arg-type]
        assert kept._inherited(p) == ref._inherited(p)
        assert kept.total(p) == ref.total(p)
        got.append(ref._inherited(p))
    assert got[0] < got[1] == got[2]  # the urgent dependant raises it: the case is not vacuous


def test_a_map_changed_in_place_is_read_entry_by_entry() -> None:
    """The simulator changes the dependants map in place between passes, as jobs are submitted
    and go (sim/known_dependencies.py): what the cache keeps of a job -- its merged parts, its
    direct dependants -- holds only while that job's own list is the same object.  ``d`` (declared
    9) comes to depend on ``b`` after ``a``'s parts were merged through ``b``."""
    def job(jid: str, prio: int, deps: tuple[str, ...] = ()) -> JobSpec:
        return JobSpec(id=jid, submit=0.0, account="a", gpus=1, work=60.0, user="u", priority=prio, depends_on=deps)
    first = [job("a", 0), job("b", 1, ("a",)), job("c", 2, ("b",))]
    deps = dependants(first)
    ctx, users = _ctx(), UserGpus()
    facts = DependantFactsCache(users)
    before = Scorer(ctx, 0.0, 1.0, 4, users, {}, deps, memo=True, facts=facts)._inherited(  # type: ignore[arg-type]
        Pend(first[0], 0.0, 0.0, 0.0, 0, None, "a"))
    the_map = deps
    deps.update(dependants([*first, job("d", 9, ("b",))]))  # a and b get new lists, in place
    assert deps is the_map
    head = Pend(first[0], 0.0, 0.0, 0.0, 0, None, "a")
    kept = Scorer(ctx, 0.0, 1.0, 4, users, {}, deps, memo=True, facts=facts)._inherited(head)  # type: ignore[arg-type]
    assert kept == Scorer(ctx, 0.0, 1.0, 4, users, {}, deps)._inherited(head) > before  # type: ignore[arg-type]
