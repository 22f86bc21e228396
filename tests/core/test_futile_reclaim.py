"""The fast walk's shortcut for searches no reclaim can pass (``preemption.futile_reclaim``,
``victims._without_reclaim``) against the plain search: on any state, ``find_victims`` with the
view's memo (the fast walk) answers exactly what it does without (the reference) -- the same
victims, rules and reasons, or the same ``NoVictims``.  The states mix one-node jobs and
two-node gangs of three accounts, allocated or not, protected or not, of several declared
priorities, with window usages that make any of them donors; the searches are gangs and
one-node jobs, with reserved nodes, for unallocated work only, debug or not."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.core.context import Context, build_context
from allotment.core.decide import build_scheduler
from allotment.core.jobs import JobSpec
from allotment.core.preemption import futile_reclaim, victims
from allotment.core.preemption.view import NoVictims, Victim, VictimView
from allotment.core.reservation import Hold
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState, Snapshot
from allotment.core.walk import FAST
from tests.core.builders import make_config

N_NODES = 4
CTX = build_context(make_config({"a": 1, "b": 1, "c": 2}, nodes=N_NODES), "c1")
NODES = tuple(NodeState(f"n{i}", 8) for i in range(N_NODES))
USAGES = ({"a": 0.0, "b": 400.0, "c": 150.0}, {"a": 300.0, "b": 0.0, "c": 150.0}, {"a": 0.0, "b": 0.0, "c": 0.0})
T0 = 1000.0

# a running job: (account, GPUs per node, first node, nodes, allocated, declared priority, protected for)
Job = tuple[str, int, int, int, bool, int, float]
job = st.tuples(st.sampled_from("abc"), st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8]), st.integers(0, N_NODES - 1),
                st.sampled_from([1, 1, 1, 2]), st.sampled_from([True, True, True, False]), st.integers(0, 2),
                st.sampled_from([-1.0, -1.0, 1e9]))
# a search: (GPUs per node, nodes, declared priority, account, kind, reserved nodes, debug)
Search = tuple[int, int, int, str, str, frozenset[int] | None, bool]
search = st.tuples(st.sampled_from([1, 2, 4, 8, 8]), st.sampled_from([1, 1, 2, 2, 3]), st.integers(0, 2), st.sampled_from("abc"),
                   st.sampled_from(("full", "full", "reserve", "unallocated")),
                   st.none() | st.frozensets(st.integers(0, N_NODES - 1), max_size=2), st.booleans())


def _state(running: Sequence[Job], searches: Sequence[Search], ctx: Context = CTX) -> Scheduler:
    s = build_scheduler(Snapshot(NODES, ()), ctx, T0, frozenset(), walk=FAST)
    for k, (account, per, first, nodes, allocated, declared, protect) in enumerate(running):
        idx = [(first + m) % N_NODES for m in range(nodes)]
        if any(s.state.pool.free[i] < per for i in idx):
            continue
        spec = JobSpec(id=f"r{k:02d}", submit=0.0, account=account, gpus=per * nodes, work=36000.0, user="u",
                       min_runtime=600.0 if allocated else 0.0, priority=declared,
                       gpus_per_node=per if nodes > 1 else None)
        s.state.add_running(spec, T0 - 10.0 - 7.0 * k, tuple((s.state.pool.names[i], per) for i in idx), allocated=allocated,
                      protected_until=T0 + protect if allocated else T0)
    s.state.expire_protections(T0)
    for k, (per, nodes, declared, account, _, _, _) in enumerate(searches):
        s.state.add_pending(JobSpec(id=f"p{k}", submit=0.0, account=account, gpus=per * nodes, work=900.0, user="u",
                              min_runtime=600.0, priority=declared, gpus_per_node=per if nodes > 1 else None), 0.0, 0.0)
    return s


def _answer(found: list[Victim] | NoVictims) -> object:
    return found if isinstance(found, NoVictims) else [(v.job_id, v.rule, v.reason) for v in found]


def _both(s: Scheduler, usage: dict[str, float], searches: Sequence[Search]) -> None:
    pi = s.inputs(T0, usage)
    fast = s.starting.victim_view(pi)
    assert fast.memo is not None  # the fast walk's view: the shortcut applies
    ref = VictimView(fast.pool, fast.running, fast.acct, fast.keep_nonresumable, fast.hysteresis, fast.reclaims,
                     fast.t, None, fast.debug_threshold_s)
    for k, (_, _, _, _, kind, held, debug) in enumerate(searches):
        p = s.state.pending[f"p{k}"]
        allow = None if held is None else Hold("holder", held, T0 + 1e6, (0, -1, "x")).admit
        for slice_ok in (True, False):
            got = [_answer(victims.find_victims(v, p, p.n, p.per, pi.owed, pi.measure, allow=allow, slice_ok=slice_ok,
                                                only_unallocated=kind == "unallocated", reserve=kind == "reserve",
                                                debug_end=T0 + 900.0 if debug else None))
                   for v in (fast, ref)]
            assert got[0] == got[1], (k, kind, held, slice_ok, got)




# the named case: a (owed 8, running 6) asks for a 2-node gang of 8; b, its only donor (owed 8),
# runs 4 over that in one 12-GPU gang: taking it leaves b 8 short and a 6 over (distance +8)
GANG_OF_B: list[Job] = [("b", 6, 0, 2, True, 0, -1.0), ("c", 4, 2, 1, True, 0, 1e9), ("a", 6, 3, 1, True, 0, 1e9)]


def test_a_gang_whose_only_reclaim_overshoots_is_answered_without_picking_reclaim_victims() -> None:
    """The shortcut is taken here (not vacuous), and answers FOR_NOW as the plain search does
    after picking b's gang and failing the distance check."""
    searches: list[Search] = [(4, 2, 0, "a", "full", None, False)]
    s = _state(GANG_OF_B, searches)
    pi = s.inputs(T0, USAGES[0])
    p = s.state.pending["p0"]
    v = s.starting.victim_view(pi)
    t = victims.Terms(v, p, pi.owed, pi.measure, True, False, False)
    assert set(t.donors) == {"b"}
    assert futile_reclaim.reclaim_futile(v, p, t, pi.owed, None)
    found = victims.find_victims(v, p, p.n, p.per, pi.owed, pi.measure)
    assert isinstance(found, NoVictims) and not found.lasting
    _both(s, USAGES[0], searches)


def _shortcut(running: list[Job], search: Search) -> list[Victim] | NoVictims:
    """The fast walk's answer for ``search`` on ``running``, which takes the shortcut, and is
    the plain search's."""
    s = _state(running, [search])
    pi = s.inputs(T0, USAGES[0])
    p = s.state.pending["p0"]
    v = s.starting.victim_view(pi)
    assert futile_reclaim.reclaim_futile(v, p, victims.Terms(v, p, pi.owed, pi.measure, True, False, False), pi.owed, None)
    _both(s, USAGES[0], [search])
    return victims.find_victims(v, p, p.n, p.per, pi.owed, pi.measure)


def test_without_a_reclaim_the_gang_takes_its_teams_lower_priority_work() -> None:
    """a's own 6 GPUs of priority 0 on node 3 make room there for its gang of priority 1: the
    nodes that need b's gang are not needed, and the move passes (no reclaim)."""
    own_low = [*GANG_OF_B[:2], ("a", 6, 3, 1, True, 0, -1.0)]
    found = _shortcut(own_low, (4, 2, 1, "a", "full", None, False))
    assert not isinstance(found, NoVictims) and [(x.job_id, x.rule) for x in found] == [("r02", "within-team")]


def test_too_few_nodes_even_with_reclaim_victims_is_a_lasting_failure() -> None:
    """a's own work on node 3 is of its gang's priority (not takeable, though the node bound
    counts it): three nodes can be freed, four are needed -- the search finds nothing."""
    own_same = [*GANG_OF_B[:2], ("a", 6, 3, 1, True, 1, -1.0)]
    found = _shortcut(own_same, (4, 4, 1, "a", "full", None, False))
    assert isinstance(found, NoVictims) and found.lasting


# owed a 9.6, b 9.6, c 12.8 (32 GPUs by weights 3, 3, 4): fractional overs, so that a bound that
# left out one part of a move could pass a move that closes it
CTX_FRACTION = build_context(make_config({"a": 3, "b": 3, "c": 4}, nodes=N_NODES), "c1")
# a runs 4 (u = 5.6) of which 3 are its own lower-priority work, on node 0 beside b's 5 (b runs 10,
# 0.4 over; its smallest takeable job is that 5): taking both moves a to 9 and b to 5 -- distance
# -0.8.  Without the own GPUs the bound would be +1.0 (a to 12: |2.4| - 5.6; b: 5 - 0.8)
OWN_HELPS: list[Job] = [("a", 3, 0, 1, True, 0, -1.0), ("b", 5, 0, 1, True, 0, -1.0), ("b", 5, 1, 1, True, 0, 1e9),
                        ("c", 3, 1, 1, True, 0, 1e9), ("c", 8, 2, 1, True, 0, 1e9), ("c", 7, 3, 1, True, 0, 1e9),
                        ("a", 1, 3, 1, True, 0, 1e9)]
# a runs 4 (u = 5.6), none of it takeable; node 0 holds b's 5 (b 0.4 over, bound 5 - 0.8 = 4.2)
# and c's 3 (c runs 17, 4.2 over, 6 takeable: bound -4.2): taking both moves the distance by
# -3.2 + 4.2 - 3.0 = -2.  Without c's negative bound the bound would be -3.2 + 4.2 = +1.0
TWO_DONORS: list[Job] = [("b", 5, 0, 1, True, 0, -1.0), ("c", 3, 0, 1, True, 0, -1.0), ("b", 5, 1, 1, True, 0, 1e9),
                         ("c", 3, 1, 1, True, 0, -1.0), ("c", 8, 2, 1, True, 0, 1e9), ("c", 3, 3, 1, True, 0, 1e9),
                         ("a", 4, 3, 1, True, 0, 1e9)]


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(job, min_size=4, max_size=16), st.lists(search, min_size=1, max_size=4), st.sampled_from(USAGES[:2]),
       st.sampled_from([CTX, CTX_FRACTION]))
def test_the_shortcut_answers_what_the_plain_search_does(running: list[Job], searches: list[Search],
                                                         usage: dict[str, float], ctx: Context) -> None:
    _both(_state(running, searches, ctx), usage, searches)


def _reclaim_passes(running: list[Job], declared: int) -> None:
    """A one-node search of 8 GPUs for a takes victims of another account and passes the
    distance check: the shortcut must not claim that no reclaim can pass."""
    searches: list[Search] = [(8, 1, declared, "a", "full", None, False)]
    s = _state(running, searches, CTX_FRACTION)
    pi = s.inputs(T0, USAGES[0])
    assert pi.owed == {"a": 9.6, "b": 9.6, "c": 12.8}
    p = s.state.pending["p0"]
    v = s.starting.victim_view(pi)
    t = victims.Terms(v, p, pi.owed, pi.measure, True, False, False)
    assert not futile_reclaim.reclaim_futile(v, p, t, pi.owed, None)
    found = victims.find_victims(v, p, p.n, p.per, pi.owed, pi.measure)
    assert not isinstance(found, NoVictims) and "reclaim" in {x.rule for x in found}
    _both(s, USAGES[0], searches)


def test_the_requesters_own_work_taken_beside_a_reclaim_counts_in_the_bound() -> None:
    _reclaim_passes(OWN_HELPS, 1)


def test_a_donor_that_can_give_up_to_its_excess_counts_beside_one_that_overshoots() -> None:
    _reclaim_passes(TWO_DONORS, 0)


# a runs 9 (u = 0.6; its term +6.8 for 8 GPUs), none takeable; node 0 holds c's 7 beside one free
# GPU (c runs 20, 7.2 over, 7 takeable: bound -7): taking it moves the distance by -0.2.  A bound
# that counted a donor giving less than its excess as nothing would be +6.8
BELOW_EXCESS: list[Job] = [("c", 7, 0, 1, True, 0, -1.0), ("c", 8, 1, 1, True, 0, 1e9), ("c", 5, 2, 1, True, 0, 1e9),
                           ("a", 1, 2, 1, True, 0, 1e9), ("b", 2, 2, 1, True, 0, 1e9), ("a", 8, 3, 1, True, 0, 1e9)]


def test_a_donor_giving_less_than_its_excess_lowers_the_bound_by_what_it_gives() -> None:
    _reclaim_passes(BELOW_EXCESS, 0)
