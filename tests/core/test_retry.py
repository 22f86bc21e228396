"""The failed-search memo (``core.preemption.retry``, ``victims.still_fails``) against searching
every time: after any sequence of stops, starts, ends of protections and health changes, the
fast walk's ``victims_for`` (memo and per-node recheck) answers exactly what the reference's
(no memo) does.  The property runs both on the same state; the named cases below pin each thing
a lasting failure depends on -- the nodes that grew, whose work is takeable there (protection
ends, the requester's own team), the donors, the reservation's nodes -- with the memo made to
skip the search once, so that dropping that dependency makes them fail."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from allotment.core.decide import build_scheduler
from allotment.core.jobs import JobSpec
from allotment.core.placement import NodeFilter
from allotment.core.preemption.retry import same_nodes
from allotment.core.preemption.victims import still_fails
from allotment.core.reservation import Hold, Holds
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState, Snapshot
from allotment.core.state import Pend
from allotment.core.walk import FAST, REFERENCE, WalkPolicy
from tests.core.builders import make_config
from tests.core.memo_twin import failed

N_NODES = 4
ACCOUNTS = ("a", "b", "c")
CTX = build_context(make_config({"a": 1, "b": 1, "c": 1}, nodes=N_NODES), "c1")
NODES = tuple(NodeState(f"n{i}", 8) for i in range(N_NODES))
USAGE = {"a": 0.0, "b": 400.0, "c": 150.0}  # a is the most under-served, b the most served
USAGES = (USAGE, {"a": 300.0, "b": 0.0, "c": 150.0}, {"a": 0.0, "b": 0.0, "c": 0.0})  # new epochs' windows
T0 = 1000.0

# a running job: (account, GPUs, node, allocated, declared priority, protected for this long past T0)
Job = tuple[str, int, int, bool, int, float]
job = st.tuples(st.sampled_from(ACCOUNTS), st.integers(1, 8), st.integers(0, N_NODES - 1), st.booleans(),
                st.integers(0, 1), st.sampled_from([-1.0, 30.0, 90.0, 1e9]))
# a change: stop the k-th running job, let time pass, start a job, flip a node's health, or
# change the window usage (as a new epoch does)
change = st.one_of(
    st.tuples(st.just("stop"), st.integers(0, 20)),
    st.tuples(st.just("usage"), st.integers(0, len(USAGES) - 1)),
    st.tuples(st.just("tick"), st.integers(1, 60)),
    st.tuples(st.just("start"), job),
    st.tuples(st.just("health"), st.integers(0, N_NODES - 1)),
)
# a search: (GPUs, declared priority, account, kind, reserved nodes or None)
search = st.tuples(st.sampled_from([2, 4, 6, 8, 16]), st.integers(0, 2), st.sampled_from(("a", "b")),
                   st.sampled_from(("full", "reserve", "unallocated")),
                   st.none() | st.frozensets(st.integers(0, N_NODES - 1), max_size=2))


class Twin:
    """The same state under the fast walk and the reference, changed in step."""

    def __init__(self, running: Sequence[Job], searches: Sequence[tuple[int, int, str, str, frozenset[int] | None]]) -> None:
        self.now = T0
        self.usage = USAGE
        self.fast = _scheduler(running, FAST)
        self.ref = _scheduler(running, REFERENCE)
        self.searches = searches
        self.started = 0
        for k, (gpus, declared, account, _, _) in enumerate(searches):
            for s in (self.fast, self.ref):
                s.state.add_pending(JobSpec(id=f"p{k}", submit=0.0, account=account, gpus=gpus, work=900.0, user="u",
                                      min_runtime=600.0, priority=declared), 0.0, 0.0)

    def change(self, what: tuple[str, int | Job]) -> None:
        kind, arg = what
        for s in (self.fast, self.ref):
            if isinstance(arg, tuple):
                _start(s, arg, f"s{self.started}", self.now)
            elif kind == "stop" and s.state.running:
                s.state.finish(sorted(s.state.running)[arg % len(s.state.running)])
            elif kind == "tick":
                s.state.expire_protections(self.now + arg)
            elif kind == "health":
                s.state.set_health(s.state.pool.names[arg], not s.state.pool.healthy[arg], self.now)
        self.now += arg if kind == "tick" and isinstance(arg, int) else 0
        if kind == "usage" and isinstance(arg, int):
            self.usage = USAGES[arg]
        self.started += kind == "start"

    def agree(self, usage: Mapping[str, float] | None = None) -> int:
        """Run every search on both; return how many found victims (they must agree)."""
        usage = self.usage if usage is None else usage
        found = 0
        for k, (_, _, _, kind, held) in enumerate(self.searches):
            got = [_victims(s, s.state.pending[f"p{k}"], kind, held, self.now, usage) for s in (self.fast, self.ref)]
            assert got[0] == got[1], (kind, held, got)
            found += got[0] is not None
        return found


def _scheduler(running: Sequence[Job], walk: WalkPolicy) -> Scheduler:
    sched = build_scheduler(Snapshot(NODES, ()), CTX, T0, frozenset(), walk=walk)
    for k, j in enumerate(running):
        _start(sched, j, f"r{k:02d}", T0)
    sched.state.expire_protections(T0)
    return sched


def _start(sched: Scheduler, j: Job, jid: str, now: float) -> None:
    """Start ``j`` now if it fits its node (else leave it out)."""
    account, gpus, node, allocated, declared, protect = j
    if sched.state.pool.free[node] < gpus or not sched.state.pool.healthy[node]:
        return
    spec = JobSpec(id=jid, submit=0.0, account=account, gpus=gpus, work=36000.0, user="u",
                   min_runtime=600.0 if allocated else 0.0, priority=declared)
    sched.state.add_running(spec, now - 10.0, ((sched.state.pool.names[node], gpus),), allocated=allocated,
                      protected_until=now + protect if allocated else now)


def _victims(s: Scheduler, p: Pend, kind: str, held: frozenset[int] | None, now: float,
             usage: Mapping[str, float]) -> object:
    pi = s.inputs(now, usage)
    s.starting.holds = None if held is None else Holds((Hold("holder", held, now + 1e6, (0, -1, "x")),))
    allow: NodeFilter | None = None if s.starting.holds is None else s.starting.holds.items[0].admit
    got = s.starting.victims_for(p, s.starting.queue_key(p.queue, pi), pi, allow, kind == "unallocated", kind == "reserve")
    return None if got is None else [(v.job_id, v.rule) for v in got]


@settings(max_examples=300, deadline=None)
@given(st.lists(job, max_size=12), st.lists(search, min_size=1, max_size=3), st.lists(change, max_size=12))
def test_the_memo_answers_what_a_fresh_search_does_after_any_changes(
    running: list[Job], searches: list[tuple[int, int, str, str, frozenset[int] | None]], changes: list[tuple[str, int | Job]]
) -> None:
    twin = Twin(running, searches)
    twin.agree()
    for c in changes:
        twin.change(c)
        twin.agree()


# the named cases: 8-GPU jobs of a (under-served) blocked by b's work (b runs far over what it is
# owed), of which 8 GPUs are preemptible but at most 4 on one node
SPLIT: list[Job] = [("b", 4, 0, True, 0, 1e9), ("b", 4, 0, True, 0, -1.0), ("b", 4, 1, True, 0, 1e9),
                    ("b", 4, 1, True, 0, -1.0)]


def _memo_skips(twin: Twin) -> None:
    """Both fail; the fast walk remembers it, and the very same state reuses that."""
    assert twin.agree() == 0
    searched = failed(twin.fast).entries()
    assert searched
    assert twin.agree() == 0 and failed(twin.fast).entries() == searched


def _still_fails(twin: Twin, grown: list[int], held: frozenset[int] | None = None) -> bool:
    """Does the per-node recheck alone prove the first search still fails, if only ``grown`` grew?"""
    s = twin.fast
    pi = s.inputs(twin.now, USAGE)
    p = s.state.pending["p0"]
    allow = None if held is None else Hold("holder", held, twin.now + 1e6, (0, -1, "x")).admit
    f = failed(s).find("p0", held, False)
    assert f is not None
    was = f.why
    return still_fails(s.starting.victim_view(pi), p, p.n, p.per, pi.owed, pi.measure, grown, was, allow=allow,
                       debug_end=s.starting.debug_end(p, pi.now)) is not None


def test_a_stop_on_a_node_the_job_cannot_use_keeps_the_failure_and_one_it_can_use_does_not() -> None:
    unalloc: Job = ("c", 4, 3, False, 0, -1.0)
    twin = Twin([*SPLIT, ("b", 4, 2, True, 0, 1e9), ("b", 4, 2, True, 0, 1e9), ("b", 4, 3, True, 0, 1e9), unalloc],
                [(8, 0, "a", "full", None)])
    _memo_skips(twin)
    twin.change(("stop", 4))  # one of b's protected 4 on n2 ends: 4 free there are not 8
    assert _still_fails(twin, [2])
    assert twin.agree() == 0
    twin.change(("stop", 5))  # b's protected 4 on n3 end: 4 free and the unallocated 4 there are
    assert not _still_fails(twin, [3])
    assert twin.agree() == 1


def test_a_protection_ending_makes_that_nodes_work_takeable() -> None:
    twin = Twin([*SPLIT, ("b", 8, 2, True, 0, 1e9), ("b", 8, 3, True, 0, 30.0)], [(8, 0, "a", "full", None)])
    _memo_skips(twin)
    twin.change(("tick", 40))  # b's job on n3 is preemptible: a, under-served, may reclaim it
    assert twin.agree() == 1


def test_the_requesters_own_lower_priority_work_turning_preemptible_is_read() -> None:
    twin = Twin([*SPLIT, ("b", 8, 2, True, 0, 1e9), ("a", 8, 3, True, 0, 30.0)], [(8, 1, "a", "full", None)])
    _memo_skips(twin)
    twin.change(("tick", 40))
    assert twin.agree() == 1  # within-team


def test_an_account_running_more_turns_donor_on_every_node_it_holds() -> None:
    # c's preemptible 8 on n3: c runs below what it is owed (8 < 10.7), so it is no donor until
    # it starts 4 more, on n1: n3 did not grow, yet its work is takeable now (donor_growth)
    twin = Twin([("b", 8, 0, True, 0, 1e9), ("b", 4, 1, True, 0, 1e9), ("b", 8, 2, True, 0, 1e9),
                 ("c", 8, 3, True, 0, -1.0)], [(8, 0, "a", "full", None)])
    _memo_skips(twin)
    twin.change(("start", ("c", 4, 1, True, 0, 1e9)))
    assert twin.agree() == 1


def test_a_requester_falling_below_what_it_is_owed_reads_donors_everywhere() -> None:
    # a runs 12 GPUs (over the 10.7 it is owed) on n0 and n1, which a reservation keeps its next
    # job off; c's preemptible 8 on n2 are not a's to take until a's own job on n0 ends
    twin = Twin([("a", 8, 0, True, 0, 1e9), ("a", 4, 1, True, 0, 1e9), ("c", 4, 1, True, 0, 1e9),
                 ("c", 8, 2, True, 0, -1.0), ("c", 8, 3, True, 0, 1e9)], [(8, 0, "a", "full", frozenset({0, 1}))])
    _memo_skips(twin)
    twin.change(("stop", 0))  # n0 grew, but the reservation keeps a off it
    assert not _still_fails(twin, [0], frozenset({0, 1}))
    assert twin.agree() == 1


def test_a_node_that_grew_but_is_reserved_cannot_hold_the_job() -> None:
    twin = Twin([*SPLIT, ("b", 8, 2, True, 0, 1e9), ("b", 8, 3, True, 0, 1e9)], [(8, 0, "a", "full", frozenset({3}))])
    _memo_skips(twin)
    twin.change(("stop", 5))  # n3 frees, but a's job may not use it
    assert _still_fails(twin, [3], frozenset({3}))
    assert twin.agree() == 0


def test_new_pass_inputs_forget_a_failure_that_read_donors() -> None:
    # c's preemptible 8 on n3 and 4 more: over what c is owed, but served no more than a in the
    # window -- until the next epoch's usage says it was
    twin = Twin([*SPLIT, ("b", 4, 2, True, 0, 1e9), ("c", 4, 2, True, 0, 1e9), ("c", 8, 3, True, 0, -1.0)],
                [(8, 0, "a", "full", None)])
    even = {"a": 0.0, "b": 400.0, "c": 0.0}
    assert twin.agree(even) == 0
    assert twin.agree({**even, "c": 150.0}) == 1


def test_a_failure_kept_off_reserved_nodes_does_not_answer_the_search_without_them() -> None:
    # b's preemptible 8 on n2 are the only way in: a search kept off n2 (a reservation) fails and
    # is remembered; the same job's search on the very same state without that reservation finds
    # them (FailedSearches.find tells the two apart by the reserved nodes)
    twin = Twin([*SPLIT, ("b", 8, 2, True, 0, -1.0), ("b", 8, 3, True, 0, 1e9)], [(8, 0, "a", "full", frozenset({2}))])
    assert twin.agree() == 0
    got = [_victims(s, s.state.pending["p0"], "full", None, twin.now, USAGE) for s in (twin.fast, twin.ref)]
    assert got[0] == got[1] and got[0] is not None


_NODE_SETS = st.one_of(st.none(), st.frozensets(st.integers(0, 12), max_size=6))


@given(a=_NODE_SETS, b=_NODE_SETS)
def test_two_searches_hold_the_same_nodes_exactly_when_their_sets_are_equal(
    a: frozenset[int] | None, b: frozenset[int] | None
) -> None:
    """``same_nodes`` reads size and hash before ``==`` (stop 48): it must answer ``==``, for
    equal sets that are distinct objects too, and with one hash computed and the other not."""
    assert same_nodes(a, b) is (a == b)
    copy_of_a = None if a is None else frozenset(list(a))  # equal, another object, no hash yet
    assert same_nodes(copy_of_a, a) and same_nodes(a, copy_of_a)
