"""Issue 26, item 3 (stop 39): every team records which line judged it, and a flag in the comment
and the HTML report says whether it means "the cut reached its delivery" or "it lost more than
the threshold of what it got"."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema

from allotment.legible.plan_report import render_plan_report
from allotment.plan.impact_stats import summarize
from allotment.plan.model import Impact, Plan
from allotment.plan.plan_json import render_json
from allotment.plan.render import render_markdown
from tests.plan.factory import N, build
from tests.plan.test_flags_and_demand import _metrics, _Run
from tests.plan.test_render import make

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "src/allotment/schemas/plan-output.json").read_text())
TEAMS = ("t00", "t01", "t02", "t03")
HAIR = (-40.0, -10.0, -30.0, -20.0, -35.0)  # mean -27 of 1,000: below 0, not below -50
BIG = (-400.0, -420.0, -390.0, -410.0, -405.0)  # far below -50, 5% of what t01 got


def _plan() -> Plan:
    """t00's share is cut 1 -> 0.8 (its entitlement falls 16%) and it loses a little; t01 is not
    cut and loses much; t02 and t03 do not move."""
    base_spec = N(children={t: N() for t in TEAMS})
    head_spec = N(children={t: N(0.8 if t == "t00" else 1.0) for t in TEAMS})
    runs = []
    for seed in range(5):
        runs.append(_Run("base", seed, _metrics(dict.fromkeys(TEAMS, 1000.0))))
        after = dict.fromkeys(TEAMS, 1000.0)
        after["t00"] += HAIR[seed]
        after["t01"] += BIG[seed]
        runs.append(_Run("head", seed, _metrics(after)))
    imp = summarize(build("org", base_spec, gpus=16), build("org", head_spec, gpus=16), runs,
                    workload="scenario ai2 on c1", workload_key="0" * 64, days=7.0,
                    seeds=tuple(range(5)), cluster="c1")
    return replace(make(base_spec, head_spec), impact=imp)


def test_each_team_records_the_rule_the_line_and_the_interval_that_judged_it() -> None:
    plan = _plan()
    doc = json.loads(render_json(plan))
    jsonschema.validate(doc, SCHEMA)
    teams = {t["team"]: t for t in doc["impact"]["teams"]}
    assert {n: t["judged_by"] for n, t in teams.items()} == {
        "t00": "cut-confirmation", "t01": "delivered-drop", "t02": "delivered-drop", "t03": "delivered-drop"}
    cut, drop = teams["t00"]["judgment"], teams["t01"]["judgment"]
    assert cut["line_gpu_hours_week"] == 0.0 and cut["threshold"] == 0.05 and cut["flagged"]
    assert drop["line_gpu_hours_week"] == -50.0 and drop["threshold"] == 0.05 and drop["flagged"]
    assert not teams["t02"]["judgment"]["flagged"]
    for t in teams.values():  # the interval judged is the one the table shows
        assert t["judgment"]["interval"] == {k: t["impact"][k] for k in ("mean", "low", "high")}
        assert t["judgment"]["confidence"] == 0.9
    # the hair's drop clears zero but not the 5% line: only its cut made it a flag
    assert -50.0 < cut["interval"]["high"] < 0.0


def test_a_flag_in_the_comment_and_the_report_says_which_line_judged_it() -> None:
    plan = _plan()
    assert isinstance(plan.impact, Impact)
    md, html = render_markdown(plan), render_plan_report(plan)
    for text in (md, html):
        assert "⚠️ t00 (cut-confirmation: interval below 0)" in text
        assert "⚠️ t01 (delivered-drop: interval below -50, 5% of delivered)" in text
        assert "⚠️ t02" not in text and "⚠️ t03" not in text
