"""Each within-team priority signal, boosts and dependency propagation (core.priority)."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Boost, Policy
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.inherited import DependantFacts, DependantFactsCache
from allotment.core.jobs import JobSpec
from allotment.core.priority import (
    BoostIndex,
    Scorer,
    active_boosts,
    boost_of,
    dependants,
    dependants_by_search,
    propagate,
)
from allotment.core.starvation import STARVING_S
from allotment.core.state import Pend
from tests.core.builders import make_config

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _ctx(**kw: object) -> object:
    return build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(**kw)), "c1")  # type: ignore[arg-type]


def _pend(jid: str = "j", *, declared: int = 0, eligible: float = 0.0, gpus: int = 1, user: str = "u",
          deadline: float | None = None, work: float = 3600.0) -> Pend:
    spec = JobSpec(id=jid, submit=0.0, account="a", gpus=gpus, work=work, user=user, deadline=deadline, priority=declared)
    return Pend(spec, eligible, eligible, 0.0, declared, None, "a")


def _scorer(t: float = 1000.0, *, load: float = 1.0, max_free: int = 8, users: dict[tuple[str, str], int] | None = None,
            **kw: object) -> Scorer:
    ctx = _ctx(**kw)
    return Scorer(ctx, t, load, max_free, UserGpus.of(users or {}), active_boosts(ctx, t))  # type: ignore[arg-type]


def test_declared_priority_counts_with_its_weight() -> None:
    s = _scorer()
    assert s.parts(_pend(declared=3)).declared == 3.0
    assert s.total(_pend("hi", declared=3)) > s.total(_pend("lo", declared=0))


def test_age_counts_up_to_its_cap_and_no_further() -> None:
    s = _scorer(t=200_000.0)
    assert s.parts(_pend(eligible=200_000.0 - 43_200)).age == 0.5
    assert s.parts(_pend(eligible=0.0)).age == 1.0  # capped at age_cap (1 day)


def test_deadline_urgency_rises_as_slack_runs_out() -> None:
    s = _scorer(t=0.0)
    none = s.parts(_pend()).deadline
    far = s.parts(_pend(deadline=3600.0 + 36_000.0)).deadline
    near = s.parts(_pend(deadline=3600.0 + 60.0)).deadline
    late = s.parts(_pend(deadline=100.0)).deadline
    assert none == 0.0 < far < near < late == 1.0


def test_a_user_with_fewer_gpus_running_goes_first() -> None:
    s = _scorer(users={("a", "busy"): 16})
    assert s.parts(_pend(user="idle")).fairness > s.parts(_pend(user="busy")).fairness


def test_fit_counts_only_for_jobs_that_fit_and_weighs_more_under_load() -> None:
    assert _scorer(max_free=4).parts(_pend(gpus=8)).fit == 0.0
    low, high = _scorer(load=1.0).parts(_pend()).fit, _scorer(load=2.5).parts(_pend()).fit
    assert 0 < low < high


def test_a_starving_job_counts_as_fitting_so_age_eventually_beats_fit_inside_a_team() -> None:
    # load 2.5: fit weighs 1.5, more than capped age (1.0).  A whole-node job that waited just
    # under STARVING_S scores below a fitting job submitted now; from STARVING_S on, above it.
    t = 100_000.0
    s = _scorer(t=t, load=2.5, max_free=4)
    small = _pend("small", eligible=t, gpus=4)
    assert s.total(_pend("big", eligible=t - STARVING_S + 1.0, gpus=8)) < s.total(small)
    starving = _pend("big", eligible=t - STARVING_S, gpus=8)
    assert s.parts(starving).fit == _scorer(t=t, load=3.0).parts(small).fit > s.parts(small).fit > 0.0  # full weight
    assert s.total(starving) > s.total(small)
    assert s.best([small, starving], 1) == [starving]


def test_boosts_match_job_user_and_account_and_expire() -> None:
    later = T0 + dt.timedelta(hours=1)
    boosts = (Boost("job:j", 5.0, later, "r", "@x"), Boost("user:u", 1.0, later, "r", "@x"),
              Boost("account:a", 0.5, later, "r", "@x"), Boost("user:other", 9.0, later, "r", "@x"))
    assert _scorer(t=10.0, boosts=boosts).parts(_pend()).boost == 6.5
    assert _scorer(t=3600.0, boosts=boosts).parts(_pend()).boost == 0.0  # expired at 1 h
    assert boost_of({}, "j", "u", "a") == 0.0


def test_a_prerequisite_inherits_the_priority_of_the_jobs_that_wait_for_it() -> None:
    base = JobSpec(id="base", submit=0.0, account="a", gpus=1, work=1.0, priority=0)
    mid = JobSpec(id="mid", submit=0.0, account="a", gpus=1, work=1.0, priority=1, depends_on=("base",))
    top = JobSpec(id="top", submit=0.0, account="a", gpus=1, work=1.0, priority=7, depends_on=("mid",))
    assert propagate([base, mid, top]) == {"base": 7, "mid": 7, "top": 7}


def test_a_negative_score_without_dependants_is_what_explain_shows_and_what_the_pass_ranks_by() -> None:
    s = _scorer(t=0.0, max_free=0)  # nothing fits: no fit bonus to lift the score
    low = _pend("low", declared=-5)
    assert s.total(low) < 0
    assert s.parts(low).total == s.total(low)
    assert s.parts(low).inherited == 0.0  # nobody waits for it: nothing raises it to 0


def test_a_prerequisite_scores_the_better_of_its_own_and_its_inherited_score_in_parts_and_total() -> None:
    ctx = _ctx()
    pre = _pend("pre", declared=-5)
    dep = JobSpec(id="dep", submit=0.0, account="a", gpus=1, work=1.0, priority=2, depends_on=("pre",))
    s = Scorer(ctx, 0.0, 1.0, 0, UserGpus(), {}, dependants([pre.spec, dep]))  # type: ignore[arg-type]
    got = s.parts(pre)
    assert got.total == s.total(pre) == got.inherited > got.declared + got.deadline + got.age + got.fairness


def test_ties_break_by_eligibility_then_job_id() -> None:
    s = _scorer(t=0.0)
    ranked = s.rank([_pend("b", eligible=0.0), _pend("a", eligible=0.0)])
    assert [p.jid for p in ranked] == ["a", "b"]


def test_the_memoised_score_is_the_recomputed_one_bit_for_bit_as_running_and_free_gpus_change() -> None:
    ctx = _ctx(boosts=(Boost("user:u", 0.37, T0 + dt.timedelta(days=400), "test", "lead"),))
    jobs = [_pend(f"j{i}", declared=i % 3, eligible=17.3 * i, gpus=1 + i % 5, deadline=5000.0 + 97 * i if i % 2 else None)
            for i in range(12)]
    users = UserGpus()
    for t in (1000.0, 1000.0, 4600.0):
        for step in range(4):
            users.set("a", "u", 3 * step)
            args = (ctx, t, 1.0 + step / 3, 8 - step, users, active_boosts(ctx, t))  # type: ignore[arg-type]
            memo, ref = Scorer(*args, memo=True), Scorer(*args)  # type: ignore[arg-type]
            assert [memo.total(p) for p in jobs] == [ref.total(p) for p in jobs] == [ref.parts(p).total for p in jobs]
            assert all(p.static is not None and p.static.t == t for p in jobs)  # the memo was used


def test_the_memoised_inherited_score_is_the_recomputed_one_bit_for_bit() -> None:
    ctx = _ctx(boosts=(Boost("job:d3", 0.25, T0 + dt.timedelta(days=400), "test", "lead"),))
    pre = [_pend(f"p{i}", declared=i % 2, gpus=1 + i, work=600.0 * (i + 1)) for i in range(3)]
    deps = [JobSpec(id=f"d{i}", submit=0.0, account="a", gpus=1, work=900.0, user=f"u{i % 2}", priority=i % 3,
                    deadline=4000.0 + 300 * i if i % 2 else None, depends_on=(f"p{i % 3}",)) for i in range(7)]
    waiting = dependants([p.spec for p in pre] + deps)
    users = UserGpus()
    for t in (100.0, 100.0, 2000.0):
        for step in range(3):
            users.set("a", "u1", 4 * step)
            args = (ctx, t, 1.0, 4 - step, users, active_boosts(ctx, t), waiting)  # type: ignore[arg-type]
            memo, ref = Scorer(*args, memo=True), Scorer(*args)  # type: ignore[arg-type]
            assert [memo.total(p) for p in pre] == [ref.total(p) for p in pre]
            assert [memo._inherited(p) for p in pre] == [ref._inherited(p) for p in pre] != [0.0] * 3


def test_the_kept_dependant_facts_score_as_the_specs_read_afresh_and_never_alias_another_spec() -> None:
    ctx = _ctx(boosts=(Boost("user:u1", 0.5, T0 + dt.timedelta(days=400), "test", "lead"),))
    pre = [_pend(f"p{i}", gpus=1 + i, work=600.0) for i in range(2)]
    deps = [JobSpec(id=f"d{i}", submit=0.0, account="a", gpus=1, work=900.0, user=f"u{i % 3}", priority=i,
                    deadline=5000.0 if i == 2 else None, depends_on=(f"p{i % 2}",)) for i in range(5)]
    waiting, users = dependants([p.spec for p in pre] + deps), UserGpus()
    facts = DependantFactsCache(users)
    stranger = JobSpec(id="x", submit=0.0, account="b", gpus=1, work=1.0, user="v", priority=9)
    facts.by_id[id(deps[0])] = DependantFacts(stranger, users.id_of("b", "v"))  # an address reused by another spec
    for t in (100.0, 2000.0):
        args = (ctx, t, 1.0, 4, users, active_boosts(ctx, t), waiting)
        kept = Scorer(*args, memo=True, facts=facts)  # type: ignore[arg-type]
        fresh = Scorer(*args)  # type: ignore[arg-type]
        assert [kept._inherited(p) for p in pre] == [fresh._inherited(p) for p in pre] != [0.0, 0.0]
    assert facts.of(deps[0]).spec is deps[0] and facts.of(deps[0]).priority == 0  # rebuilt, not the stranger's
    assert facts.of(deps[1]) is facts.of(deps[1])  # copied once
    other = Scorer(ctx, 100.0, 1.0, 4, UserGpus(), {}, waiting, memo=True, facts=facts)  # type: ignore[arg-type]
    assert other.facts is not facts and other.facts.users is other.user_gpus  # another table's facts are never read


def test_deadline_free_dependants_parts_are_kept_across_epochs_until_the_active_boosts_change() -> None:
    ctx = _ctx(boosts=(Boost("job:d1", 0.5, T0 + dt.timedelta(seconds=3000), "test", "lead"),))
    pre = [_pend(f"p{i}", gpus=1 + i) for i in range(2)]
    deps = [JobSpec(id=f"d{i}", submit=0.0, account="a", gpus=1, work=900.0, user=f"u{i % 2}", priority=2 + i,
                    depends_on=(f"p{i % 2}",)) for i in range(4)]
    waiting = dependants([p.spec for p in pre] + deps)
    made_at = []
    users = UserGpus()
    for t in (100.0, 2000.0, 4000.0, 5000.0):  # the boost on d1 (waiting for p1) expires at 3000 s
        args = (ctx, t, 1.0, 4, users, active_boosts(ctx, t), waiting)  # type: ignore[arg-type]
        memo, ref = Scorer(*args, memo=True), Scorer(*args)  # type: ignore[arg-type]
        assert [memo._inherited(p) for p in pre] == [ref._inherited(p) for p in pre]
        made_at.append(pre[1].inherit.t if pre[1].inherit else None)
    assert made_at == [100.0, 100.0, 4000.0, 4000.0]  # reused while the boosts were equal, not after


def test_kept_parts_take_the_passs_equal_boosts_so_the_next_check_is_by_identity() -> None:
    ctx = _ctx(boosts=(Boost("job:d0", 0.5, T0 + dt.timedelta(days=400), "test", "lead"),))
    pre = _pend("p0")
    dep = JobSpec(id="d0", submit=0.0, account="a", gpus=1, work=900.0, priority=2, depends_on=("p0",))
    waiting, users = dependants([pre.spec, dep]), UserGpus()
    first = Scorer(ctx, 100.0, 1.0, 4, users, active_boosts(ctx, 100.0), waiting, memo=True)  # type: ignore[arg-type]
    kept = first._inherited(pre)
    later = active_boosts(ctx, 200.0)  # equal, not the same mapping
    s = Scorer(ctx, 200.0, 1.0, 4, users, later, waiting, memo=True)  # type: ignore[arg-type]
    assert s._inherited(pre) == kept == Scorer(ctx, 200.0, 1.0, 4, users, later, waiting)._inherited(pre)  # type: ignore[arg-type]
    assert pre.inherit is not None and pre.inherit.t == 100.0 and pre.inherit.boosts is later

_names = st.sampled_from(["j", "u", "a", "x:y", "j:", ""])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.builds(lambda k, n: f"{k}:{n}", st.sampled_from(["job", "user", "account", "team"]), _names),
                       st.floats(-5, 5)), _names, _names, _names)
def test_the_boost_index_matches_exactly_the_job_user_and_account_targets(
    boosts: dict[str, float], job: str, user: str, account: str
) -> None:
    want = boosts.get("job:" + job, 0.0) + boosts.get("user:" + user, 0.0) + boosts.get("account:" + account, 0.0)
    assert boost_of(BoostIndex(boosts), job, user, account) == want
    assert boost_of(boosts, job, user, account) == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdefghij"), st.sampled_from(["t1", "t2"]),
                          st.lists(st.sampled_from("abcdefghij"), max_size=3)), max_size=10, unique_by=lambda j: j[0]))
def test_dependants_are_every_same_team_job_that_waits_on_a_job_directly_or_not(
    jobs: list[tuple[str, str, list[str]]]
) -> None:
    """``dependants`` (joined along a post-order, chains built front to back) against the plain
    search from each job: any graph, cycles (the search's fallback), other teams' edges and ids
    in any order included."""
    specs = [JobSpec(id=i, submit=0.0, account=a, gpus=1, work=60.0, user="u", depends_on=tuple(d)) for i, a, d in jobs]
    assert dependants(specs) == dependants_by_search(specs)


def test_a_long_chain_lists_every_later_link_in_id_order() -> None:
    chain = [JobSpec(id=f"r{k:03d}", submit=0.0, account="a", gpus=1, work=60.0, user="u",
                     depends_on=(f"r{k - 1:03d}",) if k else ()) for k in range(50)]
    got = dependants(chain[::-1])
    assert [s.id for s in got["r000"]] == [f"r{k:03d}" for k in range(1, 50)]
    assert got == dependants_by_search(chain)
