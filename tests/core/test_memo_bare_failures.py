"""The fast walk's kept bare failures (``NoVictims.bare``: no reclaim could pass the distance
check and the requester's own and unallocated work could not free its nodes;
``victims.still_bare``, ``preemption.retry.FailedSearches.bare_grown``) against the reference,
which searches every time.

A bare failure is kept across states and pass inputs, so every change must either leave the
search failing or be seen: a job stopping (the nodes it held grew), protections ending, a node's
health flipping, another window usage (other donors, other measures), time moving, jobs queued
and started.  The property drives one state under both walks (``memo_twin``) through such
changes and asks every pending job's searches (full, and may take yielding jobs) after each; the
named cases each make a bare failure, then change one thing that makes the same search succeed."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from allotment.core.preemption.view import FOR_NOW, FOR_NOW_BARE
from tests.core.memo_twin import Change, Job, Twin, change, config, failed, job

# minimum runtime 600 s: not a debug job under this threshold (the proof is then asked with own work)
NO_DEBUG = build_context(config(debug_threshold_s=60), "c1")


def _bare(twin: Twin) -> int:
    """How many bare failures the fast walk keeps."""
    return sum(1 for f in failed(twin.fast).entries() if f.why.bare)


# gangs of two whole nodes that wait: a 16-GPU gang is twice what a team is owed (8 of 32), so
# a reclaim seldom lowers the distance and most of their failed searches are bare ones
gang = st.tuples(st.sampled_from("abcd"), st.just(8), st.integers(0, 3), st.just(2), st.just(True),
                 st.integers(0, 2), st.just(1e9))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(job, min_size=3, max_size=10), st.lists(gang | job, min_size=1, max_size=4),
       st.lists(change, max_size=12))
def test_a_kept_bare_failure_answers_what_the_search_does(running: list[Job], pending: list[Job],
                                                          changes: list[Change]) -> None:
    twin = Twin(running, pending)
    twin.replay(changes)


def _bare_failure(running: list[Job]) -> Twin:
    """``running`` and a's gang of two whole nodes (priority 1), whose search fails bare on
    both walks; the fast walk keeps that failure and reuses it."""
    twin = Twin(running, GANG_A)
    jid = sorted(twin.fast.state.pending)[-1]
    assert twin.search(jid) is None
    assert [f.why for f in failed(twin.fast).entries()] == [FOR_NOW_BARE]
    assert failed(twin.fast).entries()[0].why.bare
    assert twin.search(jid) is None
    return twin


GANG_A: list[Job] = [("a", 8, 0, 2, True, 1, 1e9)]
# owed 8 each (32 GPUs, four teams).  b runs 10, 2 over, and its one preemptible job is 8 GPUs
# on n0: taking it moves b's term by 8 - 2 x 2 = +4, so no reclaim can pass while a's gang of 16
# does not lower a's own term by 4 (a runs 2, 6 under: its term moves by at least |14 - 6| - 6 = 2).
# a's own priority-0 job on n3 beside 6 free GPUs frees one node; the gang needs two
BARE: list[Job] = [("b", 8, 0, 1, True, 0, -1.0), ("b", 2, 1, 1, True, 0, 1e9), ("c", 6, 1, 1, True, 0, 1e9),
                   ("c", 8, 2, 1, True, 0, 1e9), ("a", 2, 3, 1, True, 0, -1.0)]


def test_a_stop_on_a_node_the_gang_can_use_is_seen() -> None:
    """c's job on n2 ends: n2 is free and a's own job frees n3 -- the gang starts."""
    twin = _bare_failure(BARE)
    for s in twin.both:
        s.state.finish("j004")  # c's 8 GPUs on n2
    assert twin.search("j006") is not None


def test_a_protection_ending_on_a_node_of_the_teams_own_work_is_seen() -> None:
    """a's own priority-0 job on n2, beside 6 free GPUs, turns preemptible: a's own work now
    frees two nodes (a runs 4: its term moves by at least 6 - 4 = 2, no reclaim passes)."""
    running = [*BARE[:3], ("a", 2, 2, 1, True, 0, 200.0), BARE[4]]
    twin = _bare_failure(running)
    twin.change(("tick", 250))
    assert twin.search("j006") is not None


def test_the_proof_is_asked_again_when_the_accounting_changes_though_no_node_grew_enough() -> None:
    """b runs 16, 8 over, as two preemptible 8-GPU jobs; a runs 6 (its term moves by at least
    10, more than b's -8): bare.  a's protected 4 GPUs on n2 stop: n2 gets 4 free, still no
    room there for its own work, but a now runs 2 and its term moves by 2: taking b's job
    passes (2 - 8 < 0), and the reference finds it."""
    running: list[Job] = [("b", 8, 0, 1, True, 0, -1.0), ("b", 8, 1, 1, True, 0, -1.0), ("a", 4, 2, 1, True, 0, 1e9),
                          ("c", 4, 2, 1, True, 0, 1e9), ("a", 2, 3, 1, True, 0, -1.0)]
    twin = _bare_failure(running)
    for s in twin.both:
        s.state.finish("j003")  # a's protected job on n2
    assert twin.search("j006") is not None


def test_only_a_bare_failure_is_asked_through_its_proof() -> None:
    """A search that failed because free nodes would do (``FOR_NOW``, not bare: the free nodes
    are what it would take) is not kept by the bare proof: c's unallocated work then starts on
    one of the two free nodes -- a start, which grows nothing -- and a's gang may take it (the
    proof still holds: b's only donor job overshoots)."""
    running: list[Job] = [("b", 8, 0, 1, True, 0, -1.0), ("b", 2, 1, 1, True, 0, 1e9), ("c", 4, 1, 1, True, 0, 1e9),
                          ("a", 2, 1, 1, True, 0, -1.0)]
    twin = Twin(running, GANG_A)
    assert twin.search("j005") is None
    assert [f.why.bare for f in failed(twin.fast).entries()] == [False]
    twin.start(("c", 8, 3, 1, False, 0, 0.0))
    for s in twin.both:
        s.state.expire_protections(twin.now)  # unallocated work is preemptible at once
    assert twin.search("j005") is not None


def slicing_forced() -> Twin:
    """The state of the case below: a's job j008's search failed as the slicing rule forced it
    (a ``FOR_NOW``, not bare), kept by the fast walk."""
    running: list[Job] = [("a", 6, 0, 1, True, 0, -1.0), ("c", 8, 1, 1, True, 0, -1.0), ("c", 2, 2, 1, True, 0, 1e9),
                          ("d", 6, 2, 1, True, 0, 1e9), ("a", 2, 3, 1, True, 0, 1e9), ("d", 6, 3, 1, True, 0, 1e9)]
    twin = Twin(running, [("b", 8, 0, 1, True, 0, 1e9), ("a", 8, 0, 1, True, 1, 1e9)], NO_DEBUG)  # j007, j008
    assert twin.search("j008") is None
    assert [(f.why, f.why.bare, f.pick) for f in failed(twin.fast).entries()] == [(FOR_NOW, False, None)]
    return twin


def test_a_failure_the_slicing_rule_forced_is_not_kept_by_the_bare_proof() -> None:
    """Only a bare failure is handed to the proof (``was.why.bare`` in ``Kept.still_failed``).
    a runs what it is owed (8: borrowing): 6 preemptible priority-0 GPUs on n0 beside 2 free,
    and 2 protected on n3.  Its priority-1 job (not a debug job) finds its own work on n0, but
    the slicing rule forbids it (it would end after it, and b's waiting job, ranked ahead, fits
    there): the search again without slicing finds nothing, a ``FOR_NOW`` that is not bare.
    a's protected job on n3 stops: a runs 6, below what it is owed, so it may reclaim (c, over
    by 2, is a donor whose only preemptible job overshoots: no reclaim can pass, the proof
    holds) and it is no longer borrowing, so it may slice: it takes its own job on n0.  Handed
    to the proof, the old failure would be kept: n3, the one node that grew, cannot hold the
    job with its own and unallocated work."""
    twin = slicing_forced()
    for s in twin.both:
        s.state.finish("j005")  # a's protected 2 GPUs on n3
    assert twin.search("j008") == [("j001", "within-team")]
