"""A small simulation's metrics, byte for byte (regenerate with make regen and review the diff)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from allotment.errors import UsageError
from allotment.sim.runner import simulate
from allotment.traces.scenarios.ai2 import generate
from tests.conftest import assert_golden
from tests.core.builders import make_config

GOLDEN = Path(__file__).parent / "golden"
TREE = {"lm": {"pre": 3, "post": 2}, "vision": 2, "safety": 1}


def _metrics(policy: str, **overrides: str) -> dict[str, object]:
    config = make_config(TREE, nodes=16, gpus_per_node=8)
    w = generate(config, cluster="c1", days=2, seed=7)
    m = simulate(config, w, days=2, policy=policy, overrides=overrides).metrics
    return m


@pytest.mark.parametrize("policy", ["budgets", "priority", "fifo"])
def test_small_simulation_summary(policy: str, regen_golden: bool) -> None:
    text = json.dumps(_metrics(policy), indent=2, sort_keys=True) + "\n"
    assert_golden(GOLDEN / f"summary_{policy}.json", text, regen_golden)


def test_same_inputs_give_byte_identical_metrics() -> None:
    assert json.dumps(_metrics("budgets"), sort_keys=True) == json.dumps(_metrics("budgets"), sort_keys=True)


def test_overrides_change_the_policy_for_one_run() -> None:
    base = _metrics("budgets")
    short = _metrics("budgets", lookback="1h", min_runtime_cap="5m")
    assert base != short


def test_bad_overrides_are_usage_errors() -> None:
    for bad in ({"lookback": "soon"}, {"nonsense": "1"}, {"requeue_resumable": "maybe"}):
        with pytest.raises(UsageError):
            _metrics("budgets", **bad)


def _golden(policy: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"summary_{policy}.json").read_text(encoding="utf-8"))
    return data


def test_budgets_golden_claims_hold() -> None:
    """What the goldens stand for, so a regenerated file cannot hide a regression: budgets keeps
    the cluster busier and delivers more of what is owed than either baseline, and fifo makes
    debug jobs wait far longer.  (On this small 2-day run the priority baseline's debug p90 is
    lower than budgets': its one global queue starts short jobs first; issue 10 targets it.)"""
    b, p, f = _golden("budgets"), _golden("priority"), _golden("fifo")
    assert b["occupancy"] >= 0.9
    assert b["occupancy"] > p["occupancy"] + 0.1 and b["occupancy"] > f["occupancy"] + 0.05
    assert b["delivered_over_owed"] > p["delivered_over_owed"] + 0.1
    assert b["delivered_over_owed"] > f["delivered_over_owed"] + 0.05
    assert f["wait"]["debug"]["p90"] > 10 * b["wait"]["debug"]["p90"]
    assert b["jobs"]["submitted"] == p["jobs"]["submitted"] == f["jobs"]["submitted"]
    assert f["preemptions"] == 0  # fifo never preempts
