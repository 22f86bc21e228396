"""The dense-id layouts (core.ids) against what they replace: names as keys."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Boost, Policy
from allotment.core.boosts import BoostIndex, BoostsAt, active_boosts, boost_of
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.jobs import JobSpec
from allotment.core.placement import NodePool
from allotment.core.priority import Scorer, dependants
from allotment.core.queues import QueueSet
from allotment.core.snapshot import NodeState
from allotment.core.state import Pend
from tests.core.builders import make_config

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
CTX = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy()), "c1")


def _pend(jid: str, user: str, *, declared: int = 0, eligible: float = 0.0, account: str = "a") -> Pend:
    spec = JobSpec(id=jid, submit=0.0, account=account, gpus=1, work=600.0, user=user, priority=declared)
    return Pend(spec, eligible, eligible, 0.0, declared, None, account)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["u", "v", "w"])), st.integers(0, 64)))
def test_a_job_scores_the_same_by_its_users_id_as_by_name(running: dict[tuple[str, str], int]) -> None:
    users = UserGpus.of(running)
    jobs = [_pend(f"j{i}", u, account=a) for i, (a, u) in enumerate([("a", "u"), ("a", "v"), ("b", "u"), ("b", "w")])]
    by_name = [Scorer(CTX, 0.0, 1.0, 8, users, {}).total(p) for p in jobs]  # no ids yet: looked up by name
    for p in jobs:
        p.uid = users.id_of(p.account, p.user)
    assert [Scorer(CTX, 0.0, 1.0, 8, users, {}).total(p) for p in jobs] == by_name
    assert all(users.running(a, u) == g for (a, u), g in running.items())


def test_a_dependants_kept_parts_are_not_read_against_another_user_table() -> None:
    # the parts hold user ids: ids of one table index nothing meaningful in another
    pre = _pend("pre", "u")
    dep = JobSpec(id="dep", submit=0.0, account="a", gpus=1, work=600.0, user="v", priority=3, depends_on=("pre",))
    deps = dependants([pre.spec, dep])
    one = UserGpus()
    one.id_of("a", "x")  # so that ("a", "v") has another id in ``one`` than in ``other``
    one.set("a", "v", 0)
    other = UserGpus.of({("a", "v"): 64})
    assert Scorer(CTX, 0.0, 1.0, 0, one, {}, deps, memo=True)._inherited(pre) != 0.0
    got = Scorer(CTX, 0.0, 1.0, 0, other, {}, deps, memo=True)._inherited(pre)
    assert got == Scorer(CTX, 0.0, 1.0, 0, other, {}, deps)._inherited(pre)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 9), st.integers(-2, 2)), max_size=30))
def test_a_queue_keeps_its_jobs_in_the_order_of_their_keys(steps: list[tuple[bool, int, int]]) -> None:
    qs = QueueSet()
    queued: dict[str, Pend] = {}
    for add, k, declared in steps:
        jid = f"j{k}"
        if add and jid not in queued:
            queued[jid] = p = _pend(jid, "u", declared=declared, eligible=float(k % 3))
            p.key = (-float(declared), p.eligible, jid)
            qs.add(p)
        elif not add and jid in queued:
            qs.remove(queued.pop(jid))
    q = qs.queue("a")
    assert q.keys == sorted(p.key for p in queued.values())
    assert [p.key for p in q.jobs] == q.keys
    assert q.account == "a" and not q.free and qs.queue("a#unallocated").free


def test_the_kept_boosts_are_the_active_ones_of_the_epoch_asked() -> None:
    ctx = build_context(make_config({"a": 1}, nodes=1, policy=Policy(boosts=(
        Boost("job:j", 0.5, T0 + dt.timedelta(seconds=3000), "t", "lead"),
        Boost("user:u", 0.25, T0 + dt.timedelta(days=9), "t", "lead"),
    ))), "c1", epoch=T0)
    kept = BoostsAt(ctx)
    seen = []
    for t in (0.0, 0.0, 2999.0, 3000.0, 3000.0):
        got = kept.at(t)
        assert got == active_boosts(ctx, t)
        index = kept.index(got)
        assert index is not None and boost_of(index, "j", "u", "a") == boost_of(got, "j", "u", "a")
        seen.append(got)
    assert seen[0] is seen[1] and seen[3] is seen[4] and seen[2] is not seen[3]
    assert kept.index({"job:j": 0.5}) is None  # not the kept mapping: the scorer indexes it itself
    assert isinstance(BoostIndex(seen[3]), BoostIndex)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([4, 8]), st.sampled_from([None, "h100"]), st.booleans()), min_size=1,
                max_size=6), st.sampled_from([None, "h100", "a100"]))
def test_the_hosts_by_shape_are_the_healthy_nodes_big_enough(nodes: list[tuple[int, str | None, bool]],
                                                             gpu_type: str | None) -> None:
    pool = NodePool(tuple(NodeState(f"n{i}", g, h, t) for i, (g, t, h) in enumerate(nodes)))

    def check() -> None:
        for _ in range(2):  # computed, then cached (every ``per``, below 0 and above the largest node too)
            for per in range(-1, 11):
                want = [i for i in range(len(nodes)) if pool.healthy[i] and pool.total[i] >= per
                        and (gpu_type is None or pool.gpu_type[i] == gpu_type)]
                assert pool.hosts(per, gpu_type) == want
                assert pool.host_flags(per, gpu_type) == [i in want for i in range(len(nodes))]

    check()
    pool.set_health(0, not pool.healthy[0])  # the caches go with a health change
    check()
