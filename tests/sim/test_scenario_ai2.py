"""The ai2 scenario generator: deterministic, shaped like the Ai2 post, replayable as a trace."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from allotment.errors import UsageError
from allotment.sim.runner import simulate
from allotment.sim.workloads import from_trace
from allotment.traces.canonical import sorted_items, write_trace
from allotment.traces.scenarios import get_scenario
from allotment.traces.scenarios.ai2 import generate
from allotment.traces.scenarios.calibration import AI2, AI2_UNCAPPED_RUNS, BIG_GANGS, Calibration
from tests.core.builders import make_config

TREE = {"lm": {"pre": 3, "post": 2}, "vision": 2, "safety": 1}


def _config():  # type: ignore[no-untyped-def]
    return make_config(TREE, nodes=16, gpus_per_node=8)


def test_same_seed_same_workload_other_seed_other_workload() -> None:
    a = generate(_config(), cluster="c1", days=1, seed=3)
    assert a == generate(_config(), cluster="c1", days=1, seed=3)
    assert a != generate(_config(), cluster="c1", days=1, seed=4)


def test_workload_has_the_ai2_shape() -> None:
    w = generate(_config(), cluster="c1", days=3, seed=1)
    jobs = w.jobs
    assert list(jobs) == sorted(jobs, key=lambda j: (j.submit, j.id))
    assert {j.account for j in jobs} == {"pre", "post", "vision", "safety"}
    debug = [j for j in jobs if j.kind == "debug"]
    by_kind = {k: sum(j.kind == k for j in jobs) for k in {j.kind for j in jobs}}
    assert max(by_kind, key=lambda k: by_kind[k]) == "debug"  # the most numerous class
    assert all(1 <= j.gpus <= 8 and 0 < (j.min_runtime or 0) <= 900 for j in debug)
    train = [j for j in jobs if j.kind == "train"]
    assert train and all(j.gpus_per_node == 8 and j.gpus >= 16 for j in train)
    assert any(j.min_runtime == 0 for j in jobs)  # some unallocated work
    assert {j.kind for j in jobs} >= {"debug", "train", "interactive", "batch"}
    assert all(e.time >= 0 for e in w.node_events)
    # about ten users per team
    assert len({j.user for j in jobs}) >= 30


def _largest_run_over_allocation(calibration: Calibration) -> float:
    config = _config()
    w = generate(config, cluster="c1", days=7, seed=1, calibration=calibration)
    ent = {n.name: n.entitlement_gpus["c1"] for n in config.leaves()}
    return max(j.gpus / ent[j.account] for j in w.jobs if j.kind == "train")


def test_a_training_run_is_no_bigger_than_its_teams_allocation_in_whole_nodes() -> None:
    config = _config()
    w = generate(config, cluster="c1", days=7, seed=1)
    ent = {n.name: n.entitlement_gpus["c1"] for n in config.leaves()}
    train = [j for j in w.jobs if j.kind == "train"]
    assert train
    for j in train:
        assert j.gpus <= max(8, ent[j.account] // 8 * 8), (j.id, j.gpus, ent[j.account])
    # the smallest team (16 GPUs) runs one- and two-node jobs, the largest (48) up to six
    assert {j.gpus for j in train if j.account == "safety"} <= {8, 16}
    assert _largest_run_over_allocation(AI2) <= 1.0


def test_the_big_gangs_calibration_draws_runs_bigger_than_a_whole_allocation() -> None:
    assert _largest_run_over_allocation(BIG_GANGS) >= 4.0
    assert get_scenario("ai2-big-gangs")(_config(), cluster="c1", days=1, seed=2) == generate(
        _config(), cluster="c1", days=1, seed=2, calibration=BIG_GANGS
    )


def test_the_uncapped_runs_sensitivity_turns_only_the_allocation_cap_on_training_runs() -> None:
    # issue 25 item 6: one knob of ``ai2``, so a result that moves with it follows the cap alone
    assert replace(AI2, runs_fit_allocation=False) == AI2_UNCAPPED_RUNS
    assert _largest_run_over_allocation(AI2_UNCAPPED_RUNS) >= 4.0
    assert get_scenario("ai2-uncapped-runs")(_config(), cluster="c1", days=1, seed=2) == generate(
        _config(), cluster="c1", days=1, seed=2, calibration=AI2_UNCAPPED_RUNS
    )


def test_the_ai2_calibration_offers_more_free_work_and_less_funded_work() -> None:
    """The calibration's input-side claims (calibration.py): unallocated work a large part of
    what is offered, funded work held to a smaller multiple of each team's slice."""

    def offered(calibration: Calibration) -> tuple[float, float]:
        w = generate(_config(), cluster="c1", days=7, seed=1, calibration=calibration)
        free = sum(j.gpus * j.work for j in w.jobs if j.min_runtime == 0)
        return free, sum(j.gpus * j.work for j in w.jobs) - free

    new, old = offered(AI2), offered(BIG_GANGS)
    assert new[0] / sum(new) >= 0.15 > old[0] / sum(old)
    assert sum(AI2.outstanding.values()) - AI2.outstanding["unallocated"] < (
        sum(BIG_GANGS.outstanding.values()) - BIG_GANGS.outstanding["unallocated"]
    )
    for c in (AI2, BIG_GANGS):
        assert abs(sum(p for _, p in c.mix) - 1.0) < 1e-9


def test_unknown_scenario_and_cluster_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        get_scenario("nope")
    with pytest.raises(UsageError):
        generate(_config(), cluster="nope", days=1, seed=0)


def test_scenario_and_its_trace_simulate_identically(tmp_path: Path) -> None:
    config = _config()
    w = get_scenario("ai2")(config, cluster="c1", days=1, seed=2)
    path = tmp_path / "ai2.jsonl"
    write_trace(path, sorted_items(w.jobs, w.node_events), header={"source": "test"})
    replay = from_trace(path)
    assert replay == w
    a = simulate(config, w, days=1).metrics
    b = simulate(config, replay, days=1).metrics
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_streams_keep_a_bounded_amount_of_work_in_flight() -> None:
    w = generate(_config(), cluster="c1", days=3, seed=1)
    by_id = {j.id: j for j in w.jobs}
    chained = [j for j in w.jobs if j.depends_on]
    assert chained, "the long-running classes must form dependency streams"
    for j in chained:
        (dep,) = j.depends_on
        d = by_id[dep]
        assert d.account == j.account  # a team's own stream
        assert (d.kind == "debug") == (j.kind == "debug")
        assert (d.min_runtime == 0) == (j.min_runtime == 0)  # unallocated work chains apart
        assert d.id < j.id  # only ever on an earlier job of the stream: no cycles
    assert not any(j.depends_on for j in w.jobs if j.kind == "debug")  # debug stays open
    # equal declared priority along a stream, so propagation changes nothing
    assert all(by_id[j.depends_on[0]].priority == j.priority for j in chained)


def _allocated_offer_over_slice(calibration: Calibration, days: float) -> dict[str, float]:
    """Each team's allocated (charged) GPU-hours offered after t=0, over its slice's GPU-hours."""
    config = _config()
    w = generate(config, cluster="c1", days=days, seed=1, calibration=calibration)
    gpus = config.clusters["c1"].gpus
    out = {}
    for leaf in config.leaves():
        offered = sum(j.gpus * j.work for j in w.jobs
                      if j.account == leaf.name and j.submit > 600.0 and (j.min_runtime or 0) > 0)
        out[leaf.name] = offered / (leaf.absolute["c1"] * gpus * days * 86400.0)
    return out


def test_in_the_plans_contended_workload_every_team_offers_more_allocated_work_than_its_slice() -> None:
    """What `allot plan` simulates (docs/plan.md): under `ai2` a team's allocated work is well
    below its slice (the rest of its load is unallocated work), so it runs all of it whatever its
    share and a cut is never seen; under `ai2-contended` every team wants at least its slice."""
    from allotment.plan.impact import DEFAULT_SCENARIO
    from allotment.traces.scenarios.calibration import BY_SCENARIO

    assert DEFAULT_SCENARIO == "ai2-contended"
    assert all(r < 0.9 for r in _allocated_offer_over_slice(AI2, 10).values())
    assert all(r > 1.0 for r in _allocated_offer_over_slice(BY_SCENARIO[DEFAULT_SCENARIO], 10).values())


def test_the_known_mean_gpu_seconds_are_the_ones_the_scenario_computes() -> None:
    """``KNOWN_MEANS`` spares each run 100,000 draws (stop 48): each figure must be exactly the
    computation's, so that a change to the shapes or the mixes shows here, not in the workload."""
    from allotment.traces.scenarios import ai2 as scenario
    from allotment.traces.scenarios.calibration import BY_SCENARIO

    assert {mix for _, mix in scenario.KNOWN_MEANS} == {c.mix for c in BY_SCENARIO.values()}
    for (gpn, mix), mean in scenario.KNOWN_MEANS.items():
        assert scenario._mean_gpu_seconds.__wrapped__(gpn, mix) == mean
        assert scenario.mean_gpu_seconds(gpn, mix) == mean
    other = (("debug", 0.5), ("train", 0.5))
    assert scenario.mean_gpu_seconds(4, other) == scenario._mean_gpu_seconds.__wrapped__(4, other)
