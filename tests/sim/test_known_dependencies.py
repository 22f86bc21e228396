"""The simulator's dependency pass reads the jobs the scheduler knows -- submitted and not gone
-- as ``decide()`` reads its snapshot (sim/known_dependencies.py).

One node, team ``a`` running ``blocker`` on all of it; ``x`` (declared 0) and ``y`` (declared
1) wait for it, alike but for their priority; ``z`` (declared 5) depends on ``x``.  When the
node frees up, ``x`` goes first only if ``z`` is known by then: it raises ``x`` to 5
(``core.priority.propagate``).  A ``z`` submitted later lends nothing yet (before, the simulator
ran the pass over the whole workload, and ``x`` went first either way)."""

from __future__ import annotations

from allotment.core.jobs import JobSpec
from allotment.core.walk import FAST
from allotment.sim.known_dependencies import KnownDependencies
from allotment.sim.runner import simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config
from tests.sim.test_walk_equivalence import _run


def _jobs(z_submit: float) -> list[JobSpec]:
    def job(jid: str, submit: float, prio: int, work: float, deps: tuple[str, ...] = ()) -> JobSpec:
        return JobSpec(id=jid, submit=submit, account="a", gpus=8, work=work, user="u", min_runtime=600.0,
                       priority=prio, depends_on=deps)
    return [job("blocker", 0.0, 0, 1000.0), job("x", 10.0, 0, 1000.0), job("y", 10.0, 1, 1000.0),
            job("z", z_submit, 5, 600.0, ("x",))]


def _first_after_blocker(z_submit: float) -> str:
    config = make_config({"a": 1, "b": 1}, nodes=1)
    r = simulate(config, Workload.of(_jobs(z_submit), ()), keep_events=True)
    assert r.events is not None
    starts = [e.job for e in r.events if e.event == "start"]
    assert starts[0] == "blocker"
    return starts[1]


def test_a_dependant_submitted_later_lends_nothing_yet() -> None:
    assert _first_after_blocker(5000.0) == "y"


def test_a_known_dependant_raises_its_prerequisite() -> None:
    assert _first_after_blocker(500.0) == "x"


def test_decide_on_a_snapshot_agrees_whenever_the_dependant_comes() -> None:
    config = make_config({"a": 1, "b": 1}, nodes=1)
    for z_submit in (5.0, 500.0, 1000.0, 5000.0):
        sim, _ = _run((config, Workload.of(_jobs(z_submit), ())), "budgets", FAST, check_decide=True)
        assert sim.mismatches == [], z_submit


def test_a_dependant_that_goes_takes_its_lending_with_it() -> None:
    k = KnownDependencies()
    x = JobSpec(id="x", submit=0.0, account="a", gpus=1, work=60.0, user="u", priority=0)
    z = JobSpec(id="z", submit=0.0, account="a", gpus=1, work=60.0, user="u", priority=5, depends_on=("x",))
    k.arrive(z)  # before its prerequisite: linked when ``x`` comes
    assert k.refresh() == [] and k.dependants == {}
    k.arrive(x)
    assert sorted(k.refresh()) == ["x", "z"]
    assert [d.id for d in k.dependants["x"]] == ["z"] and k.declared_of(x) == 5
    the_map, its_list = k.dependants, k.dependants["x"]
    k.arrive(JobSpec(id="z2", submit=0.0, account="a", gpus=1, work=60.0, user="u", priority=1, depends_on=("x",)))
    assert sorted(k.refresh()) == ["x", "z", "z2"]
    assert [d.id for d in k.dependants["x"]] == ["z", "z2"] and k.declared_of(x) == 5
    # the same map, changed in place; the entry a new list (the core's memos compare it by identity)
    assert k.dependants is the_map and k.dependants["x"] is not its_list
    k.leave("z")
    k.leave("z2")
    assert k.refresh() == ["x"]
    assert k.dependants == {} and k.declared_of(x) == 0 and k.dependants is the_map
    other = JobSpec(id="w", submit=0.0, account="b", gpus=1, work=60.0, user="u", priority=9, depends_on=("x",))
    k.arrive(other)  # another team's dependant lends nothing
    k.refresh()
    assert k.dependants == {} and k.declared_of(x) == 0
