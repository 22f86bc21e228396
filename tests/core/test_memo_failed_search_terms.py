"""The failed-search memo (``core.preemption.retry``) against the reference, on the terms of a
search that ``tests/core/test_retry.py``'s generated states seldom reach: each case makes a
search fail on the fast walk and the reference alike, changes one thing the memo must see, and
asks again -- the reference then finds victims, so a fast walk that reused the failure would
answer differently.  The things: a better-ranked job leaving the queue without any other change
(the slicing rule reads the queues: ``ClusterState.queued_version``); the queue key the search is
made for (the slicing rule reads its tier); a node turning healthy with takeable work on it (the
nodes that grew: ``ClusterState.grown``); the job itself queued again with more work done
(``Failure.job``, by identity: a debug job that ends sooner may take its own team's place); a
search that may take jobs that yield to a reservation after one that may not (``Failure.reserve``)."""

from __future__ import annotations

from allotment.core.jobs import JobSpec
from allotment.core.pass_inputs import QueueKey
from allotment.core.scheduler import Scheduler
from allotment.core.tiers import GUARANTEED
from tests.core.memo_twin import Job, Twin, failed


def _search(twin: Twin, jid: str, *, kind: str = "full", qk: QueueKey | None = None) -> object:
    """The same search on both; they must agree.  None: nothing found."""
    got = []
    for s in twin.both:
        pi = s.inputs(twin.now, twin.usage)
        p = s.state.pending[jid]
        key = s.starting.queue_key(p.queue, pi) if qk is None else qk
        found = s.starting.victims_for(p, key, pi, None, kind == "unallocated", kind == "reserve")
        got.append(None if found is None else [(v.job_id, v.rule) for v in found])
    assert got[0] == got[1], got
    return got[0]


def _fails_twice(twin: Twin, jid: str, **kw: object) -> None:
    """Both fail; the fast walk remembers the failure."""
    assert _search(twin, jid, **kw) is None  # type: ignore[arg-type]
    assert failed(twin.fast).entries()
    assert _search(twin, jid, **kw) is None  # type: ignore[arg-type]


# a runs what it is owed (8 of 32: borrowing) as one preemptible priority-0 job on n0; b, c and d
# fill the rest, protected; b's 8-GPU job waits, ranked ahead (b runs below what it is owed).
# a's priority-1 job could slice a's own job, but it would end after it and b's job would fit there
SLICE: list[Job] = [("a", 8, 0, 1, True, 0, -1.0), ("c", 8, 1, 1, True, 0, 1e9), ("c", 8, 2, 1, True, 0, 1e9),
                    ("d", 8, 3, 1, True, 0, 1e9)]
SLICE_WAITING: list[Job] = [("b", 8, 0, 1, True, 0, 1e9), ("a", 8, 0, 1, True, 1, 1e9)]  # j005, j006


def test_a_better_ranked_job_leaving_the_queue_lets_a_team_slice_its_own_work() -> None:
    twin = Twin(SLICE, SLICE_WAITING)
    _fails_twice(twin, "j006")
    for s in twin.both:  # b's job leaves the queue (a simulator's requeue delay): nothing else changes
        s.state.take_pending("j005")
    assert _search(twin, "j006") is not None


def test_the_same_search_for_a_guaranteed_queue_may_slice() -> None:
    twin = Twin(SLICE, SLICE_WAITING)
    _fails_twice(twin, "j006")
    assert _search(twin, "j006", qk=(GUARANTEED, 0, "a")) is not None  # a guaranteed team may always slice


def test_a_node_turning_healthy_with_unallocated_work_on_it_can_be_searched() -> None:
    # n3 holds 8 GPUs of unallocated work but is unhealthy; every other node is full and protected
    twin = Twin([("b", 8, 0, 1, True, 0, 1e9), ("c", 8, 1, 1, True, 0, 1e9), ("d", 8, 2, 1, True, 0, 1e9),
                 ("c", 8, 3, 1, False, 0, 0.0)], [("a", 8, 0, 1, True, 0, 1e9)])
    twin.change(("health", 3))
    _fails_twice(twin, "j005", kind="unallocated")
    twin.change(("health", 3))
    assert _search(twin, "j005", kind="unallocated") is not None


def _requeue_with_work_done(s: Scheduler, jid: str, done: float) -> None:
    """As the simulator does when a start's launch never happened: the job leaves the queue and
    comes back as a new pending record, with the work it has done."""
    q = s.state.take_pending(jid)
    s.state.add_pending(q.spec, q.eligible, q.queued_since, done_work=done, declared=q.declared, evicted_by=q.evicted_by)


def test_the_job_queued_again_with_more_work_done_is_searched_for_again() -> None:
    # a's preemptible priority-1 job on n0 ends in 3,590 s; a's waiting priority-1 debug job needs
    # 3,600 s (it would end after it: no debug slice) -- until it comes back with 100 s done
    twin = Twin([("a", 8, 0, 1, True, 1, -1.0), ("c", 8, 1, 1, True, 0, 1e9), ("c", 8, 2, 1, True, 0, 1e9),
                 ("d", 8, 3, 1, True, 0, 1e9)], [("a", 8, 0, 1, True, 1, 1e9)])
    _fails_twice(twin, "j005")
    for s in twin.both:
        _requeue_with_work_done(s, "j005", 100.0)
    assert _search(twin, "j005") is not None


def test_a_failure_that_could_not_take_yielding_jobs_does_not_answer_one_that_can() -> None:
    # b's preemptible job on n0 yields to reservations (a debug job started on reserved nodes);
    # n1 is free, n2 and n3 are full and protected: a gang of 2 x 8 needs n0 too, and only a
    # reservation's holder (``reserve``) may take b's job there
    twin = Twin([("c", 8, 2, 1, True, 0, 1e9), ("d", 8, 3, 1, True, 0, 1e9)],
                [("a", 8, 0, 2, True, 0, 1e9)])  # j003: the gang
    spec = JobSpec(id="y", submit=0.0, account="b", gpus=8, work=3600.0, user="u", min_runtime=600.0)
    for s in twin.both:
        s.state.add_running(spec, twin.now - 10.0, (("n0", 8),), allocated=True, protected_until=twin.now - 10.0, yields=True)
    _fails_twice(twin, "j003")
    assert _search(twin, "j003", kind="reserve") is not None


def sliced_later() -> Twin:
    """The state of the case below: the debug job p's search failed, for now, as the slicing
    rule forced it, kept by the fast walk."""
    twin = Twin([], [("b", 8, 0, 1, True, 0, 1e9)])
    twin.run("w1", "a", 4, 0, 0, 50.0)
    twin.run("d1", "a", 4, 0, 1, 100.0)
    twin.run("w2", "a", 4, 1, 0, 3600.0)
    twin.run("d2", "a", 4, 1, 1, 3600.0)
    twin.run("c", "c", 8, 2, 0, 3600.0, 1e9)
    twin.run("d", "d", 8, 3, 0, 3600.0, 1e9)
    twin.wait("p", "a", 8, 1, 60.0)
    _fails_twice(twin, "p")
    assert [(f.why.lasting, f.pick) for f in failed(twin.fast).entries()] == [(False, None)]
    return twin


def test_the_same_search_later_may_slice_where_it_could_not() -> None:
    """The time (``SearchState.now``): a failure is reused on the very same state only at the
    same ``now``.  a runs 16 (borrowing): on n0 a priority-0 job ending in 40 s and a priority-1
    one ending in 90 s, on n1 two that end in an hour.  a's priority-1 debug job of 60 s (8
    GPUs) may take n0's pair (``within-team``, ``debug-slice``: it would end before the
    priority-1 one), the first of two nodes that each need a debug slice, but the slicing rule
    forbids it (it would end after the priority-0 one, and b's waiting job, ranked ahead, would
    fit there): it fails, for now.  60 s later nothing else changed, but the debug job would
    end after n0's priority-1 job: it may no longer take it, so it takes n1's pair, which end
    after it -- the slicing rule allows that.  A later time narrowed what it may take, and that
    made it succeed."""
    twin = sliced_later()
    version = twin.fast.state.version
    twin.change(("tick", 60))
    assert twin.fast.state.version == version  # the very same state
    assert _search(twin, "p") == [("w2", "within-team"), ("d2", "debug-slice")]
