"""Projected impact: same workload under both configs, cached by content hash."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from allotment.core.jobs import JobSpec
from allotment.plan.build import PlanRequest, make_plan
from allotment.plan.impact import ImpactRunner, SideRun, _impact, for_side
from allotment.plan.plan_json import render_json
from allotment.traces.scenarios import Workload
from tests.plan.factory import N, build
from tests.plan.gitrepo import GitRepo

ML = "budgets/acme/ml/budget.yaml"


def runner(cache: Path, parallel: bool = False) -> ImpactRunner:
    return ImpactRunner(
        trace=None,
        scenario="ai2",
        cluster=None,
        days=0.5,
        seed=7,
        cache_dir=cache,
        parallel=parallel,
    )


def test_both_sides_simulated_then_cached_then_only_changed_side(
    small_repo: GitRepo, tmp_path: Path
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.set_share(ML, "vision", 70)
    small_repo.commit("vision +", author="vera@acme.example")
    req = PlanRequest(repo=small_repo.path, base="main", head="pr", at=dt.date(2026, 1, 2))
    first = make_plan(req, runner(tmp_path / "cache", parallel=True))
    assert first.impact is not None and first.impact.cached == (False, False)
    again = make_plan(req, runner(tmp_path / "cache"))
    assert again.impact is not None and again.impact.cached == (True, True)
    assert render_json(again) == render_json(first)  # parallel, serial and cached agree
    small_repo.set_share(ML, "vision", 90)
    small_repo.commit("vision ++", author="vera@acme.example")
    third = make_plan(req, runner(tmp_path / "cache"))
    assert third.impact is not None and third.impact.cached == (True, False)
    teams = {t.team for t in third.impact.teams}
    assert teams == {"vision", "nlp", "infra"}


def test_corrupt_cache_entry_is_recomputed(small_repo: GitRepo, tmp_path: Path) -> None:
    req = PlanRequest(repo=small_repo.path, base="main", head="main", at=dt.date(2026, 1, 2))
    make_plan(req, runner(tmp_path / "c"))
    for f in (tmp_path / "c" / "plan").glob("*.json"):
        f.write_text("{not json")
    plan = make_plan(req, runner(tmp_path / "c"))
    assert plan.impact is not None and plan.impact.cached == (False, False)
    assert json.loads(next((tmp_path / "c" / "plan").glob("*.json")).read_text())["teams"]


def _job(i: int, account: str) -> JobSpec:
    return JobSpec(id=f"j{i}", submit=float(i), account=account, gpus=1, work=60.0)


def test_renamed_team_keeps_its_jobs_and_unknown_accounts_are_left_out() -> None:
    head = build("acme", N(children={"perception": N(), "nlp": N()}))
    w = Workload.of([_job(1, "vision"), _job(2, "nlp"), _job(3, "gone")])
    side = for_side(w, head, {"vision": "perception"})
    assert [(j.id, j.account) for j in side.jobs] == [("j1", "perception"), ("j2", "nlp")]


def test_team_losing_more_than_threshold_is_flagged() -> None:
    base = build("acme", N(children={"a": N(), "b": N()}))
    head = build("acme", N(children={"a": N(3), "b": N()}))

    def side(a: float, b: float) -> SideRun:
        return SideRun(
            {
                "days": 7.0,
                "teams": {"a": {"received_gpu_hours": a, "ratio": 1.0}, "b": {"received_gpu_hours": b, "ratio": 1.0}},
            },
            False,
        )

    imp = _impact(base, head, side(100, 100), side(150, 94), "w", "0" * 64, 7.0, 0)
    flags = {t.team: t.flagged for t in imp.teams}
    assert flags == {"a": False, "b": True}  # b drops 6 % > 5 % threshold
    imp = _impact(base, head, side(100, 100), side(150, 96), "w", "0" * 64, 7.0, 0)
    assert not any(t.flagged for t in imp.teams)


def test_trace_workload_is_replayed_under_both_sides(small_repo: GitRepo, tmp_path: Path) -> None:
    from allotment.traces.canonical import sorted_items, write_trace

    jobs = [
        JobSpec(
            id=f"{team}-{i}", submit=60.0 * i, account=team, gpus=8, work=3600.0, min_runtime=600.0
        )
        for i in range(6)
        for team in ("vision", "nlp", "infra")
    ]
    trace = tmp_path / "w.jsonl"
    write_trace(trace, sorted_items(jobs, []))
    small_repo.switch("pr", create=True)
    small_repo.set_share(ML, "vision", 70)
    small_repo.commit("vision +", author="vera@acme.example")
    req = PlanRequest(repo=small_repo.path, base="main", head="pr", at=dt.date(2026, 1, 2))
    run = ImpactRunner(
        trace=trace, scenario=None, cluster=None, days=1.0, seed=0, cache_dir=None, parallel=False
    )
    plan = make_plan(req, run)
    assert plan.impact is not None
    assert plan.impact.workload == "trace w.jsonl"
    delivered = {t.team: t.delivered_week_before for t in plan.impact.teams}
    assert set(delivered) == {"vision", "nlp", "infra"}
    # 6 jobs x 8 GPUs x 1 h per team fit on 32 GPUs within the day: all of it is delivered
    assert all(v == pytest.approx(6 * 8 * 7, rel=0.01) for v in delivered.values())
