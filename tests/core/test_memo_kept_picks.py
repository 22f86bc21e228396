"""The fast walk's kept failed picks (``preemption.kept_pick``, ``victims.still_picks``: a search
that picked victims and failed the distance check is not redone in the same pass inputs while
no node it reads was touched) against the reference, which searches every time.

The property drives one state under both walks (``memo_twin``) through starts, stops of
allocated and unallocated work, protections ending, health flips, time and new usages, and asks
every pending job's searches after each change; the named cases each make a failed pick, then
change one thing that lets the same search succeed."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.core.context import Context, build_context
from tests.core.memo_twin import CTX, PERIOD, Change, Job, Twin, change, config, failed


def _picks(twin: Twin) -> int:
    """How many failed picks the fast walk keeps."""
    return sum(1 for f in failed(twin.fast).entries() if f.pick is not None)


# b runs the most, much of it past its protection (the donor); a runs little and waits with
# gangs of two whole nodes, which a reclaim of b's work overshoots often enough to fail the
# distance check; c and d fill the rest
running = st.tuples(st.sampled_from("bbbbacd"), st.sampled_from([2, 4, 4, 8]), st.integers(0, 3),
                    st.sampled_from([1, 1, 2]), st.sampled_from([True, True, True, False]), st.integers(0, 2),
                    st.sampled_from([-1.0, -1.0, 200.0, 1e9]))
waiting = st.tuples(st.sampled_from("aac"), st.sampled_from([4, 8]), st.integers(0, 3), st.sampled_from([1, 2, 2]),
                    st.just(True), st.integers(0, 2), st.just(1e9))
small = st.one_of(st.tuples(st.just("stop"), st.integers(0, 40)), st.tuples(st.just("tick"), st.sampled_from([1, 250])),
                  st.tuples(st.just("start"), running))


# the base every example starts from: a (owed 8 of 32) runs nothing and waits with a gang of
# two whole nodes; b runs 12, 4 over, as 4 GPUs on n0 (beside 4 free) and 8 on n1, both past
# their protection; c and d fill n2 and n3, protected.  The gang's pick takes both of b's jobs
# and fails the check (b's term moves by |4 - 12| - 4 = +4, a's by 0), though some reclaim could
# pass by the accounting alone (the shortcut does not apply): a failed pick, kept
BASE: list[Job] = [("b", 4, 0, 1, True, 0, -1.0), ("b", 8, 1, 1, True, 0, -1.0), ("c", 8, 2, 1, True, 0, 1e9),
                   ("d", 8, 3, 1, True, 0, 1e9)]
GANG_A: list[Job] = [("a", 8, 0, 2, True, 1, 1e9)]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(running, max_size=6), st.lists(waiting, max_size=2), st.lists(small | change, max_size=10),
       st.booleans())
def test_a_kept_pick_answers_what_the_search_does(more: list[Job], pending: list[Job], changes: list[Change],
                                                  base: bool) -> None:
    twin = Twin([*BASE, *more] if base else more, [*GANG_A, *pending])
    twin.replay(changes)


def _failed_pick(running: list[Job] = BASE) -> Twin:
    twin = Twin(running, GANG_A)
    assert twin.search("j005") is None
    assert _picks(twin) == 1
    assert twin.search("j005") is None
    return twin


def test_the_base_is_a_kept_failed_pick() -> None:
    _failed_pick()


def test_a_start_on_a_chosen_node_is_seen() -> None:
    """b runs 13, 5 over: 4 on n0 (beside 4 free), 8 on n1, 1 on n2 (beside 7 free).  The pick
    (n0, n1: 12 of b's GPUs) overshoots: b's term moves by |5 - 12| - 5 = +2.  d then starts 4
    GPUs on n0 -- a start, on a chosen node, of an account the pick does not move -- and n0
    cannot be freed: the pick is n1 and n2 (9 GPUs, -1), which passes."""
    twin = _failed_pick([("b", 4, 0, 1, True, 0, -1.0), ("b", 8, 1, 1, True, 0, -1.0), ("b", 1, 2, 1, True, 0, -1.0),
                         ("c", 8, 3, 1, True, 0, 1e9)])
    twin.start(("d", 4, 0, 1, True, 0, 1e9))
    assert twin.search("j005") is not None


def test_the_requester_running_less_is_seen() -> None:
    """a runs 4 (protected, on n3 beside d's 4): its gang moves its term by |20 - 8| - 4 = +8;
    the pick (b's 4 on n0 and 8 on n1; b runs 16, 8 over) moves b's by -4: it fails.  a's job
    stops -- on a node that still cannot be freed -- and a's term moves by 0: the same pick
    passes."""
    twin = Twin([("b", 4, 0, 1, True, 0, -1.0), ("b", 8, 1, 1, True, 0, -1.0), ("b", 4, 2, 1, True, 0, 1e9),
                 ("c", 4, 2, 1, True, 0, 1e9), ("a", 4, 3, 1, True, 0, 1e9), ("d", 4, 3, 1, True, 0, 1e9)], GANG_A)
    assert twin.search("j007") is None
    assert _picks(twin) == 1
    for s in twin.both:
        s.state.finish("j005")  # a's job on n3
    assert twin.search("j007") is not None


def test_a_protection_ending_on_a_node_not_chosen_is_seen() -> None:
    """b runs 11, 3 over: 2 on n0 (protected a little longer, beside 6 free), 1 on n1 (beside 7
    free), 8 on n2.  The pick (n1, n2: 9 GPUs) moves b's term by +3.  b's job on n0 turns
    preemptible (no start, no stop): n0 comes first, and the pick n0, n1 (3 GPUs, -3) passes."""
    twin = Twin([("b", 2, 0, 1, True, 0, 20.0), ("b", 1, 1, 1, True, 0, -1.0), ("b", 8, 2, 1, True, 0, -1.0),
                 ("c", 8, 3, 1, True, 0, 1e9)], GANG_A)
    assert twin.search("j005") is None
    assert _picks(twin) == 1
    twin.change(("tick", 40))
    assert twin.search("j005") is not None


def test_a_donor_replaced_by_another_is_seen() -> None:
    """Stop 44, found on `ai2-big-gangs` seed 5: the kept pick read a new donor's nodes only when
    the number of donors changed, so one donor leaving as another joined hid the new one.  a
    runs 2 (protected) and asks for a node.  b runs 9, 1 over (8 on n2, 1 on n1) and d runs 9,
    1 over (8 on n3, 1 on n1, protected): the donors.  Taking b's 1 would pass by the accounting
    (no shortcut), but the pick, b's 8 on n2, overshoots (b's term +6, a's -4) and fails.  d's
    protected GPU on n1 stops (d is no donor now) and c starts 3 there (11, 3 over: a donor, one
    for one).  c's 8 on n0 -- a node nothing touched -- is the better option now and passes
    (c's term +2, a's -4)."""
    twin = Twin([("c", 8, 0, 1, True, 0, -1.0), ("a", 2, 1, 1, True, 0, 1e9), ("b", 1, 1, 1, True, 0, -1.0),
                 ("d", 1, 1, 1, True, 0, 1e9), ("b", 8, 2, 1, True, 0, -1.0), ("d", 8, 3, 1, True, 0, -1.0)],
                [("a", 8, 0, 1, True, 1, 1e9)])
    assert twin.search("j007") is None
    assert _picks(twin) == 1
    for s in twin.both:
        s.state.finish("j004")  # d's GPU on n1
    twin.start(("c", 3, 1, 1, True, 0, 1e9))
    assert twin.search("j007") == [("j001", "reclaim")]


# b's and c's preemptible 4 GPUs on n0, the one node a's 4-GPU job could be given (n1-n3 hold
# protected work, n3 3 free GPUs); a runs 6 of the 8 it is owed.  b runs 10, 2 over: its job
# is taken first (the more over first, the key's ``-over``), and the pick fails the check (a's
# term moves by |10 - 8| - 2 = 0, b's by |2 - 4| - 2 = 0: not lower)
def two_donors_on_the_chosen_node(c_runs: int) -> Twin:
    twin = Twin([("b", 4, 0, 1, True, 0, -1.0), ("c", 4, 0, 1, True, 0, -1.0), ("b", 6, 1, 1, True, 0, 1e9),
                 ("a", 2, 1, 1, True, 0, 1e9), ("c", c_runs - 4, 2, 1, True, 0, 1e9), ("a", 3, 2, 1, True, 0, 1e9),
                 ("a", 1, 3, 1, True, 0, 1e9), ("d", 4, 3, 1, True, 0, 1e9)], [("a", 4, 0, 1, True, 0, 1e9)])
    assert twin.search("j009") is None
    assert _picks(twin) == 1
    assert twin.search("j009") is None
    return twin


def test_a_donors_excess_growing_past_anothers_on_the_chosen_node_is_seen() -> None:
    """A donor's changed excess re-reads its nodes (``still_picks``).  c runs 9, 1 over: a
    donor, its job on n0 after b's.  c starts 2 GPUs on n3 (touched: it cannot be freed) and
    runs 3 over: on n0 its job now comes first, and taking it passes (c's term moves by
    |3 - 4| - 3 = -2).  No account the pick moved (a, b) changed its GPUs: only the re-read of
    c's nodes sees it."""
    twin = two_donors_on_the_chosen_node(9)
    twin.start(("c", 2, 3, 1, True, 0, 1e9))
    assert twin.search("j009") == [("j002", "reclaim")]


def test_an_account_turning_donor_on_the_chosen_node_is_seen() -> None:
    """A new donor's nodes are re-read (``still_picks``), also while the donors it read stay
    donors (b is one throughout).  c runs 8, what it is owed: no donor.  c starts 3 GPUs on n3
    (touched: it cannot be freed) and runs 3 over: a donor, whose job on n0 now comes before
    b's, and taking it passes."""
    twin = two_donors_on_the_chosen_node(8)
    twin.start(("c", 3, 3, 1, True, 0, 1e9))
    assert twin.search("j009") == [("j002", "reclaim")]


def debug_slice_on_the_chosen_node() -> Twin:
    """The state of the case below: a's debug job p picked b's job and a debug slice on n0 and
    failed the check, a pick the fast walk keeps."""
    twin = Twin([], [], build_context(config(debug_reclaim=True), "c1"))
    twin.run("r", "b", 2, 0, 0, 3600.0)
    twin.run("d0", "a", 2, 0, 1, 100.0)
    twin.run("c0", "c", 4, 0, 0, 3600.0, 1e9)
    twin.run("d1", "a", 2, 1, 1, 3600.0)
    twin.run("dd", "d", 4, 1, 0, 3600.0, 1e9)
    twin.run("a2", "a", 4, 2, 0, 3600.0, 1e9)
    twin.run("c2", "c", 4, 2, 0, 3600.0, 1e9)
    twin.run("b3", "b", 8, 3, 0, 3600.0, 1e9)
    twin.wait("p", "a", 4, 1, 60.0)
    assert twin.search("p") is None
    assert _picks(twin) == 1
    return twin


def test_a_debug_job_no_longer_ending_before_a_victim_is_seen() -> None:
    """The debug end (``Starting.debug_end``): a kept pick is reused only for the same one.
    a's debug job (4 GPUs, 60 s of work, priority 1) may reclaim (``debug_reclaim``) though a
    runs what it is owed (8).  n0: b's preemptible 2 (b runs 10, 2 over) beside a's priority-1
    2 that end in 90 s (``debug-slice``: the debug job would end first) and c's protected 4;
    n1: a's priority-1 2 that end in an hour, beside d's protected 4 and 2 free.  Both options
    need a debug slice; n0 comes first and takes b's job too: the pick fails the check (a's
    term moves by +2, b's by -2).  60 s later nothing was touched, but the debug job would end
    after a's job on n0: n0 cannot be freed, and n1 (a debug slice alone, no reclaim to check)
    is taken."""
    twin = debug_slice_on_the_chosen_node()
    twin.change(("tick", 60))
    assert twin.search("p") == [("d1", "debug-slice")]


# a runs 6 of the 8 it is owed and asks for 4 GPUs; every node is full.  n0: b's preemptible 4
# (b runs 10, 2 over: taking them moves a's term by 0 and b's by 0, not lower) beside b's
# protected 4; n1: c's preemptible 4 (c runs 12, 4 over: taking them passes, -4) beside c's
# protected 4.  Both options are one reclaim; no work is lost at the epoch (the jobs started
# after it), so n0 comes first by node order and the pick fails the check
def a_cheaper_node_that_fails(ctx: Context = CTX, checkpoint: float | None = None) -> Twin:
    twin = Twin([], [], ctx)
    twin.run("x", "b", 4, 0, 0, 3600.0, checkpoint=checkpoint)
    twin.run("b0", "b", 4, 0, 0, 3600.0, 1e9)
    twin.run("y", "c", 4, 1, 0, 3600.0)
    twin.run("c1", "c", 4, 1, 0, 3600.0, 1e9)
    for jid, account, gpus, node in (("b2", "b", 2, 2), ("c2", "c", 4, 2), ("a2", "a", 2, 2), ("a3", "a", 4, 3),
                                     ("d3", "d", 4, 3)):
        twin.run(jid, account, gpus, node, 0, 3600.0, 1e9)
    twin.wait("p", "a", 4, 0, 3600.0)
    assert twin.search("p") is None
    assert _picks(twin) == 1
    assert twin.search("p") is None
    return twin


def test_a_new_epoch_that_makes_the_chosen_node_lose_work_is_seen() -> None:
    """The pass inputs (``KeptPick.inputs``): the epoch at which lost work orders the options.
    b's job on n0 checkpoints every 1,000 s; at the next epoch (the usage as it was, a new
    mapping) it would lose 210 s of its 4 GPUs' work, c's job nothing: n1 comes first, and its
    pick passes.  Nothing was touched, no donor's excess moved; a job that is not a debug job
    (``debug_end`` None), so the time reaches the pick through the epoch alone."""
    twin = a_cheaper_node_that_fails(build_context(config(debug_threshold_s=60), "c1"), checkpoint=1000.0)
    twin.change(("tick", PERIOD))
    twin.usage = dict(twin.usage)
    assert twin.search("p") == [("y", "reclaim")]


def test_the_job_queued_again_after_its_chosen_victim_evicted_it_is_seen() -> None:
    """The job's identity (``Failure.job``, in the pick's reuse): the same job queued again as
    a new record that b's job on n0 evicted (``evicted_by``): anti-thrash bars it, n0 cannot be
    freed, and n1's pick passes.  Nothing was touched."""
    twin = a_cheaper_node_that_fails()
    for s in twin.both:
        q = s.state.take_pending("p")
        s.state.add_pending(q.spec, q.eligible, q.queued_since, done_work=q.done_work, declared=q.declared,
                            evicted_by="x")
    assert twin.search("p") == [("y", "reclaim")]
