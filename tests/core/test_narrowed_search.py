"""The fast walk's one-node search (``victims._options``'s ``narrow``: once the best option so
far needs no victim worse than unallocated work, only unallocated jobs are classified) against
the plain search: on any state, ``_pick_nodes`` on the fast walk's view (memo set) picks the
same victims, in the same order, with the same chosen keys, and a failure reads the same
``spared``, as on the reference's (memo None).  The states mix one-node jobs and two-node gangs
of three accounts, allocated or not, resumable or not, protected or not, of several declared
priorities, some that yield to a reservation; searches of every kind, with every form of
``spare_gangs`` and with non-resumable work kept to completion or not, on every node and on a
few in any order.  The named cases fail if ``narrow`` loses its class test (tried: every one
but the last) or narrows a gang's search (tried: the property)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from allotment.core.decide import build_scheduler
from allotment.core.jobs import JobSpec
from allotment.core.preemption import victims
from allotment.core.preemption.view import VictimView
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState, Snapshot
from allotment.core.walk import FAST
from tests.core.builders import make_config

N_NODES = 6
CTX = build_context(make_config({"a": 1, "b": 1, "c": 2}, nodes=N_NODES), "c1")
NODES = tuple(NodeState(f"n{i}", 8) for i in range(N_NODES))
USAGE = {"a": 0.0, "b": 400.0, "c": 150.0}  # b and c served more than a: donors when over what they are owed
T0 = 100_000.0

# a running job: (account, GPUs per node, first node, nodes, allocated, declared priority,
# protected for, resumable, started this long before T0, yields to a reservation)
Job = tuple[str, int, int, int, bool, int, float, bool, float, bool]
job = st.tuples(st.sampled_from("abc"), st.sampled_from([1, 2, 3, 4, 4, 8]), st.integers(0, N_NODES - 1),
                st.sampled_from([1, 1, 1, 2]), st.sampled_from([True, True, False]), st.integers(0, 2),
                st.sampled_from([-1.0, -1.0, 1e9]), st.booleans(), st.sampled_from([10.0, 500.0, 2000.0, 2000.0]),
                st.sampled_from([False, False, True]))
# a search: (GPUs per node, nodes, declared priority, account, kind, debug)
Search = tuple[int, int, int, str, str, bool]
search = st.tuples(st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 1, 1, 2, 3]), st.integers(0, 2),
                   st.sampled_from("abc"), st.sampled_from(("full", "full", "reserve", "unallocated")), st.booleans())


def _state(running: Sequence[Job], searches: Sequence[Search]) -> Scheduler:
    s = build_scheduler(Snapshot(NODES, ()), CTX, T0, frozenset(), walk=FAST)
    for k, (account, per, first, nodes, allocated, declared, protect, resumable, ago, yields) in enumerate(running):
        idx = [(first + m) % N_NODES for m in range(nodes)]
        if any(s.state.pool.free[i] < per for i in idx):
            continue
        spec = JobSpec(id=f"r{k:02d}", submit=0.0, account=account, gpus=per * nodes, work=1e6, user="u",
                       min_runtime=600.0 if allocated else 0.0, priority=declared, resumable=resumable,
                       checkpoint_interval=300.0 if resumable else None, gpus_per_node=per if nodes > 1 else None)
        s.state.add_running(spec, T0 - ago - k, tuple((s.state.pool.names[i], per) for i in idx), allocated=allocated,
                            protected_until=T0 + protect if allocated else T0, yields=yields and allocated)
    s.state.expire_protections(T0)
    for k, (per, nodes, declared, account, _, _) in enumerate(searches):
        s.state.add_pending(JobSpec(id=f"p{k}", submit=0.0, account=account, gpus=per * nodes, work=900.0, user="u",
                                    min_runtime=600.0, priority=declared, gpus_per_node=per if nodes > 1 else None),
                            0.0, 0.0)
    return s


def _views(s: Scheduler, spare: int, keep: bool) -> tuple[VictimView, VictimView]:
    """The fast walk's view (with a memo) and the reference's (without), alike otherwise."""
    pi = s.inputs(T0, USAGE)
    v = s.starting.victim_view(pi)
    assert v.memo is not None
    args = (v.pool, v.running, v.acct, keep, v.hysteresis, v.reclaims, v.t)
    return (VictimView(*args, {}, v.debug_threshold_s, spare), VictimView(*args, None, v.debug_threshold_s, spare))


def _picks(s: Scheduler, k: int, search: Search, spare: int, keep: bool, hosts: list[int] | None = None) -> list[object]:
    """What ``_pick_nodes`` answers for search ``k`` on each view: (victims, chosen keys,
    spared if it found none)."""
    _, n, _, _, kind, debug = search
    p = s.state.pending[f"p{k}"]
    pi = s.inputs(T0, USAGE)
    out: list[object] = []
    for v in _views(s, spare, keep):
        t = victims.Terms(v, p, pi.owed, pi.measure, True, kind == "unallocated", kind == "reserve")
        end = T0 + 900.0 if debug else None
        cands = victims._Classifier(v, p, t.own, t.donors, pi.measure.get(p.account, 1e18), t.reserve,
                                    end if t.own else None)
        chosen: list[tuple[int, int, float, int]] = []
        got = victims._pick_nodes(v, p, n, p.per, cands, list(range(N_NODES)) if hosts is None else hosts, chosen)
        out.append((got, chosen, cands.spared if not got else None))
    return out


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(job, min_size=3, max_size=18), st.lists(search, min_size=1, max_size=4),
       st.sampled_from([0, 1, 2, 3]), st.booleans())
def test_the_narrowed_choice_is_the_plain_one(running: list[Job], searches: list[Search], spare: int, keep: bool) -> None:
    s = _state(running, searches)
    for k, sr in enumerate(searches):
        fast, ref = _picks(s, k, sr, spare, keep)
        assert fast == ref, (k, sr, fast, ref)
        fast, ref = _picks(s, k, sr, spare, keep, [5, 1, 3])  # any hosts, in any order
        assert fast == ref, (k, sr, fast, ref)


def _one(running: list[Job], sr: Search) -> list[str]:
    """The victims both views pick on nodes 0 and 1 (the others: free, a search's bound leaves them out)."""
    s = _state(running, [sr])
    fast, ref = _picks(s, 0, sr, 0, False, [0, 1])
    assert fast == ref, (fast, ref)
    got = fast[0]
    assert isinstance(got, list) and got, "not vacuous: the search finds victims"
    return got


def test_unallocated_work_on_a_later_node_beats_own_work_on_an_earlier_one() -> None:
    """Node 0 holds a's own priority-0 job, node 1 unallocated work: the unallocated job wins."""
    running: list[Job] = [("a", 8, 0, 1, True, 0, -1.0, True, 10.0, False),
                          ("b", 8, 1, 1, False, 0, -1.0, False, 2000.0, False)]
    assert _one(running, (8, 1, 1, "a", "full", False)) == ["r01"]


def test_the_same_class_on_a_later_node_with_less_lost_work_wins() -> None:
    """Node 0's option needs b's reclaim victim (class 3, 2,000 s lost); node 1 frees the same
    class with c's job started 10 s ago: it is chosen."""
    running: list[Job] = [("a", 4, 0, 1, True, 1, -1.0, False, 10.0, False),
                          ("b", 4, 0, 1, True, 0, -1.0, False, 2000.0, False),
                          ("c", 4, 1, 1, True, 0, -1.0, False, 10.0, False),
                          ("a", 4, 1, 1, True, 1, 1e9, False, 10.0, False),
                          ("b", 8, 2, 1, True, 0, 1e9, False, 10.0, False),
                          ("c", 8, 3, 1, True, 0, 1e9, False, 10.0, False),
                          ("b", 2, 4, 1, True, 0, 1e9, False, 10.0, False),
                          ("c", 6, 4, 1, True, 0, 1e9, False, 10.0, False),
                          ("c", 8, 5, 1, True, 0, 1e9, False, 10.0, False)]  # b runs 14 (owed 12), c 26 (24), a 8 (12)
    sr: Search = (4, 1, 1, "a", "full", False)
    assert _one(running, sr) == ["r02"]


def test_own_lower_priority_work_is_found_when_no_unallocated_work_would_do() -> None:
    """Node 0's unallocated job is too small and node 1 holds a's lower-priority work: the best
    needs class 2, so every takeable job is classified (narrowing to unallocated jobs applies
    only once an option needs nothing worse)."""
    running: list[Job] = [("b", 2, 0, 1, False, 0, -1.0, False, 10.0, False),
                          ("a", 6, 0, 1, True, 2, 1e9, False, 10.0, False),
                          ("a", 8, 1, 1, True, 0, -1.0, False, 10.0, False)]
    assert _one(running, (8, 1, 1, "a", "full", False)) == ["r02"]


def test_unallocated_work_found_first_still_loses_to_cheaper_unallocated_work() -> None:
    """Two nodes each freed by unallocated work: the later one's is cheaper (started later), and
    narrowed classification still sees it."""
    running: list[Job] = [("b", 8, 0, 1, False, 0, -1.0, False, 2000.0, False),
                          ("c", 8, 1, 1, False, 0, -1.0, False, 10.0, False)]
    assert _one(running, (8, 1, 1, "a", "full", False)) == ["r01"]


def test_a_job_that_yields_is_found_before_own_work_on_an_earlier_node() -> None:
    """A search that may take jobs yielding to a reservation: node 1's yielding job of c
    (class 1) wins over node 0's own lower-priority work (class 2)."""
    running: list[Job] = [("a", 8, 0, 1, True, 0, -1.0, True, 10.0, False),
                          ("c", 8, 1, 1, True, 0, -1.0, False, 2000.0, True)]
    assert _one(running, (8, 1, 1, "a", "reserve", False)) == ["r01"]
