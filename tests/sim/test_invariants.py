"""The Correctness section of the issue, as properties over random small clusters and traces."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.compile.model import CompiledConfig
from tests.sim.checked import CheckedSim
from tests.sim.strategies import clusters, workloads

PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cases(draw: st.DrawFn) -> tuple[CompiledConfig, object]:
    config = draw(clusters())
    return config, draw(workloads(config))


def _run(case: tuple[CompiledConfig, object], mode: str = "budgets") -> CheckedSim:
    config, workload = case
    sim = CheckedSim(config, workload, mode=mode)  # type: ignore[arg-type]
    sim.run()
    return sim


@PROPS
@given(cases(), st.sampled_from(["budgets", "priority", "fifo"]))
def test_nodes_are_never_oversubscribed_and_protection_holds(case: tuple[CompiledConfig, object], mode: str) -> None:
    sim = _run(case, mode)
    assert sim.violations == []


@PROPS
@given(cases(), st.sampled_from(["budgets", "priority", "fifo"]))
def test_every_job_completes_once_arrivals_stop(case: tuple[CompiledConfig, object], mode: str) -> None:
    sim = _run(case, mode)
    r = sim.rec
    left = (sorted(sim.sched.state.pending), sorted(sim.sched.state.running), sim.sched.starting.holds)
    c = r.counts
    assert c["completed"] + c["cancelled"] + c["rejected"] == c["submitted"] == sim.source.count, left
    assert not sim.by_id, left  # and the run holds none of them any more
    assert sim.violations == []


@PROPS
@given(cases())
def test_gpu_hours_are_conserved(case: tuple[CompiledConfig, object]) -> None:
    sim = _run(case)
    end = sim.end
    summary = sim.summary()
    running = sum(sim.rec.charged.hours) + sum(sim.rec.free_work.hours)
    capacity = sim.ctx.capacity_gpus * end
    assert running + sim.idle_gpu_s + sim.unhealthy_gpu_s == pytest.approx(capacity, rel=1e-9, abs=1e-6)
    assert 0.0 <= summary["occupancy"] <= 1.0 + 1e-9


@PROPS
@given(cases())
def test_unallocated_time_is_never_charged(case: tuple[CompiledConfig, object]) -> None:
    sim = _run(case)
    charged_gpu_s = sum(sim.rec.charged.hours)
    ledger_gpu_s = sum(sim.ledger.total_gpu_hours(a, sim.end) for a in sim.ledger.snapshot(sim.end)) * 3600
    assert ledger_gpu_s == pytest.approx(charged_gpu_s, rel=1e-9, abs=1e-6)
    # CheckedSim checks after every event and pass that no unallocated job runs charged
    assert not [v for v in sim.violations if "runs charged" in v]
    # the checks ran (a workload whose every job is rejected at submission needs no pass)
    assert sim.passes > 0 or sim.rec.counts["rejected"] == sim.rec.counts["submitted"]
