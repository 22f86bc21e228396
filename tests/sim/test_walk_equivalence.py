"""The speed-ups cannot change a decision, and neither can when passes run.

* the fast walk (``core.walk.FAST``) and the reference (``REFERENCE``, ``--no-skip``) take the
  same decisions at the same times and give the same metrics;
* extra passes at arbitrary times change nothing (a pass with nothing new decides nothing);
* the reconciler's ``decide()`` on a snapshot of the simulator's state takes the simulator's
  decision at that state.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context
from allotment.core.decide import decide
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot
from allotment.core.walk import FAST, REFERENCE, Fast, WalkPolicy
from allotment.sim.runner import WAKE, _Sim
from allotment.traces.scenarios.workload import Workload
from tests.sim.strategies import clusters, workloads

PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
Decided = list[tuple[float, tuple[Any, ...], tuple[Any, ...]]]


class RecordingSim(_Sim):
    """Records every pass that decided something; optionally adds passes at ``extra`` times and
    compares each pass with ``decide()`` on a snapshot of the state.  One simulated day, so that
    an extra pass after the last event does not move the end of the run."""

    def __init__(self, config: CompiledConfig, workload: Workload, mode: str, walk: WalkPolicy,
                 extra: tuple[float, ...] = (), check_decide: bool = False) -> None:
        cluster = config.largest_cluster()
        super().__init__(config, cluster, workload, 1.0, build_context(config, cluster, mode=mode), walk=walk)
        self.decided: Decided = []
        self.mismatches: list[str] = []
        self.check_decide = check_decide
        for t in extra:
            self._push(t, WAKE, None)

    def _pass(self, now: float) -> None:
        expected = decide(self.snapshot(now), self.ctx, now) if self.check_decide else None
        super()._pass(now)
        d = self.last_decisions
        if d.starts or d.preemptions:
            self.decided.append((now, d.starts, d.preemptions))
        if expected is not None and (expected.starts, expected.preemptions) != (d.starts, d.preemptions):
            self.mismatches.append(f"at {now}: decide {expected.starts} {expected.preemptions} vs sim {d.starts} {d.preemptions}")

    def snapshot(self, now: float) -> Snapshot:
        s = self.sched
        pool = s.pool
        nodes = tuple(NodeState(n, pool.total[i], pool.healthy[i], pool.gpu_type[i]) for i, n in enumerate(pool.names))
        running = tuple(
            RunningJob(r.spec, r.start, tuple((pool.names[i], g) for i, g in r.placement), r.allocated,
                       r.protected_until, r.done_before, r.evicted_by, r.eligible, r.yields)
            for r in s.running.values()
        )
        pending = tuple(PendingJob(p.spec, p.eligible, p.queued_since, p.done_work, p.evicted_by) for p in s.pending.values())
        usage = self.usage_at(now)
        return Snapshot(nodes, running, pending, {a: usage[a] for a in usage})


def _run(case: tuple[CompiledConfig, Workload], mode: str, walk: WalkPolicy, **kw: Any) -> tuple[RecordingSim, str]:
    config, workload = case
    sim = RecordingSim(config, workload, mode, walk, **kw)
    sim.run()
    metrics = json.dumps(sim.summary(), sort_keys=True)
    return sim, metrics


@st.composite
def cases(draw: st.DrawFn) -> tuple[CompiledConfig, Workload]:
    config = draw(clusters())
    return config, draw(workloads(config))


MODES = st.sampled_from(["budgets", "budgets", "priority", "fifo"])


@PROPS
@given(cases(), MODES)
def test_fast_walk_and_reference_take_identical_decisions(case: tuple[CompiledConfig, Workload], mode: str) -> None:
    fast, m_fast = _run(case, mode, FAST)
    ref, m_ref = _run(case, mode, REFERENCE)
    assert fast.decided == ref.decided
    assert m_fast == m_ref


@PROPS
@given(cases(), MODES, st.lists(st.integers(0, 8 * 3600), max_size=40))
def test_extra_passes_at_arbitrary_times_change_nothing(case: tuple[CompiledConfig, Workload], mode: str, extra: list[int]) -> None:
    base, m_base = _run(case, mode, FAST)
    more, m_more = _run(case, mode, FAST, extra=tuple(float(t) for t in extra))
    assert more.decided == base.decided
    assert m_more == m_base


@PROPS
@given(cases(), MODES)
def test_decide_on_a_snapshot_takes_the_simulators_decision(case: tuple[CompiledConfig, Workload], mode: str) -> None:
    _, workload = case
    assume(not any(j.depends_on for j in workload.jobs))  # the simulator propagates over the whole trace
    sim, _ = _run(case, mode, FAST, check_decide=True)
    assert sim.mismatches == []


def test_both_walks_and_decide_agree_where_debug_jobs_slice_their_own_team() -> None:
    # a's ceiling is 8 GPUs: a stream of debug jobs of a's priority takes the place of a's long
    # work and of one another (core.preemption.debug_slice), which the generated cases reach
    # only sometimes; this one always does
    from allotment.core.jobs import JobSpec
    from tests.core.builders import make_config

    config = make_config({"a": 1, "b": 1}, nodes=2, max_gpus={"a": 8})
    jobs = [JobSpec(id=f"long{i}", submit=0.0, account="a", gpus=4, work=6 * 3600.0, user="u", min_runtime=600.0)
            for i in range(2)]
    jobs += [JobSpec(id="b", submit=0.0, account="b", gpus=8, work=6 * 3600.0, user="u", min_runtime=600.0)]
    jobs += [JobSpec(id=f"d{i:02d}", submit=700.0 + 250.0 * i, account="a", gpus=1 + i % 4, work=300.0 + 97.0 * i,
                     user="u", min_runtime=300.0, resumable=i % 2 == 0, kind="debug") for i in range(16)]
    case = (config, Workload.of(jobs, ()))
    fast, m_fast = _run(case, "budgets", FAST, check_decide=True)
    ref, m_ref = _run(case, "budgets", REFERENCE)
    assert fast.decided == ref.decided and m_fast == m_ref
    assert fast.mismatches == []
    rules = [p.rule for _, _, pre in fast.decided for p in pre]
    assert "debug-slice" in rules


class CheckedFast(WalkPolicy):
    """The fast walk that never skips on ``may_visit`` but records where the candidate test
    (``must_visit``) would visit a queue the whole-queue test ruled out.  It wraps ``Fast``
    rather than inheriting from it: under the mypyc build ``Fast`` is a compiled class, which
    an interpreted class cannot subclass; ``WalkPolicy`` allows interpreted subclasses."""

    def __init__(self) -> None:
        self.inner = Fast()
        self.name = self.inner.name
        self.reuses = self.inner.reuses
        self.ruled_out = False
        self.wrong = 0
        self.tested = 0

    def may_visit(self, *args: Any) -> bool:
        self.ruled_out = not self.inner.may_visit(*args)
        self.tested += self.ruled_out
        return True

    def must_visit(self, *args: Any) -> bool:
        got = self.inner.must_visit(*args)
        self.wrong += self.ruled_out and got
        return got


@PROPS
@given(cases(), MODES)
def test_the_whole_queue_test_never_rules_out_a_queue_the_candidate_test_would_visit(
    case: tuple[CompiledConfig, Workload], mode: str
) -> None:
    walk = CheckedFast()
    _run(case, mode, walk)
    assert walk.wrong == 0
