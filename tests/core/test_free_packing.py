"""Free packing (``core.free_packing``, with ``Policy.consolidate`` on): a blocked unallocated
single-node job that consolidation cannot start takes a node whose free GPUs and *smaller*
movable unallocated work make room for it; the smaller work requeues.  Never allocated work,
never work as large as the job, so no two jobs evict each other back and forth."""

from __future__ import annotations

import random

from allotment.compile.model import Policy
from allotment.core.free_packing import plan_free_packing
from allotment.core.jobs import JobSpec
from allotment.core.placement import NodePool
from allotment.core.snapshot import NodeState
from allotment.core.state import Run
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config
from tests.core.fragmenting import fragmenting_case

HOUR = 3600.0


def _run(*, b_gpus: int = 2, b_min_runtime: float = 0.0, consolidate: bool = True, reference: bool = False) -> SimResult:
    # two 8-GPU nodes.  At 0: A (4 GPUs, funded, not resumable) and B (``b_gpus``, resumable,
    # checkpoint every 600 s; minimum runtime 0 is free work) go on n000; C (8 GPUs, funded,
    # not resumable) takes n001.  At 1,000 s P (4 GPUs, free work) arrives: n000 has
    # 8 - 4 - b_gpus free, n001 none, so no hole takes B and consolidation cannot start P
    jobs = [
        JobSpec(id="A", submit=0.0, account="a", gpus=4, work=24 * HOUR, min_runtime=600.0, user="u", resumable=False),
        JobSpec(id="B", submit=1.0, account="b", gpus=b_gpus, work=24 * HOUR, min_runtime=b_min_runtime, user="u",
                checkpoint_interval=600.0),
        JobSpec(id="C", submit=2.0, account="a", gpus=8, work=24 * HOUR, min_runtime=600.0, user="u", resumable=False),
        JobSpec(id="P", submit=1000.0, account="b", gpus=4, work=4 * HOUR, min_runtime=0.0, user="u"),
    ]
    config = make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(consolidate=consolidate))
    return simulate(config, Workload.of(jobs, ()), keep_events=True, days=2.0, reference=reference)


def _starts(res: SimResult, job: str) -> list[tuple[float, tuple[str, ...]]]:
    return [(e.t, tuple(e.nodes or ())) for e in res.events if e.event == "start" and e.job == job]


def _preempts(res: SimResult) -> list[tuple[float, str, str, str]]:
    return [(e.t, e.job, e.by or "", e.rule or "") for e in res.events if e.event == "preempt"]


def test_a_blocked_unallocated_job_takes_a_node_from_smaller_unallocated_work() -> None:
    # without consolidation on, P waits for a natural end (a day) beside 2 idle GPUs
    assert _starts(_run(consolidate=False), "P")[0][0] >= 24 * HOUR
    for reference in (False, True):  # the fast walk's bound admits the visit; both decide alike
        res = _run(reference=reference)
        assert _starts(res, "P") == [(1000.0, ("n000",))]
        assert _preempts(res) == [(1000.0, "B", "P", "free-packing")]
        # B requeued and waits: no node has 2 free GPUs while A, C and P run (P for 4 hours)
        b = [t for t, _ in _starts(res, "B")]
        assert b[0] < 1000.0 and all(t >= 4 * HOUR for t in b[1:])


def test_work_as_large_as_the_blocked_job_is_never_evicted() -> None:
    # B of 4 GPUs, P of 4: a swap would only trade one for the other (and could turn back)
    res = _run(b_gpus=4)
    assert _starts(res, "P")[0][0] >= 24 * HOUR
    assert not _preempts(res)


def test_funded_work_is_never_evicted_for_free_work() -> None:
    # B funded (past its 600 s protection at 1,000 s): a funded team's progress is not thrown
    # away for work nobody pays for; both walks
    for reference in (False, True):
        res = _run(b_min_runtime=600.0, reference=reference)
        assert _starts(res, "P")[0][0] >= 24 * HOUR
        assert not _preempts(res)


def _pool(jobs: dict[str, tuple[int, int, bool]]) -> tuple[NodePool, dict[str, Run]]:
    # three 8-GPU nodes; jobs: id -> (node, GPUs, allocated), each started at 0, resumable,
    # checkpointing every 100 s
    pool = NodePool(tuple(NodeState(f"n{i}", 8) for i in range(3)))
    running: dict[str, Run] = {}
    for jid, (node, g, allocated) in jobs.items():
        spec = JobSpec(id=jid, submit=0.0, account="a", gpus=g, work=HOUR, min_runtime=0.0, user="u",
                       checkpoint_interval=100.0)
        pl = ((node, g),)
        pool.allocate(jid, pl)
        running[jid] = Run(spec, 0.0, pl, allocated, 0.0, 0.0, 0, None)
    return pool, running


def test_the_node_that_throws_away_least_work_is_taken_and_only_nodes_with_free_gpus() -> None:
    # n0: x (2) + y (4) + 2 free; n1: z (6) + 2 free; n2: w (8), no free GPU.  For 4 GPUs:
    # on n0, y is as large as the job (never taken), x gives 2 + 2 = 4; on n1, z is larger.
    # So n0, evicting x alone
    pool, running = _pool({"x": (0, 2, False), "y": (0, 4, False), "z": (1, 6, False), "w": (2, 8, False)})
    got = plan_free_packing(pool, running, lambda r: True, None, 4, None, frozenset(), 150.0)
    assert got is not None and (got.target, got.victims) == (0, ("x",))
    # a closed node (reserved, or the session pool) is never taken
    assert plan_free_packing(pool, running, lambda r: True, None, 4, None, frozenset({0}), 150.0) is None
    # for 8 GPUs: n0 gives 2 + x + y = 8, n1 2 + z = 8, each throwing away 6 GPUs x 50 s
    # since the last checkpoint and evicting 6 GPUs: the lower index, n0; n2 has no free GPU
    got = plan_free_packing(pool, running, lambda r: True, None, 8, None, frozenset(), 150.0)
    assert got is not None and got.target == 0 and sorted(got.victims) == ["x", "y"]
    # allocated work is never a victim
    pool, running = _pool({"x": (0, 2, True), "y": (0, 4, True), "z": (1, 6, True), "w": (2, 8, True)})
    assert plan_free_packing(pool, running, lambda r: True, None, 8, None, frozenset(), 150.0) is None


def test_no_two_jobs_evict_each_other_back_and_forth_on_the_fragmenting_cases() -> None:
    # the walk properties' fragmenting cases (tests/sim/test_walk_equivalence.py) with their
    # free work: every free-packing eviction is of a job strictly smaller than the one it
    # makes room for, so no pair can swap back; and the cases do exercise the rule
    packs = 0
    for seed in range(20):
        config, workload = fragmenting_case(random.Random(seed))
        res = simulate(config, workload, keep_events=True, days=1.0)
        gpus = {e.job: e.gpus for e in res.events if e.event == "submit"}
        pairs = set()
        for e in res.events:
            if e.event == "preempt" and e.rule == "free-packing":
                packs += 1
                assert e.by is not None and gpus[e.by] > gpus[e.job]
                pairs.add((e.by, e.job))
        assert not {(b, a) for a, b in pairs} & pairs
    assert packs >= 1
