"""The fast walk's tighter bound on the nodes a victim search may free (``victims._owners``):
its own team's preemptible work is left out of ``_freeable_hosts``'s bound, of the bare and
lasting failures' re-reads and of the kept picks' re-reads when no classification could take
any of it -- none of that work has a lower declared priority than the requester
(``within-team``) and the requester is not a debug job (``debug-slice``).  Against the
reference, which keeps the plain bound: the property drives one state under both walks
(``memo_twin``) through starts, stops, ticks, health, usage and queued jobs, with declared
priorities 0-2 and with and without debug jobs, and asks every pending job's searches after
each change; the named cases break one guard each."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.core.preemption import victims
from allotment.core.preemption.terms import Terms
from allotment.core.preemption.victims import _owners
from allotment.core.preemption.view import VictimView
from tests.core.memo_twin import CTX, Change, Job, Twin, change, config, failed, job

# minimum runtime 600 s: a debug job under the default threshold (900 s), not under this one
NO_DEBUG = build_context(config(debug_threshold_s=60), "c1")



# a team's gangs of two whole nodes, any declared priority: their searches read the bound most
gang = st.tuples(st.sampled_from("abcd"), st.just(8), st.integers(0, 3), st.just(2), st.just(True),
                 st.integers(0, 2), st.just(1e9))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.booleans(), st.lists(job, min_size=3, max_size=10), st.lists(gang | job, min_size=1, max_size=4),
       st.lists(change, max_size=12))
def test_the_bound_without_untakeable_own_work_answers_what_the_search_does(
    debug: bool, running: list[Job], pending: list[Job], changes: list[Change]
) -> None:
    twin = Twin(running, pending, CTX if debug else NO_DEBUG)
    twin.replay(changes)


# a's preemptible priority-0 work on every node, 8 GPUs each: a runs 32, four times what it is owed
A_EVERYWHERE: list[Job] = [("a", 8, i, 1, True, 0, -1.0) for i in range(4)]


def test_a_search_whose_team_holds_the_nodes_with_work_it_may_not_take_reads_no_job(monkeypatch: object) -> None:
    """a's gang of priority 0 cannot take a's own priority-0 work, and nothing else is there:
    the fast walk's bound says so before a single job is classified (before stop 44, every
    node passed it and each search classified every job there to find nothing)."""
    twin = Twin(A_EVERYWHERE, [("a", 8, 0, 2, True, 0, 1e9)], NO_DEBUG)
    jid = sorted(twin.fast.state.pending)[-1]
    classified: list[str] = []
    plain = victims._Classifier._classify

    def counting(self: victims._Classifier, j: str) -> object:
        if self.v.memo is not None:
            classified.append(j)
        return plain(self, j)

    monkeypatch.setattr(victims._Classifier, "_classify", counting)  # type: ignore[attr-defined]
    assert twin.search(jid) is None
    assert classified == []


def test_own_work_of_a_lower_priority_stays_in_the_bound() -> None:
    """The same state, a's gang of priority 1: a's own priority-0 work is takeable
    (``within-team``) and frees two nodes."""
    twin = Twin(A_EVERYWHERE, [("a", 8, 0, 2, True, 1, 1e9)], NO_DEBUG)
    jid = sorted(twin.fast.state.pending)[-1]
    got = twin.search(jid)
    assert got is not None and {rule for _, rule in got} == {"within-team"}  # type: ignore[attr-defined]


# n0: a's 4 GPUs (protected for ``protect``) beside c's protected 4; n1-n3 full of other teams'
# work, d's preemptible (d runs what it is owed: no donor)
def _debug_case(protect: float) -> tuple[Twin, str]:
    running: list[Job] = [("a", 4, 0, 1, True, 0, protect), ("c", 4, 0, 1, True, 0, 1e9), ("b", 8, 1, 1, True, 0, 1e9),
                          ("c", 8, 2, 1, True, 0, 1e9), ("d", 8, 3, 1, True, 0, -1.0)]
    twin = Twin(running, (), CTX)
    # a debug job of a (minimum runtime 600 s, under 900 s) of one minute's work: it would end
    # before a's job on n0, of the same priority
    spec = JobSpec(id="p", submit=0.0, account="a", gpus=4, work=60.0, user="u0", min_runtime=600.0, priority=0)
    for s in twin.both:
        s.state.add_pending(spec, twin.now, twin.now)
    return twin, "p"


def test_a_debug_job_keeps_its_own_teams_work_in_the_bound() -> None:
    """A debug job may take its own team's work of the same priority (``debug-slice``): that
    work stays in the bound though none of it is of a lower priority."""
    twin, jid = _debug_case(-1.0)
    assert twin.search(jid) == [("j001", "debug-slice")]


def test_a_debug_jobs_lasting_failure_is_searched_again_when_its_teams_work_turns_preemptible() -> None:
    """The debug job's search fails for good while a's job is protected (nothing it may take
    anywhere); its protection ends within the pass inputs: n0 grew, and the re-read of the
    grown nodes (``still_fails``) must count a's work there, which the debug job may take."""
    twin, jid = _debug_case(30.0)
    assert twin.search(jid) is None
    assert [f.why.lasting for f in failed(twin.fast).entries()] == [True]
    twin.change(("tick", 40))
    assert twin.search(jid) == [("j001", "debug-slice")]


def test_the_reference_keeps_the_plain_bound() -> None:
    """Without the fast walk's memo the owners are ``Terms.owners``, the search's plain bound."""
    twin = Twin(A_EVERYWHERE, [("a", 8, 0, 2, True, 0, 1e9)], NO_DEBUG)
    for s, want in ((twin.ref, {"", "a"}), (twin.fast, {""})):
        pi = s.inputs(twin.now, twin.usage)
        p = s.state.pending[sorted(s.state.pending)[-1]]
        v = s.starting.victim_view(pi)
        assert isinstance(v, VictimView)
        t = Terms(v, p, pi.owed, pi.measure, True, False, False)
        assert _owners(v, p, t, None) == want
