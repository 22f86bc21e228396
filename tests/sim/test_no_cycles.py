"""A simulated run makes no reference cycles, so ``simulate`` may keep the cyclic collector off
while it runs (``config.bulk.bulk_allocation``: a full collection walks the whole, growing heap,
17% of a 30-day run's CPU when it was on).  A cycle made per pass would then live until the run
ends: thousands of objects per simulated day.  Drawing the workload and building the run are
in bulk too, so they are checked with it.  This runs a day of the ai2 scenario with the
collector off and asks it what it would have found; the message names the types, the cycle's
maker is then easy to find (a bound method kept on its own object, a closure that calls itself)."""

from __future__ import annotations

import datetime as dt
import gc
from collections import Counter

import pytest

from allotment.compile.compiler import compile_repo
from allotment.core.context import build_context
from allotment.core.walk import FAST, REFERENCE, WalkPolicy
from allotment.sim.runner import _Sim
from allotment.sim.workloads import from_scenario
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize(("policy", "walk"), [("budgets", FAST), ("budgets", REFERENCE), ("priority", FAST)])
def test_a_day_of_passes_leaves_no_cyclic_garbage(policy: str, walk: WalkPolicy) -> None:
    config = compile_repo(REPO_ROOT, dt.date(2026, 11, 30))
    cluster = config.largest_cluster()
    ctx = build_context(config, cluster, mode=policy)
    # once before the window: a first draw imports the scenario's modules, and a slots dataclass
    # leaves the class it replaced behind as garbage once per process, not per run
    from_scenario(config, "ai2", cluster=cluster, days=0.01, seed=1)
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:  # drawing the workload and building the run are in bulk too (``from_scenario``, ``simulate``)
        w = from_scenario(config, "ai2", cluster=cluster, days=1, seed=1)
        sim = _Sim(config, cluster, w, 1.0, ctx, walk=walk)
        sim.run()
        assert sim.sched.state.running or sim.sched.state.pending  # the day did real work
        gc.collect()  # ``sim`` is alive: only garbage made and dropped during the run is found
        kinds = Counter(type(o).__qualname__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    assert not kinds, f"a run made reference cycles: {kinds.most_common(8)}"
