"""Projected impact: paired seeds, an interval, flags that do not depend on the seed list."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.core.jobs import JobSpec
from allotment.plan.build import PlanRequest, make_plan
from allotment.plan.impact import ImpactRunner, for_side
from allotment.plan.impact_stats import flag
from allotment.plan.model import Impact, SkippedImpact
from allotment.plan.plan_json import render_json
from allotment.plan.simcache import SimCache
from allotment.plan.stats import Interval, paired_interval, t_quantile
from allotment.traces.scenarios import Workload
from tests.plan.factory import N, build
from tests.plan.gitrepo import GitRepo

ML = "budgets/acme/ml/budget.yaml"
# Student t, 0.95 quantile (two-sided 90%), from the printed table
T_TABLE = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 9: 1.833, 29: 1.699}


@pytest.mark.parametrize("df", sorted(T_TABLE))
def test_t_quantile_matches_the_printed_table(df: int) -> None:
    assert t_quantile(0.95, df) == pytest.approx(T_TABLE[df], abs=1e-3)


def test_interval_of_five_paired_differences() -> None:
    iv = paired_interval([-10.0, -12.0, -8.0, -11.0, -9.0])
    half = 2.132 * (2.5**0.5) / 5**0.5
    assert (iv.mean, iv.low, iv.high) == pytest.approx((-10.0, -10 - half, -10 + half), abs=1e-3)
    assert iv.excludes_zero


def test_a_team_is_flagged_only_when_the_interval_excludes_zero_and_the_drop_is_large() -> None:
    assert flag(100.0, Interval(-10, -15, -6, 5), -5.0)
    assert not flag(100.0, Interval(-10, -25, +5, 5), -5.0)  # could be noise
    assert not flag(100.0, Interval(-3, -4, -2, 5), -5.0)  # real, but under the threshold
    assert not flag(100.0, Interval(-8, -14, -2, 5), -5.0)  # real, but maybe under it
    assert not flag(100.0, Interval(-10, -10, -10, 1), -5.0)  # one seed: no spread to judge


def test_renamed_team_keeps_its_jobs_and_unknown_accounts_are_left_out() -> None:
    head = build("acme", N(children={"perception": N(), "nlp": N()}))
    jobs = [JobSpec(id=f"j{i}", submit=float(i), account=a, gpus=1, work=60.0)
            for i, a in enumerate(("vision", "nlp", "gone"))]
    side = for_side(Workload.of(jobs), head, {"vision": "perception"})
    assert [(j.id, j.account) for j in side.jobs] == [("j0", "perception"), ("j1", "nlp")]


def _plan_json(repo: GitRepo, head: str, seeds: str, cache: Path) -> dict[str, object]:
    out = repo.path.parent / f"plan-{head}-{seeds}.json"
    code = main(["plan", "--repo", str(repo.path), "--base", "main", "--head", head,
                 "--days", "3", "--seeds", seeds, "--at", "2026-01-02", "--format", "json",
                 "--cache-dir", str(cache), "--out", str(out)])
    assert code in (0, 1)
    doc: dict[str, object] = json.loads(out.read_text())
    return doc


def _flagged(doc: dict[str, object]) -> set[str]:
    imp = doc["impact"]
    assert isinstance(imp, dict)
    return {t["team"] for t in imp["teams"] if t["impact"]["flagged"]}


@pytest.mark.slow
def test_the_same_pr_flags_the_same_teams_whatever_the_seed_list(
    small_repo: GitRepo, tmp_path: Path
) -> None:
    """A real, large change (vision capped at 1 GPU) is flagged on every seed list; a change
    that is no real change (vision's share 50 -> 51) is flagged on none."""
    small_repo.switch("cap", create=True)
    small_repo.edit_yaml(ML, lambda d: d["children"]["vision"].update({"max_gpus": 1}))
    small_repo.commit("cap vision", author="vera@acme.example")
    small_repo.switch("main")
    small_repo.switch("tiny", create=True)
    small_repo.set_share(ML, "vision", 51)
    small_repo.commit("a hair more vision", author="vera@acme.example")
    for head, expected in (("cap", {"vision"}), ("tiny", set())):
        flags = [_flagged(_plan_json(small_repo, head, s, tmp_path / "c")) for s in ("1-5", "6,8,10,12,14")]
        assert flags == [expected, expected], head
    doc = _plan_json(small_repo, "cap", "6,8,10,12,14", tmp_path / "c")
    assert doc["seeds"] == [6, 8, 10, 12, 14]
    vision = next(t for t in doc["impact"]["teams"] if t["team"] == "vision")  # type: ignore[index]
    assert vision["impact"]["high"] < 0 and vision["impact"]["low"] <= vision["impact"]["mean"]


def runner(cache: Path | None, workers: int = 1) -> ImpactRunner:
    return ImpactRunner(trace=None, scenario="ai2", cluster=None, days=0.5, seeds=(1, 2),
                        cache=SimCache(cache), workers=workers)


def test_runs_are_cached_and_parallel_serial_and_cached_agree(
    small_repo: GitRepo, tmp_path: Path
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.set_share(ML, "vision", 70)
    small_repo.commit("vision +", author="vera@acme.example")
    req = PlanRequest(repo=small_repo.path, base="main", head="pr", at=dt.date(2026, 1, 2))
    first = make_plan(req, runner(tmp_path / "cache", workers=2))
    assert isinstance(first.impact, Impact) and first.impact.cached_runs == 0
    again = make_plan(req, runner(tmp_path / "cache"))
    assert isinstance(again.impact, Impact) and again.impact.cached_runs == 4
    assert render_json(again).replace('"cached_runs": 4', '"cached_runs": 0') == render_json(first)
    small_repo.set_share(ML, "vision", 90)
    small_repo.commit("vision ++", author="vera@acme.example")
    third = make_plan(req, runner(tmp_path / "cache"))
    assert isinstance(third.impact, Impact) and third.impact.cached_runs == 2  # base side only
    assert third.impact.total_runs == 4


def test_a_change_of_owners_only_is_not_simulated_but_a_policy_change_is(
    small_repo: GitRepo,
) -> None:
    small_repo.switch("pr", create=True)
    small_repo.edit_yaml(ML, lambda d: d["owners"].append("new@acme.example"))
    small_repo.commit("one more owner", author="ml-lead@acme.example")
    req = PlanRequest(repo=small_repo.path, base="main", head="pr", at=dt.date(2026, 1, 2))
    plan = make_plan(req, runner(None))
    assert isinstance(plan.impact, SkippedImpact) and "not simulated" in plan.impact.reason
    small_repo.edit_yaml("policies/scheduler.yaml", lambda d: d.update({"debug_threshold": "30m"}))
    small_repo.commit("longer debug jobs", author="pat@acme.example")
    plan = make_plan(req, runner(None))
    assert isinstance(plan.impact, Impact)


def test_the_seed_count_is_the_base_revisions_policy_knob_and_a_pr_cannot_shrink_it() -> None:
    from allotment.compile.model import Policy

    base = build("acme", N(children={"a": N(), "b": N()}), gpus=16, policy=Policy(plan_seeds=3))
    head = build("acme", N(children={"a": N(3), "b": N()}), gpus=16, policy=Policy(plan_seeds=1))
    auto = ImpactRunner(trace=None, scenario="ai2", cluster=None, days=0.1, seeds=None,
                        cache=SimCache(None), workers=1)
    imp = auto(base, head)
    assert isinstance(imp, Impact) and imp.seeds == (1, 2, 3)  # the base's 3, not the head's 1
    given = ImpactRunner(trace=None, scenario="ai2", cluster=None, days=0.1, seeds=(7,),
                         cache=SimCache(None), workers=1)
    imp = given(base, head)
    assert isinstance(imp, Impact) and imp.seeds == (7,)  # --seeds wins over the knob


def test_the_runner_tells_its_progress_in_runs_cached_ones_first() -> None:
    base = build("acme", N(children={"a": N(), "b": N()}), gpus=16)
    head = build("acme", N(children={"a": N(3), "b": N()}), gpus=16)
    told: list[tuple[int, int]] = []
    r = ImpactRunner(trace=None, scenario="ai2", cluster=None, days=0.1, seeds=(1, 2),
                     cache=SimCache(None), workers=1, progress=lambda d, t: told.append((d, t)))
    r(base, head)
    assert told[0] == (0, 4) and told[-1] == (4, 4)  # 2 seeds x 2 sides, none cached
    assert [d for d, _ in told] == sorted(d for d, _ in told)


def _profile_plan(repo: GitRepo, cache: Path, *profile: str) -> tuple[int, dict[str, object]]:
    out = repo.path.parent / "plan-profile.json"
    out.unlink(missing_ok=True)
    code = main(["plan", "--repo", str(repo.path), "--base", "main", "--head", "pr",
                 "--days", "0.5", "--seeds", "1", "--at", "2026-01-02", "--format", "json",
                 "--cache-dir", str(cache), "--out", str(out), *profile])
    return code, json.loads(out.read_text()) if out.exists() else {}


def test_plan_simulates_both_sides_with_the_backends_latency_profile_and_caches_per_profile(
    small_repo: GitRepo, tmp_path: Path
) -> None:
    """``allot plan --profile slurm``: both sides run with Slurm's delays (a requeued job waits
    121 s, a start lands 1 s after the pass), the comment says so, and a run cached under one
    profile is never served for another."""
    small_repo.switch("pr", create=True)
    small_repo.set_share(ML, "vision", 70)
    small_repo.commit("vision +", author="vera@acme.example")
    cache = tmp_path / "cache"
    code, ideal = _profile_plan(small_repo, cache)
    assert code == 0
    code, slurm = _profile_plan(small_repo, cache, "--profile", "slurm")
    assert code == 0
    imp_ideal, imp_slurm = ideal["impact"], slurm["impact"]
    assert isinstance(imp_ideal, dict) and isinstance(imp_slurm, dict)
    assert (imp_ideal["latency_profile"], imp_slurm["latency_profile"]) == ("none", "slurm")
    assert imp_slurm["workload_key"] != imp_ideal["workload_key"]
    assert imp_slurm["cached_runs"] == 0  # the runs cached under "none" were not reused
    waits = [{t["team"]: t["p90_wait_before_s"] for t in i["teams"]} for i in (imp_ideal, imp_slurm)]
    assert waits[0] != waits[1]  # the delays reach the prediction
    code, again = _profile_plan(small_repo, cache, "--profile", "slurm")
    assert code == 0 and isinstance(again["impact"], dict)
    assert again["impact"]["cached_runs"] == 2  # same profile: both sides from the cache
    code, other = _profile_plan(small_repo, cache, "--profile", "slurm, requeue=11")
    assert code == 0 and isinstance(other["impact"], dict)
    assert other["impact"]["cached_runs"] == 0  # one delay differs: another run
    assert other["impact"]["latency_profile"] == "slurm,requeue=11"  # what --profile reruns it
    out = small_repo.path.parent / "plan-profile.md"
    assert main(["plan", "--repo", str(small_repo.path), "--base", "main", "--head", "pr",
                 "--days", "0.5", "--seeds", "1", "--at", "2026-01-02", "--cache-dir", str(cache),
                 "--out", str(out), "--profile", "slurm,requeue=11"]) == 0
    md = out.read_text()
    assert "with the backend latency profile `slurm,requeue=11`" in md
    rerun = md.split("Rerun: `", 1)[1].split("`", 1)[0]
    assert rerun.endswith("--seeds 1 --profile slurm,requeue=11")


def test_plan_with_an_unknown_profile_is_a_usage_error_before_any_work(
    small_repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = _profile_plan(small_repo, tmp_path / "cache", "--profile", "pbs")
    assert code == 2 and doc == {}
    assert "--profile pbs: unknown profile 'pbs'" in capsys.readouterr().err
