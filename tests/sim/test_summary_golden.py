"""A small simulation's metrics, byte for byte (regenerate with make regen and review the diff)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from allotment.errors import UsageError
from allotment.sim.job_kind import JOB_KINDS
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


# -- the claims the goldens stand for --------------------------------------------------------
# Asserted on the golden files themselves: a regenerated golden that breaks a claim fails here,
# whatever its diff looked like.  Claims the product promises but today's core does not meet are
# strict xfails with the measured numbers: when the core meets them they XPASS, and the strict
# flag turns that into a failure until the mark is removed.


def _golden(policy: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / f"summary_{policy}.json").read_text())
    return data


def test_golden_budgets_keeps_the_cluster_busier_than_either_baseline() -> None:
    # the scenario's free (unallocated) work fills what a baseline leaves idle, so the margin
    # over priority is small (0.990 against 0.972); over fifo, which cannot reorder, it is not
    b, p, f = _golden("budgets"), _golden("priority"), _golden("fifo")
    assert b["occupancy"] >= 0.95
    assert b["occupancy"] > p["occupancy"] and b["occupancy"] > f["occupancy"] + 0.05


def test_golden_budgets_delivers_more_of_what_is_owed_than_either_baseline() -> None:
    b, p, f = _golden("budgets"), _golden("priority"), _golden("fifo")
    assert b["delivered_over_owed"] > p["delivered_over_owed"] and b["delivered_over_owed"] > f["delivered_over_owed"]
    assert b["teams_min_ratio"] > p["teams_min_ratio"]


@pytest.mark.parametrize("policy", ["budgets", "priority", "fifo"])
def test_golden_hour_capped_delivery_never_exceeds_the_uncapped_figure(policy: str) -> None:
    m = _golden(policy)
    assert m["delivered_over_owed"] <= m["received"]
    for t in m["teams"].values():
        assert t["delivered"] <= min(t["owed"], t["received_gpu_hours"]) + 1e-3
        assert t["ratio"] <= t["received"] + 1e-4


@pytest.mark.parametrize("policy", ["budgets", "priority", "fifo"])
def test_golden_every_job_is_accounted_for(policy: str) -> None:
    j = _golden(policy)["jobs"]
    assert j["submitted"] == 870 and j["rejected"] == 0
    assert j["completed"] + j["cancelled"] + j["rejected"] <= j["submitted"]
    # at the 2-day horizon demand is 2.5x capacity: what is left is mostly free work waiting
    # behind funded work under budgets (184 of its 218 unfinished jobs are unallocated)
    assert j["completed"] >= 0.70 * j["submitted"]


@pytest.mark.xfail(
    strict=True,
    reason="fifo's debug p90 is 8,704 s here, budgets' 2,429 s: 3.6x (7.2x, 1,202 s, before the thrown-away-once "
    "rule). In this 2-day start-up backlog a team's 8-GPU debug job no longer takes the place of its own "
    "non-resumable 16-GPU run that was evicted once already (vision-000180 waited 10,610 s where it took "
    "vision-000007's place at once), and the trajectories part from there. On the 30-day runs the rule keeps "
    "debug p90 at 10 s on ai2 h100 and lowers it on b200 (docs/results.md)",
)
def test_golden_fifo_makes_debug_jobs_wait_far_longer_than_budgets() -> None:
    assert _golden("fifo")["wait"]["debug"]["p90"] >= 5 * _golden("budgets")["wait"]["debug"]["p90"]


@pytest.mark.xfail(
    strict=True,
    reason="budgets debug p90 is 2,429 s here (1,202 s before the thrown-away-once rule), priority 6,461 s: 2.7x "
    "(the product claims >= 10x; 361 s and 9.9x before issue 25's binding reservation). Measured on the core before it (361 s): in the first two days of this "
    "16-node cluster (a start-up backlog) whole-node debug jobs wait; 25 s in, 71% of those waiting over a minute had "
    "only allocated work past protection that no rule gives them, 29% only protected work (scripts/debug_waits.py); "
    "not re-attributed since. The 30-day table meets it (test_ai2_table)",
)
def test_golden_budgets_beats_priority_on_debug_p90_by_ten_times() -> None:
    assert 10 * _golden("budgets")["wait"]["debug"]["p90"] <= _golden("priority")["wait"]["debug"]["p90"]


@pytest.mark.xfail(strict=True, reason="budgets debug p90 is 2,429 s on this golden (target <= 60 s; 1,202 s "
                   "before the thrown-away-once rule, 361 s before issue 25): the start-up waits above")
def test_golden_budgets_debug_p90_is_at_most_a_minute() -> None:
    assert _golden("budgets")["wait"]["debug"]["p90"] <= 60.0


def test_golden_fifo_never_preempts() -> None:
    assert _golden("fifo")["preemptions"] == 0


@pytest.mark.parametrize("policy", ["budgets", "priority", "fifo"])
def test_golden_every_waiting_job_is_of_exactly_one_kind(policy: str) -> None:
    # issue 29: wait and pending per job kind (the policy's, sim/job_kind.py) partition "all",
    # and the scenario's sessions are among them
    m = _golden(policy)
    for key in ("wait", "pending"):
        assert sum(m[key][k]["n"] for k in JOB_KINDS) == m[key]["all"]["n"]
    assert m["wait"]["interactive"]["n"] > 0 and m["wait"]["debug"]["n"] > 0
