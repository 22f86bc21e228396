"""The fast walk's one-node search by levels (``victims._near_pick``: the nodes that free GPUs,
unallocated work, jobs that yield to a reservation and the requester's own work can free,
looked at before any donor's) and the bound that sums a node's owners only where every
preemptible GPU there could reach the job (``victims._freeable_hosts``), against the plain
computations: on any state, ``find_victims`` on the fast walk's view answers the same -- the
same victims, rules and reasons, the same failure (``bare`` too) and the same kept pick --
with the near pick as without it, and the same as on the reference's view (memo None);
``_freeable_hosts`` lists the nodes a merged map of every owner lists.  The states and
searches are ``test_narrowed_search``'s, with a reservation's filter or none.  The named
cases fail if the near pick accepts an option that needs a reclaim victim (tried), or stops
before a level whose nodes may tie the best option's class (tried)."""

from __future__ import annotations

from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.core.placement import NodeFilter
from allotment.core.preemption import victims
from allotment.core.preemption.view import NoVictims, VictimView
from allotment.core.reservation import Unreserved
from allotment.core.scheduler import Scheduler
from tests.core.test_narrowed_search import (
    N_NODES,
    T0,
    USAGE,
    Job,
    Search,
    _state,
    _views,
    job,
    search,
)

FILTERS: tuple[NodeFilter | None, ...] = (None, Unreserved(frozenset({1, 4})), Unreserved(frozenset({0})))


def _answer(v: VictimView, s: Scheduler, k: int, sr: Search, allow: NodeFilter | None) -> tuple[object, object]:
    """``find_victims``'s answer for search ``k`` on ``v``, and what it kept of a pick."""
    _, n, _, _, kind, debug = sr
    p = s.state.pending[f"p{k}"]
    pi = s.inputs(T0, USAGE)
    keep: list[victims.KeptPick] = []
    got = victims.find_victims(v, p, n, p.per, pi.owed, pi.measure, allow=allow, only_unallocated=kind == "unallocated",
                               reserve=kind == "reserve", debug_end=T0 + 900.0 if debug else None, keep=keep)
    out: object = ((got.lasting, got.reclaim, got.bare) if isinstance(got, NoVictims)
                   else [(x.job_id, x.rule, x.reason) for x in got])
    return out, [(kp.nodes, kp.worst, kp.donors, kp.allocs, kp.own, kp.reserve) for kp in keep]


def _plain(v: VictimView, s: Scheduler, k: int, sr: Search, allow: NodeFilter | None) -> tuple[object, object]:
    """``_answer`` without the near pick (the path it replaces)."""
    with mock.patch.object(victims, "_near_pick", lambda *a: None), \
         mock.patch.object(victims, "_a_free_node", lambda *a: False):
        return _answer(v, s, k, sr, allow)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(job, min_size=3, max_size=18), st.lists(search, min_size=1, max_size=4),
       st.sampled_from([0, 1, 2, 3]), st.booleans(), st.sampled_from(FILTERS))
def test_the_near_pick_answers_as_the_full_search(running: list[Job], searches: list[Search], spare: int, keep: bool,
                                                  allow: NodeFilter | None) -> None:
    s = _state(running, searches)
    fast, ref = _views(s, spare, keep)
    for k, sr in enumerate(searches):
        got = _answer(fast, s, k, sr, allow)
        assert got == _plain(fast, s, k, sr, allow), (k, sr)
        want = _answer(ref, s, k, sr, allow)
        assert got[0] == want[0] or isinstance(want[0], tuple), (k, sr)  # a failure: the fast walk's may be bare


def _merged(v: VictimView, per: int, gpu_type: str | None, owners: set[str], more: dict[int, int]) -> list[int]:
    """``_freeable_hosts`` by its definition: every owner's map merged, each node summed."""
    total: dict[int, int] = {}
    for o in owners:
        for i, g in v.acct.owner_nodes.get(o, {}).items():
            total[i] = total.get(i, 0) + g
    for i, g in more.items():
        total[i] = total.get(i, 0) + g
    ok = v.pool.host_flags(per, gpu_type)
    return sorted(i for i in range(N_NODES) if ok[i] and v.pool.free[i] + total.get(i, 0) >= per)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(job, min_size=3, max_size=18), st.lists(search, min_size=1, max_size=2),
       st.sets(st.sampled_from(["", "a", "b", "c"])), st.booleans())
def test_the_bounded_sum_lists_the_merged_maps_nodes(running: list[Job], searches: list[Search], owners: set[str],
                                                     yields: bool) -> None:
    s = _state(running, searches)
    fast, _ = _views(s, 0, False)
    more = fast.acct.yield_nodes if yields else {}
    for k, _sr in enumerate(searches):
        p = s.state.pending[f"p{k}"]
        for per in (1, 2, 4, 8):
            assert victims._freeable_hosts(fast, p, per, owners, more) == _merged(fast, per, p.gpu_type, owners, more)


def _one(running: list[Job], sr: Search, keep: bool = False) -> tuple[tuple[object, object], list[str] | None]:
    """The answer for one search on every node (the same without the near pick), and what
    the near pick answers alone."""
    s = _state(running, [sr])
    fast, _ = _views(s, 0, keep)
    got = _answer(fast, s, 0, sr, None)
    assert got == _plain(fast, s, 0, sr, None), got
    assert isinstance(got, tuple)
    p = s.state.pending["p0"]
    cands = victims._Classifier(fast, p, True, {}, 0.0, False, None)
    return got, victims._near_pick(fast, p, p.per, {"", p.account}, {}, None, cands, None)


def test_an_option_that_needs_a_reclaim_victim_is_left_to_the_full_search() -> None:
    """Node 0 holds a's own work it may not take (priority 2 over its 1) and c's job of 2,000 s
    lost work; node 1 holds c's job started 10 s ago beside b's protected one, with nothing of
    a's: both need a reclaim victim, and node 1's loses less work.  The near pick sees node 0
    only (a's own work makes it level 2; a's priority-0 job on node 2 keeps a's work in the
    search's bound, ``_owners``, but is too small), and finds a reclaim there: it must not answer."""
    running: list[Job] = [("a", 4, 0, 1, True, 2, -1.0, False, 10.0, False),
                          ("c", 4, 0, 1, True, 0, -1.0, False, 2000.0, False),
                          ("c", 4, 1, 1, True, 0, -1.0, False, 10.0, False),
                          ("b", 4, 1, 1, True, 0, 1e9, False, 10.0, False),
                          ("a", 2, 2, 1, True, 0, -1.0, False, 10.0, False),
                          ("c", 6, 2, 1, True, 0, 1e9, False, 10.0, False),
                          ("c", 8, 3, 1, True, 0, 1e9, False, 10.0, False),
                          ("c", 8, 4, 1, True, 0, 1e9, False, 10.0, False),
                          ("c", 8, 5, 1, True, 0, 1e9, False, 10.0, False)]  # c runs 38 (owed 24)
    (got, _), near = _one(running, (4, 1, 1, "a", "full", False))
    assert got == [("r02", "reclaim", "c runs 14 GPUs over its entitlement")]
    assert near is None


def test_a_later_level_may_tie_the_class_of_an_earlier_levels_option() -> None:
    """Non-resumable work kept to completion: node 0's unallocated job is not takeable, so
    node 0 (level 0 by the bound) needs a's own priority-0 job there, 2,000 s of lost work;
    node 1 (level 2) frees the same class with a's job started 10 s ago, and wins."""
    running: list[Job] = [("b", 4, 0, 1, False, 0, -1.0, False, 2000.0, False),
                          ("a", 4, 0, 1, True, 0, -1.0, True, 2000.0, False),
                          ("a", 4, 1, 1, True, 0, -1.0, True, 10.0, False),
                          ("b", 4, 1, 1, True, 0, 1e9, False, 10.0, False),
                          ("b", 8, 2, 1, True, 0, 1e9, False, 10.0, False),
                          ("c", 8, 3, 1, True, 0, 1e9, False, 10.0, False),
                          ("b", 8, 4, 1, True, 0, 1e9, False, 10.0, False),
                          ("c", 8, 5, 1, True, 0, 1e9, False, 10.0, False)]
    (got, _), near = _one(running, (4, 1, 1, "a", "full", False), keep=True)
    assert near == ["r02"]
    assert got == [("r02", "within-team", "lower within-team priority than p0")]
