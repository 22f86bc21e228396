"""The fast walk's merged dependants (core.inherited) score every prerequisite exactly as the
reference's dependant-by-dependant reading does."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Boost, Policy
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.inherited import DependantFactsCache
from allotment.core.jobs import JobSpec
from allotment.core.priority import BoostIndex, Scorer, active_boosts, boost_of, dependants
from allotment.core.state import Pend
from allotment.core.weights import ScoreWeights
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
    assert all(len(d) == 1 for d in facts._direct.values())  # from its one direct dependant


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
