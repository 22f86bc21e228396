"""The simulator's dependency pass over the known jobs, as the runs of chains come and go
(``sim.known_dependencies``): after every refresh its map and raised priorities are the pass
``decide()`` runs over the same jobs, and the fast walk's merged parts -- extended by one job
where a run joined the end of its chain (``DependantList.grown``), merged again otherwise --
score every job as the reference's dependant-by-dependant reading does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.inherited import DependantFactsCache
from allotment.core.jobs import JobSpec
from allotment.core.priority import Scorer, dependency_pass
from allotment.core.state import Pend
from allotment.sim.known_dependencies import KnownDependencies
from tests.core.builders import make_config


@st.composite
def _histories(draw: st.DrawFn) -> list[tuple[str, JobSpec | str]]:
    """Jobs that mostly extend a chain (each waits for the last run of its stream), sometimes
    wait for an older or a later job, or another team's; between them jobs leave -- a chain's
    first (a run ended) or any other (cancelled) -- and refreshes (a pass), after which the jobs
    are scored or not: parts kept for a list two versions old must not be extended."""
    n = draw(st.integers(2, 30))
    steps: list[tuple[str, JobSpec | str]] = []
    last: dict[int, str] = {}
    alive: list[str] = []
    for i in range(n):
        stream = draw(st.integers(0, 2))
        jid = f"j{i:02d}"
        shape = draw(st.sampled_from(["chain", "chain", "chain", "chain", "older", "later", "none"]))
        if shape == "chain" and stream in last:
            deps: tuple[str, ...] = (last[stream],)
        elif shape == "older" and i:
            deps = (f"j{draw(st.integers(0, i - 1)):02d}",)
        elif shape == "later":
            deps = (f"j{draw(st.integers(i + 1, n + 1)):02d}",)
        else:
            deps = ()
        last[stream] = jid
        steps.append(("arrive", JobSpec(
            id=jid, submit=0.0, account=draw(st.sampled_from(["a", "a", "a", "b"])), gpus=1,
            work=draw(st.sampled_from([600.0, 3600.0])), user=f"u{stream}", priority=draw(st.integers(0, 3)),
            deadline=draw(st.one_of(st.none(), st.none(), st.none(), st.just(9000.0))), depends_on=deps)))
        alive.append(jid)
        if draw(st.integers(0, 3)) == 0:
            gone = alive.pop(0 if draw(st.booleans()) else draw(st.integers(0, len(alive) - 1)))
            steps.append(("leave", gone))
        if draw(st.booleans()):  # a pass, which scores the jobs or not (a chain's head may not be queued)
            steps.append(("refresh", draw(st.sampled_from(["score", ""]))))
    steps.append(("refresh", "score"))
    return steps


@settings(max_examples=300, deadline=None)
@given(_histories())
def test_the_known_jobs_pass_and_its_grown_lists_score_as_the_reference(steps: list[tuple[str, JobSpec | str]]) -> None:
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2), "c1")
    k = KnownDependencies()
    users = UserGpus()
    facts = DependantFactsCache(users)  # one for the whole run, as the scheduler keeps it
    for t, (what, arg) in enumerate(steps):
        if what == "arrive":
            assert isinstance(arg, JobSpec)
            k.arrive(arg)
        elif what == "leave":
            assert isinstance(arg, str)
            k.leave(arg)
        else:
            k.refresh()
            want = dependency_pass(list(k.known.values()))
            assert {j: [s.id for s in got] for j, got in k.dependants.items()} == {
                j: [s.id for s in got] for j, got in want.dependants.items()}
            assert {j: k.declared_of(s) for j, s in k.known.items()} == {j: want.declared[j] for j in k.known}
            if not arg:
                continue
            pends = [Pend(s, 0.0, 0.0, 0.0, s.priority, None, s.account) for s in k.known.values()]
            args = (ctx, 100.0 * t, 1.0, 4, users, {}, k.dependants)
            kept = Scorer(*args, memo=True, facts=facts)  # type: ignore[arg-type]
            ref = Scorer(*args)  # type: ignore[arg-type]
            assert [kept._inherited(p) for p in pends] == [ref._inherited(p) for p in pends]
            fresh = DependantFactsCache(users)  # each job's merged parts, kept against made anew
            for root in sorted(k.dependants):
                c, want_c = (f.closure(root, k.dependants, kept.k, {}, None) for f in (facts, fresh))
                assert sorted(c.timeless) == sorted(want_c.timeless)
                assert sorted(d.jid for d in c.dated) == sorted(d.jid for d in want_c.dated)
