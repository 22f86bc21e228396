"""The reconciler's usage ledger as the plan's history (plan/ledger_history.py, docs/plan.md).

Ledgers are written by the reconciler's own writer (``reconcile.ledger.Ledger``), so a change of
its layout breaks these tests, not a copy of it; the config repos are real git repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from allotment.plan.ledger_history import ledger_to_trace
from allotment.reconcile.ledger import Ledger, RunObs
from allotment.traces.canonical import read_trace
from tests.plan.test_flags_and_demand import _history_plan

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z, a whole hour


def _ledger(path: Path, runs: list[RunObs]) -> Path:
    led = Ledger(path)
    led.record(runs)
    led.close()
    return path


def test_a_ledger_replays_each_job_with_the_gpus_and_work_it_ran_from_its_first_start(
    tmp_path: Path,
) -> None:
    """Rate from a whole hour, else from the first hour's part after the start; GPUs are that
    rate over the billing weight; work is the GPU-hours over it, summed over a requeued job's
    runs; submission is the first start (the ledger keeps no other)."""
    db = _ledger(tmp_path / "ledger.db", [
        RunObs("long", "nlp", T0 + 600, T0 + 600 + 5 * 3600, 8, weight=2.0),  # 5 h on 8 GPUs
        RunObs("two-hours", "vision", T0 + 1800, T0 + 1800 + 2400, 4, weight=2.0),  # 40 min
        RunObs("requeued", "infra", T0 + 7200, T0 + 7200 + 3 * 3600, 2, weight=2.0),
        RunObs("requeued", "infra", T0 + 5 * 3600, T0 + 7 * 3600, 2, weight=2.0),
    ])
    out = tmp_path / "trace.jsonl"
    assert ledger_to_trace(db, 2.0, out) == 3
    jobs = {j.id: j for j in read_trace(out).jobs}
    assert (jobs["long"].account, jobs["long"].gpus, jobs["long"].submit) == ("nlp", 8, 600.0)
    assert jobs["long"].work == 5 * 3600
    assert (jobs["two-hours"].gpus, jobs["two-hours"].work) == (4, 2400)
    assert (jobs["requeued"].gpus, jobs["requeued"].submit) == (2, 7200.0)
    assert jobs["requeued"].work == 5 * 3600
    assert read_trace(out).header["start"] == "2026-01-01T00:00:00+00:00"


def test_a_ledger_snapshot_named_by_the_base_is_the_plans_history_and_a_pr_cannot_swap_it(
    small_repo: Any, tmp_path: Path,
) -> None:
    """``plan_workload`` names a snapshot of the reconciler's ledger committed in the config
    repo: the plan replays the base's snapshot, whatever the PR does to the file or the
    setting, and the replay runs the ledger's work under both sides."""
    runs = [RunObs(f"j{i}", team, T0 + 1800 * i, T0 + 1800 * i + 4 * 3600, 8)
            for i in range(24) for team in ("nlp", "vision", "infra")]
    db = _ledger(tmp_path / "ledger.db", runs)
    small_repo.write("history/ledger.db", db.read_bytes())
    small_repo.edit_yaml("policies/scheduler.yaml",
                         lambda d: d.update({"plan_workload": "history/ledger.db"}))
    small_repo.commit("replay the reconciler's ledger", author="pat@acme.example")
    small_repo.switch("pr", create=True)
    small_repo.set_share("budgets/acme/ml/budget.yaml", "vision", 70)
    small_repo.commit("vision +", author="vera@acme.example")
    clean = _history_plan(small_repo, "pr")
    assert clean.workload == "trace ledger.db.jsonl on c1"
    ran = sum(t.delivered_week_before for t in clean.teams)
    assert ran > 0
    other = _ledger(tmp_path / "other.db", runs[:3])  # the PR swaps in a ledger of its own ...
    small_repo.write("history/ledger.db", other.read_bytes())
    small_repo.edit_yaml("policies/scheduler.yaml", lambda d: d.pop("plan_workload"))  # ... and unsets it
    small_repo.commit("another history", author="vera@acme.example")
    tampered = _history_plan(small_repo, "pr")
    assert tampered.workload == clean.workload and tampered.workload_key == clean.workload_key


def test_a_ledger_of_a_cluster_whose_gpu_types_bill_differently_is_refused_by_name() -> None:
    """The ledger's GPU-hours are reference hours (GPUs x hours x billing weight): on a cluster
    of one weight they say how many GPUs a run held, on a mixed one they cannot."""
    import dataclasses

    import pytest

    from allotment.compile.model import GpuType, NodeGroup
    from allotment.errors import TraceError
    from allotment.plan.ledger_history import cluster_weight
    from tests.plan.factory import N, build

    cfg = build("acme", N(children={"a": N(), "b": N()}), gpus=16)
    one = dataclasses.replace(cfg, gpu_types={"h100": GpuType("h100", 2.0)})
    assert cluster_weight(one, "c1") == 2.0
    c1 = cfg.clusters["c1"]
    mixed_cluster = dataclasses.replace(
        c1, node_groups=(*c1.node_groups, NodeGroup("old", "a100", 8, ("m0",)))
    )
    mixed = dataclasses.replace(
        cfg,
        clusters={"c1": mixed_cluster},
        gpu_types={"h100": GpuType("h100", 2.0), "a100": GpuType("a100", 0.5)},
    )
    with pytest.raises(TraceError, match="2 billing weights: a ledger cannot say how many GPUs"):
        cluster_weight(mixed, "c1")
