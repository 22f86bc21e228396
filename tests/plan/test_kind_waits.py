"""Issue 29, item 3: the plan comment shows p50/p90 wait per job kind (the policy's kinds,
sim/job_kind.py), read from the measured part of each run by the one wait definition."""

from __future__ import annotations

import json
from dataclasses import replace

import jsonschema

from allotment.plan.impact_stats import kind_waits
from allotment.plan.model import Impact, KindWait
from allotment.plan.plan_json import render_json
from allotment.plan.render import render_markdown
from allotment.plan.stats import Interval
from allotment.sim.job_kind import JOB_KINDS
from allotment.sim.runner import simulate
from allotment.sim.window import measured
from allotment.traces.scenarios.ai2 import generate
from tests.conftest import REPO_ROOT
from tests.core.builders import make_config
from tests.plan.factory import N
from tests.plan.test_render import _with_impact, make

_FLAT = {"a": Interval(0, -1, 1, 3), "b": Interval(0, -1, 1, 3)}
SCHEMA = json.loads((REPO_ROOT / "src/allotment/schemas/plan-output.json").read_text())


def test_the_measured_waits_per_kind_are_the_metrics_waits_when_nothing_is_warm_up() -> None:
    config = make_config({"lm": 2, "vision": 1}, nodes=8, gpus_per_node=8)
    w = generate(config, cluster="c1", days=1, seed=3)
    r = simulate(config, w, days=1, policy="budgets")
    m = measured(r.recorder, 0.0)
    assert m["wait"] == {k: r.metrics["wait"][k] for k in JOB_KINDS}
    assert m["wait"]["interactive"]["n"] > 0


def test_kind_waits_are_seed_means_and_a_seed_without_the_kind_is_left_out() -> None:
    def run(p50: float, p90: float, n: int) -> dict[str, object]:
        return {"wait": {"interactive": {"p50": p50, "p90": p90, "n": n}}}

    pairs = [(run(10.0, 100.0, 3), run(20.0, 200.0, 3)), (run(30.0, 300.0, 5), run(0.0, 0.0, 0))]
    by_kind = {k.kind: k for k in kind_waits(pairs)}
    assert by_kind["interactive"] == KindWait("interactive", 20.0, 20.0, 200.0, 200.0)
    assert by_kind["train"] == KindWait("train", None, None, None, None)  # no run reported it
    assert tuple(by_kind) == JOB_KINDS


def test_the_comment_and_the_json_show_each_kinds_wait_before_and_after() -> None:
    tree = N(owners=("o@x.org",), children={"a": N(1), "b": N(1)})
    plan = _with_impact(make(tree, tree), _FLAT)
    assert isinstance(plan.impact, Impact)
    waits = (KindWait("debug", 5.0, 4.0, 60.0, 50.0), KindWait("interactive", 600.0, 120.0, 7200.0, 1800.0),
             KindWait("train", None, None, None, None))
    plan = replace(plan, impact=replace(plan.impact, kind_waits=waits))
    md = render_markdown(plan)
    assert "| debug | 5s → 4s | 1m → 50s |" in md
    assert "| interactive | 10m → 2m | 2h → 30m |" in md
    assert "| train |" not in md  # nothing to show: no row of n/a
    doc = json.loads(render_json(plan))
    jsonschema.validate(doc, SCHEMA)
    assert doc["impact"]["kind_waits"][1] == {"kind": "interactive", "p50_wait_before_s": 600.0, "p50_wait_after_s": 120.0,
                                              "p90_wait_before_s": 7200.0, "p90_wait_after_s": 1800.0}


def test_a_plan_without_kind_waits_shows_no_kind_table() -> None:
    tree = N(owners=("o@x.org",), children={"a": N(1), "b": N(1)})
    assert "Wait per job kind" not in render_markdown(_with_impact(make(tree, tree), _FLAT))
