"""scripts/owed_gap.py on a trace small enough to attribute by hand (two teams at 50/50 on one
8-GPU node, each entitled to 4 GPUs, as in tests/sim/test_metric_definitions.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from allotment.core.jobs import JobSpec
from allotment.sim.runner import simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "owed_gap.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("owed_gap", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["owed_gap"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _job(jid: str, submit: float, account: str, gpus: int, work: float, min_runtime: float) -> JobSpec:
    return JobSpec(id=jid, submit=submit, account=account, gpus=gpus, work=work, min_runtime=min_runtime)


def test_a_gang_bigger_than_the_allocation_behind_protected_borrowing_is_attributed_to_both() -> None:
    """b fills the node at t=0 with eight 1-GPU jobs protected for 2 h; a's 8-GPU job arrives at
    t=1 and runs 7200-10800.  a's shortfall: 4 + 4 GPU-h (hours 0 and 1; hour 2 delivers its 4).

    At every sample a is 4 GPUs short, its only waiting job (8 GPUs) is bigger than its room (4)
    and than its whole allocation (4), and the node is held by b, which borrows 4 GPUs within
    its minimum runtime: all 8 GPU-h are a_big, a_huge and a_big:b_protected.  Sampled every
    second, the first sample (t=0, before a's job exists) leaves 4 GPU-s to e_hour."""
    og = _load()
    config = make_config({"a": 1, "b": 1}, nodes=1)
    jobs = [_job(f"b{i}", 0.0, "b", 1, 7200.0, 7200.0) for i in range(8)] + [_job("a0", 1.0, "a", 8, HOUR, 600.0)]
    res = simulate(config, Workload.of(jobs), days=3 / 24, keep_events=True)
    assert res.header is not None
    out = og.attribute(res.header, list(res.events), og.Knobs(7 * 86400.0, 0.1, 300.0), 1.0)
    a = out["teams"]["a"]
    assert (a["owed"], a["delivered"]) == (12.0, 4.0)
    assert a["a_big"] == pytest.approx(8.0 - 4 / HOUR) and a["e_hour"] == pytest.approx(4 / HOUR)
    assert a["a_huge"] == pytest.approx(a["a_big"]) and a["a_big:b_protected"] == pytest.approx(a["a_big"])
    assert all(a[c] == 0.0 for c in ("f_free", "c_unalloc", "c_reclaim", "d_order", "b_protected", "f_other"))
    assert out["teams"]["b"]["ratio"] == 1.0


def test_protected_borrowing_is_told_apart_from_reclaimable_work() -> None:
    """b runs one 8-GPU job protected for 600 s from t=0 for 2 h; a's 4-GPU job arrives at 1.
    Before 600 s b's borrowed half is protected (b_protected); after it, a reclaims (the pass at
    600 s), so a's shortfall is the 599 s x 4 GPUs before: b_protected, nothing else."""
    og = _load()
    config = make_config({"a": 1, "b": 1}, nodes=1)
    jobs = [_job("b0", 0.0, "b", 8, 2 * HOUR, 600.0), _job("a0", 1.0, "a", 4, HOUR, 600.0)]
    res = simulate(config, Workload.of(jobs), days=1 / 24, keep_events=True)
    assert res.header is not None
    out = og.attribute(res.header, list(res.events), og.Knobs(7 * 86400.0, 0.1, 300.0), 1.0)
    a = out["teams"]["a"]
    short = a["owed"] - a["delivered"]
    assert short > 0
    assert a["b_protected"] == pytest.approx(short, abs=4 * 2 / HOUR)
    assert a["a_big"] == 0.0 and a["c_reclaim"] == 0.0
