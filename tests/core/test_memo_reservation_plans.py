"""The reservation-plan memo (``Scheduler._plan_hold``: where and when a job of a shape -- GPU
type, nodes, GPUs per node -- could start off the nodes better-ranked holds took, kept by the
fast walk while the state version is the same, its start clamped to ``now``) against the
reference, which plans every time (``reservation.plan_hold``): after any sequence of starts,
stops, ticks, health changes and arrivals, both plan the same nodes and the same start for every
waiting job, off any set of taken nodes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.decide import build_scheduler
from allotment.core.jobs import JobSpec
from allotment.core.snapshot import NodeState, Snapshot
from allotment.core.walk import FAST, REFERENCE
from tests.core.memo_twin import CTX, N_NODES, T0, USAGES, Change, Job, Twin, change, job

TAKEN = st.lists(st.frozensets(st.integers(0, N_NODES - 1), max_size=2), min_size=1, max_size=3)


def _plans(twin: Twin, taken: list[frozenset[int]]) -> list[object]:
    out = []
    for s in twin.both:
        pi = s.inputs(twin.now, twin.usage)
        got: list[object] = []
        for jid in sorted(s.state.pending):
            p = s.state.pending[jid]
            if p.n == 0:
                continue
            qk = s.starting.queue_key(p.queue, pi)
            for t in taken:
                h = s._plan_hold(p, qk, twin.now, t)
                got.append(None if h is None else (h.holder, sorted(h.nodes), h.at, h.queue_key))
        out.append(got)
    assert out[0] == out[1]
    return out[0]


@settings(max_examples=150, deadline=None)
@given(st.lists(job, max_size=8), st.lists(job, min_size=1, max_size=4), TAKEN, st.lists(change, max_size=12))
def test_the_kept_plans_are_the_planned_ones_after_any_changes(running: list[Job], pending: list[Job],
                                                               taken: list[frozenset[int]], changes: list[Change]) -> None:
    twin = Twin(running, pending)
    _plans(twin, taken)
    for c in changes:
        twin.change(c)
        _plans(twin, taken)


def test_a_job_ending_early_moves_the_plan_of_a_gang() -> None:
    # a gang of 2 x 8 waits for two nodes, all busy until their jobs end an hour on; two stop now
    twin = Twin([("b", 8, 0, 1, True, 0, 1e9), ("b", 8, 1, 1, True, 0, 1e9), ("b", 8, 2, 1, True, 0, 1e9),
                 ("b", 8, 3, 1, True, 0, 1e9)], [("a", 8, 0, 2, True, 0, 1e9)])
    before = _plans(twin, [frozenset()])
    twin.change(("stop", 0))
    twin.change(("stop", 0))
    assert _plans(twin, [frozenset()]) != before


def test_the_plan_starts_no_earlier_than_now_as_time_passes() -> None:
    twin = Twin([("b", 4, 0, 1, True, 0, 1e9)], [("a", 8, 0, 2, True, 0, 1e9)])
    _plans(twin, [frozenset()])
    twin.change(("tick", 40))  # same state version: the kept plan, its start clamped to the new now
    _plans(twin, [frozenset()])


def test_jobs_of_the_same_shape_on_other_gpu_types_get_their_own_plans() -> None:
    nodes = (NodeState("n0", 8, gpu_type="h100"), NodeState("n1", 8, gpu_type="h100"),
             NodeState("n2", 8, gpu_type="a100"), NodeState("n3", 8, gpu_type="a100"))
    got = []
    for walk in (FAST, REFERENCE):
        s = build_scheduler(Snapshot(nodes, ()), CTX, T0, frozenset(), walk=walk)
        for k, t in enumerate(("h100", "a100")):
            s.state.add_pending(JobSpec(id=f"g{k}", submit=0.0, account="a", gpus=16, work=3600.0, user="u",
                                  min_runtime=600.0, gpus_per_node=8, gpu_type=t), T0, T0)
        pi = s.inputs(T0, USAGES[0])
        plans = []
        for jid in ("g0", "g1"):
            h = s._plan_hold(s.state.pending[jid], s.starting.queue_key("a", pi), T0)
            plans.append(None if h is None else sorted(h.nodes))
        got.append(plans)
    assert got[0] == got[1] == [[0, 1], [2, 3]]
