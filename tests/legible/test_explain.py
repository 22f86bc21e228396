"""``allot explain``: words and human units first, what the scheduler recorded, never a re-run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from allotment.cli.main import main
from allotment.legible.rundir import read_run
from allotment.reconcile.audit import entry_time
from allotment.timefmt import parse_rfc3339, rfc3339
from tests.conftest import REPO_ROOT

RAW_FLOAT = re.compile(r"\d+\.\d{3,}")  # e.g. protected_until: 37680.0 or 0.2501


def _explain(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["explain", *argv, "--repo", str(REPO_ROOT)]) == 0
    return capsys.readouterr().out


def test_a_preempted_job_names_who_took_its_gpus_by_which_rule(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rd = read_run(run_dir)
    # a victim that is not started again in the same pass (elsewhere): at that instant it waits
    restarted = {(e.job, e.t) for e in rd.events if e.event == "start"}
    pre = next(
        e for e in rd.events
        if e.event == "preempt" and e.rule == "reclaim" and (e.job, e.t) not in restarted
    )
    out = _explain(capsys, pre.job, "--run", str(run_dir), "--at", str(pre.t))
    first = out.splitlines()[1]
    by = rd.jobs[pre.by]
    assert first.startswith("  preempted at")
    assert f"preempted at Tue 1 Dec 2026 {int(pre.t // 3600):02d}:{int(pre.t % 3600 // 60):02d} UTC by job {pre.by} of {by.account}" in first
    assert f"(reclaim, now: {pre.reason};" in first  # a fact of this moment, unlike the week's share
    assert "of its share this week" in first
    assert "minimum runtime" in first
    assert not RAW_FLOAT.search(first), first


def test_a_waiting_gang_says_its_reservation_and_expected_start(run_dir: Path, capsys: pytest.CaptureFixture[str],
                                                                config: Any) -> None:
    rd = read_run(run_dir)
    res = next(e for e in rd.events if e.event == "reserve" and e.at and e.at - e.t > 600)
    out = json.loads(_explain(capsys, res.job, "--run", str(run_dir), "--at", str(res.t), "--format", "json"))
    assert out["state"] == "waiting"
    n = len(res.nodes)
    assert f"{n} node{'s' if n != 1 else ''} reserved, expected start in ~" in out["summary"]
    assert re.search(r"waiting for \d+ GPUs on (\d+ whole nodes|one node)", out["summary"])
    team = [j for j, s in rd.jobs.items() if s.account == rd.jobs[res.job].account]
    # the team count is every teammate submitted and not yet started or done at that moment
    waiting = set()
    for e in rd.events:
        if e.t > res.t:
            break
        if e.job in team and e.event in ("submit", "preempt"):
            waiting.add(e.job)
        elif e.job in team and e.event in ("start", "end", "reject"):
            waiting.discard(e.job)
    assert out["team_position"]["of"] == len(waiting)
    assert 1 <= out["team_position"]["position"] <= len(waiting)
    score = out["team_position"]["score"]
    assert set(score) == {"total", "declared", "deadline", "age", "fairness", "fit", "boost", "inherited", "mode", "terms",
                          "load"}
    # every factor with its weight (issue 28): the fixed derivation's weighted parts are their products
    assert score["mode"] == "fixed"
    terms = {t["name"]: t for t in score["terms"]}
    assert set(terms) == {"declared", "deadline", "age", "fairness", "fit"}
    for name in terms:
        assert abs(terms[name]["factor"] * terms[name]["weight"] - score[name]) < 1e-9
    # and the load the weights were read at: fixed scales fit's weight by it, 1x to 3x
    assert score["load"] > 0.0
    fit = config.policy_for(rd.cluster).priority_weights.fit
    assert abs(terms["fit"]["weight"] - fit * min(3.0, max(1.0, score["load"]))) < 1e-9
    path = [r["name"] for r in out["path"]]
    assert path[-1] == rd.jobs[res.job].account and path[0] in ("olmo", "prior", "science", "safety")


def test_explain_only_reports_it_never_runs_the_simulator(run_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import allotment.core.scheduler
    import allotment.sim.runner

    def boom(*_: object, **__: object) -> None:
        raise AssertionError("explain re-ran the scheduler")

    monkeypatch.setattr(allotment.sim.runner._Sim, "run", boom)
    monkeypatch.setattr(allotment.core.scheduler.Scheduler, "run_pass", boom)
    job = read_run(run_dir).events[0].job
    assert "history:" in _explain(capsys, job, "--run", str(run_dir))


def test_a_run_made_from_another_config_is_refused(run_dir: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    other = tmp_path / "run"
    shutil.copytree(run_dir, other)
    meta = json.loads((other / "meta.json").read_text())
    meta["config_sha256"] = "0" * 64
    (other / "meta.json").write_text(json.dumps(meta))
    assert main(["explain", "x", "--run", str(other), "--repo", str(REPO_ROOT)]) == 2
    assert "is not the one" in capsys.readouterr().err


def test_a_live_job_is_explained_by_its_slurm_id_from_the_audit_log(state_dir: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    audit = [json.loads(x) for x in (state_dir / "audit.jsonl").read_text().splitlines()]
    pin = next(a for a in reversed(audit) if a["action"] == "set_priority" and a["phase"] == "outcome")
    assert main(["explain", pin["target"], "--state", str(state_dir)]) == 0
    out = capsys.readouterr().out
    from allotment.legible.livestate import read_state

    obs = read_state(state_dir).observation
    assert obs is not None
    backend_order = sorted(obs.pending(), key=lambda j: (-j.priority, j.id))  # Slurm starts them so
    position = [j.id for j in backend_order].index(pin["target"]) + 1
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(position, "th")
    assert out.startswith(f"job {pin['target']}: {position}{suffix} in the cluster's pending order ({pin['reason']})")
    assert "among" in out and "set_priority [order]" in out
    # the audit's outcome lines, each action once (its intent line is not a second action)
    assert "-> applied" in out and "-> None" not in out
    assert out.count("set_priority [order]") == sum(
        1 for a in audit if a["target"] == pin["target"] and a["action"] == "set_priority" and a["phase"] == "outcome")


def test_a_requeued_live_job_says_when_and_by_which_rule(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    audit = [json.loads(x) for x in (state_dir / "audit.jsonl").read_text().splitlines()]
    req = next(a for a in audit if a["action"] == "requeue" and a["phase"] == "outcome" and a["result"] == "applied")
    assert main(["explain", req["target"], "--state", str(state_dir), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ago = parse_rfc3339(out["at"]) - entry_time(req)
    assert ago == 1810  # the fixture's ticks: requeued at the second, explained after the fourth
    assert f"requeued 30 min ago (drain: {req['reason']})" in out["summary"]


def test_waiting_unallocated_work_says_it_only_fills_idle_gpus(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rd = read_run(run_dir)
    # a free job preempted and left waiting: not one started again in the same pass (work lent
    # on a session pool, or moved by consolidation, runs again at once)
    sub, pre = next(
        (e, s) for e in rd.events if e.event == "submit" and rd.jobs[e.job].min_runtime == 0
        for s in rd.job_events(e.job)
        if s.event == "preempt" and not any(x.event == "start" and x.t == s.t for x in rd.job_events(e.job)))
    out = json.loads(_explain(capsys, sub.job, "--run", str(run_dir), "--at", str(pre.t), "--format", "json"))
    assert out["state"] == "waiting" and out["min_runtime_s"] == 0
    assert "this job ran unallocated: free, preemptible at once" in out["summary"]
    assert "only gets GPUs that allocated work leaves idle" in out["summary"]


def test_json_history_keeps_whether_each_start_was_allocated(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rd = read_run(run_dir)
    start = next(e for e in rd.events if e.event == "start" and not e.allocated)
    out = json.loads(_explain(capsys, start.job, "--run", str(run_dir), "--at", str(start.t), "--format", "json"))
    starts = [e for e in out["events"] if e["event"] == "start"]
    assert starts[-1]["allocated"] is False and starts[-1]["t_s"] == start.t
    assert out["state"] == "running" and "unallocated: free, never charged" in out["summary"]


def test_json_times_are_rfc3339_utc_and_run_seconds_are_named_t_s(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rd = read_run(run_dir)
    pre = next(e for e in rd.events if e.event == "preempt")
    out = json.loads(_explain(capsys, pre.job, "--run", str(run_dir), "--at", str(pre.t), "--format", "json"))
    assert out["t_s"] == pre.t and "t" not in out
    assert out["time"] == rfc3339(rd.t0.timestamp() + pre.t)
    assert out["preemption"]["t_s"] == pre.t and out["preemption"]["time"] == out["time"]
    for e in out["events"]:
        assert "t" not in e and parse_rfc3339(e["time"]) == rd.t0.timestamp() + int(e["t_s"])
    # every other number that is a time is named *_t_s; no bare run seconds under a time's name
    assert all(not isinstance(v, float) for k, v in out.items() if k in ("time", "at", "start"))


def test_a_live_explanation_gives_wall_times_in_rfc3339(state_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    audit = [json.loads(x) for x in (state_dir / "audit.jsonl").read_text().splitlines()]
    req = next(a for a in audit if a["action"] == "requeue" and a["phase"] == "outcome")
    assert main(["explain", req["target"], "--state", str(state_dir), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["at"].endswith("Z") and parse_rfc3339(out["at"]) > 0
    assert out["observed"] is None or out["observed"]["submit"].endswith("Z")


def test_explain_shows_each_boost_of_the_job_applied_or_expired(run_dir: Path, config: Any) -> None:
    """Issue 28, item 4: the boost that counts, and one that expired (no effect on the score)."""
    import dataclasses
    import datetime as dt

    from allotment.compile.model import Boost
    from allotment.legible.explain import explain_run
    from allotment.legible.explain_words import render_text

    rd = read_run(run_dir)
    job, t = next((e.job, e.t) for e in rd.events if e.event == "submit" and rd.jobs[e.job].account == "tulu")
    f = explain_run(rd, config, job, t)
    assert [(b.target, b.active) for b in f.boosts] == [("account:tulu", True)]
    assert "boost account:tulu +2 until" in render_text(f, rd) and ": counts" in render_text(f, rd)
    gone = Boost("account:tulu", 2.0, rd.t0 + dt.timedelta(seconds=1), "over", "olivia.chen@ai2.example")
    pol = dataclasses.replace(config.policy_for(rd.cluster), boosts=(gone,))
    expired = dataclasses.replace(config, cluster_policies={**config.cluster_policies, rd.cluster: pol})
    g = explain_run(rd, expired, job, max(t, 600.0))
    assert [(b.target, b.active) for b in g.boosts] == [("account:tulu", False)]
    assert "expired: no effect" in render_text(g, rd)
    if g.team is not None:
        assert g.team.score.boost == 0.0


def test_a_run_made_with_set_is_explained_with_its_knobs(tmp_path: Path, config: Any) -> None:
    """Issue 28: a run simulated with ``--set within_team.mode=adaptive`` shows the adaptive
    factors and blended weights (meta.json keeps the run's --set), not the config's fixed ones."""
    from allotment.core.priority import blended
    from allotment.legible.explain import explain_run
    from allotment.legible.explain_words import render_text
    from tests.legible.rundir_fixture import make_run_dir

    run = make_run_dir(tmp_path / "adaptive", config, days=0.25, overrides={"within_team.mode": "adaptive"})
    rd = read_run(run)
    assert rd.meta["set"] == {"within_team.mode": "adaptive"}
    waiting = [(e.job, e.t) for e in rd.events if e.event == "submit"]
    for job, t in waiting:
        f = explain_run(rd, config, job, t + 1.0)
        if f.team is not None:
            assert f.team.score.mode == "adaptive"
            assert 0.0 <= f.team.score.total <= 1.0 + max(0.0, f.team.score.boost)
            assert {t.name for t in f.team.score.terms} == {"declared", "deadline", "age", "fairness", "fit"}
            # the weights are the two sets blended at the load explain shows (issue 28 item 1)
            pw = config.policy_for(rd.cluster).priority_weights
            assert f.team.score.load > 0.0
            assert [t.weight for t in f.team.score.terms] == pytest.approx(list(blended(pw, f.team.score.load)))
            assert f"weights read at load {f.team.score.load:.2f}" in render_text(f, rd)
            return
    raise AssertionError("no job waited in the run")
