"""The speed-ups cannot change a decision, and neither can when passes run.

* the fast walk (``core.walk.FAST``) and the reference (``REFERENCE``, ``--no-skip``) take the
  same decisions at the same times and give the same metrics;
* extra passes at arbitrary times change nothing (a pass with nothing new decides nothing);
* the reconciler's ``decide()`` on a snapshot of the simulator's state takes the simulator's
  decision at that state.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.compile.model import CompiledConfig, Policy
from allotment.core import candidates, priority
from allotment.core.context import build_context
from allotment.core.decide import decide
from allotment.core.snapshot import NodeState, PendingJob, RunningJob, Snapshot
from allotment.core.walk import FAST, REFERENCE, UNKEPT, Fast, WalkPolicy
from allotment.sim.runner import WAKE, _Sim
from allotment.traces.scenarios.workload import Workload
from tests.core.fragmenting import fragmenting_case
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
        if expected is not None and (expected.starts, expected.preemptions, expected.notices) != (
            d.starts, d.preemptions, d.notices
        ):
            self.mismatches.append(f"at {now}: decide {expected.starts} {expected.preemptions} {expected.notices} "
                                   f"vs sim {d.starts} {d.preemptions} {d.notices}")

    def snapshot(self, now: float) -> Snapshot:
        s = self.sched
        pool = s.state.pool
        nodes = tuple(NodeState(n, pool.total[i], pool.healthy[i], pool.gpu_type[i]) for i, n in enumerate(pool.names))
        running = tuple(
            RunningJob(r.spec, r.start, tuple((pool.names[i], g) for i, g in r.placement), r.allocated,
                       r.protected_until, r.done_before, r.evicted_by, r.eligible, r.yields, s.state.noticed.get(r.jid))
            for r in s.state.running.values()
        )
        pending = tuple(PendingJob(p.spec, p.eligible, p.queued_since, p.done_work, p.evicted_by) for p in s.state.pending.values())
        usage = self.usage_at(now)
        waiting = tuple(self.by_id[j] for j in sorted(self.held))  # submitted, held for their dependencies
        return Snapshot(nodes, running, pending, {a: usage[a] for a in usage}, kept_holds=s.kept_holds(),
                        waiting=waiting)


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
@given(st.randoms(use_true_random=False))
def test_both_walks_and_decide_agree_where_consolidation_moves_work(rng: Any) -> None:
    # small clusters fragmented by small jobs, ``consolidate`` on (core.consolidation): the
    # fast walk's bound must admit every visit that moves work, and decide() must move the same
    case = fragmenting_case(rng)
    fast, m_fast = _run(case, "budgets", FAST, check_decide=True)
    ref, m_ref = _run(case, "budgets", REFERENCE)
    assert fast.decided == ref.decided
    assert m_fast == m_ref
    assert fast.mismatches == []


@PROPS
@given(cases(), MODES)
def test_fast_walk_and_reference_take_identical_decisions(case: tuple[CompiledConfig, Workload], mode: str) -> None:
    fast, m_fast = _run(case, mode, FAST)
    ref, m_ref = _run(case, mode, REFERENCE)
    assert fast.decided == ref.decided
    assert m_fast == m_ref


@PROPS
@given(cases(), MODES)
def test_fast_walk_and_reference_decide_identically_with_every_queue_merged(
    case: tuple[CompiledConfig, Workload], mode: str
) -> None:
    # every queue, however short, through the lazy merge (core.fairness_merge)
    saved = candidates.SMALL
    candidates.SMALL = 0
    try:
        fast, m_fast = _run(case, mode, FAST)
    finally:
        candidates.SMALL = saved
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
    # with dependencies too: the simulator's dependency pass reads the jobs decide() would
    # (sim/known_dependencies.py)
    sim, _ = _run(case, mode, FAST, check_decide=True)
    assert sim.mismatches == []


def _victim_rules_where_both_walks_and_decide_agree(case: tuple[CompiledConfig, Workload]) -> list[str]:
    """Run ``case`` on both walks (and ``decide()`` beside the fast one), assert they agree, and
    return the rules of every preemption taken, for the caller to check its rule was reached."""
    fast, m_fast = _run(case, "budgets", FAST, check_decide=True)
    ref, m_ref = _run(case, "budgets", REFERENCE)
    assert fast.decided == ref.decided and m_fast == m_ref
    assert fast.mismatches == []
    return [p.rule for _, _, pre in fast.decided for p in pre]


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
    rules = _victim_rules_where_both_walks_and_decide_agree((config, Workload.of(jobs, ())))
    assert "debug-slice" in rules


def test_both_walks_and_decide_agree_where_overdraft_jobs_yield_to_capped_work() -> None:
    # a's ceiling is 8 GPUs, with 8 more for debug jobs admitted by their protection
    # (core.debug_overdraft): a stream of debug jobs longer than the threshold runs beyond it
    # and yields to a's batch work once past its protection, which the generated cases reach
    # only sometimes; this one always does
    from allotment.compile.model import Policy
    from allotment.core.jobs import JobSpec
    from tests.core.builders import make_config

    config = make_config({"a": 1, "b": 1}, nodes=3, max_gpus={"a": 8},
                         policy=Policy(debug_over_cap=8, debug_over_cap_admits="protection"))
    jobs = [JobSpec(id=f"long{i}", submit=0.0, account="a", gpus=4, work=3 * 3600.0 + 1800.0 * i, user="u",
                    min_runtime=3600.0) for i in range(2)]
    jobs += [JobSpec(id="b", submit=0.0, account="b", gpus=8, work=6 * 3600.0, user="u", min_runtime=600.0)]
    jobs += [JobSpec(id=f"batch{i}", submit=600.0 * i, account="a", gpus=1 + i % 3, work=2 * 3600.0, user="u",
                     min_runtime=1800.0) for i in range(6)]
    jobs += [JobSpec(id=f"d{i:02d}", submit=500.0 + 400.0 * i, account="a", gpus=1 + i % 4, work=1200.0 + 97.0 * i,
                     user="u", min_runtime=300.0, resumable=i % 2 == 0, priority=2, kind="debug") for i in range(16)]
    rules = _victim_rules_where_both_walks_and_decide_agree((config, Workload.of(jobs, ())))
    assert "overdraft-yield" in rules


# (id, submit, account, GPUs, work, user, minimum runtime, resumable, priority, deadline) of a case
# the property found: a reclaim in decide()'s scheduler, built from a snapshot, requeues a victim
# into a queue new to it mid-round (the round's integer order must be re-dealt, core.scheduler)
_REDEAL_JOBS = (
    ("j020", 2, "t0", 1, 60, "u1", 0, False, 1, None), ("j021", 2, "t0", 1, 60, "u1", 0, False, 1, None),
    ("j014", 14, "t1", 1, 5259, "u1", 300, False, 1, None), ("j017", 43, "t0", 2, 21600, "u2", 0, True, 0, None),
    ("j019", 128, "t1", 1, 18919, "u3", 1800, True, 1, None), ("j018", 240, "t1", 4, 1388, "u3", 300, False, 1, 3641),
    ("j015", 264, "t1", 4, 2175, "u1", 0, True, 0, None), ("j005", 274, "t0", 4, 559, "u1", 0, True, 0, None),
    ("j009", 286, "t0", 4, 1500, "u1", 7200, True, 2, None), ("j004", 339, "t1", 3, 512, "u1", 7200, False, 1, 3600),
    ("j007", 339, "t0", 2, 1244, "u1", 1800, True, 2, None), ("j010", 392, "t0", 4, 833, "u1", 300, True, 0, 15757),
    ("j013", 593, "t1", 4, 232, "u1", 7200, True, 1, None), ("j003", 616, "t0", 2, 3828, "u1", 0, False, 0, None),
    ("j006", 1060, "t0", 2, 2083, "u1", 0, False, 1, 1490), ("j016", 1126, "t2", 3, 662, "u3", 7200, False, 0, None),
    ("j001", 1979, "t0", 4, 488, "u1", 0, True, 0, None), ("j000", 2521, "t0", 2, 1008, "u1", 7200, False, 0, None),
    ("j011", 4910, "t0", 4, 6348, "u1", 7200, True, 1, None), ("j012", 6454, "t1", 3, 18506, "u2", 1800, False, 0, None),
    ("j002", 6996, "t0", 3, 8812, "u1", 0, True, 0, None), ("j008", 9904, "t0", 1, 124, "u2", 0, True, 2, None),
)


def test_decide_agrees_where_a_victim_is_requeued_into_a_queue_new_to_its_scheduler() -> None:
    from allotment.compile.model import Policy, PriorityWeights
    from allotment.core.jobs import JobSpec, NodeEvent
    from tests.core.builders import make_config

    policy = Policy(lookback_s=86400, min_runtime_cap_s=3600, default_min_runtime_s=600, debug_threshold_s=900,
                    reconcile_interval_s=0, human_drain_threshold_s=1800, fairshare_period_s=60,
                    reclaim_hysteresis=0.1, queue_depth=8,
                    priority_weights=PriorityWeights(deadline=1.0, fit=0.5, age=1.0, fairness=0.5, age_cap_s=86400,
                                                     declared=1.0))
    config = make_config({"t0": 4, "t1": 2, "t2": 2}, nodes=1, gpus_per_node=4, policy=policy)
    jobs = [JobSpec(id=i, submit=float(t), account=a, gpus=g, work=float(w), user=u, min_runtime=float(mr),
                    resumable=res, priority=prio, deadline=None if dl is None else float(dl))
            for i, t, a, g, w, u, mr, res, prio, dl in _REDEAL_JOBS]
    health = [(1143.0, "unhealthy"), (2080.0, "unhealthy"), (2140.0, "healthy"), (5655.0, "unhealthy"),
              (5715.0, "healthy"), (5905.0, "healthy")]
    case = (config, Workload.of(jobs, [NodeEvent(time=t, node="n000", state=h) for t, h in health]))
    sim, _ = _run(case, "budgets", FAST, check_decide=True)
    assert sim.decided and sim.mismatches == []


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

    def rest_may_take(self, *args: Any) -> bool:
        return self.inner.rest_may_take(*args)


@PROPS
@given(cases(), MODES)
def test_the_whole_queue_test_never_rules_out_a_queue_the_candidate_test_would_visit(
    case: tuple[CompiledConfig, Workload], mode: str
) -> None:
    walk = CheckedFast()
    _run(case, mode, walk)
    assert walk.wrong == 0


def _derived(case: tuple[CompiledConfig, Workload], mode: str, links: list[bool]) -> tuple[CompiledConfig, Workload]:
    """``case`` under the ``mode`` derivation, with dependencies, its jobs chained team by team
    where ``links`` says (each on the one before it of its team: ``ai2``'s streams in small)."""
    config, workload = case

    def derive(p: Policy) -> Policy:
        return replace(p, priority_weights=replace(p.priority_weights, mode=mode, dependencies=True))

    config = replace(config, policy=derive(config.policy),
                     cluster_policies={k: derive(v) for k, v in config.cluster_policies.items()})
    last: dict[str, str] = {}
    jobs = []
    for i, j in enumerate(sorted(workload.jobs, key=lambda j: (j.submit, j.id))):
        before = last.get(j.account)
        if before is not None and links[i % len(links)]:
            j = replace(j, depends_on=(before,))
        last[j.account] = j.id
        jobs.append(j)
    return config, Workload.of(jobs, workload.node_events)


@PROPS
@given(cases(), st.sampled_from(["adaptive", "fifo"]), st.lists(st.booleans(), min_size=1, max_size=8),
       st.sampled_from([0, 2, 16]))
def test_the_fast_walk_decides_as_the_reference_outside_the_fixed_derivation(
    case: tuple[CompiledConfig, Workload], mode: str, links: list[bool], merge_from: int
) -> None:
    # adaptive and fifo keep no orders (UNKEPT), but read what a prerequisite inherits from its
    # dependants' merged groups (core.inherited), the reference from each dependant
    case = _derived(case, mode, links)
    saved = priority.MERGE_FROM
    priority.MERGE_FROM = merge_from  # small workloads: merge short tails too
    try:
        fast, m_fast = _run(case, "budgets", FAST)
    finally:
        priority.MERGE_FROM = saved
    ref, m_ref = _run(case, "budgets", REFERENCE)
    assert fast.sched.walk is UNKEPT and ref.sched.walk is REFERENCE
    assert fast.decided == ref.decided
    assert m_fast == m_ref
