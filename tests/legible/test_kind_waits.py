"""Issue 29, item 3: every view shows p50/p90 wait per job kind, the kind is the policy's
(``sim/job_kind.py``), and one run gives one number per kind in ``metrics.json``, the
``allot simulate`` summary and ``allot report`` (its summary table and its distributions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from allotment.cli.main import main
from allotment.legible.report import report_context, waits_by_kind
from allotment.legible.rundir import read_run
from allotment.legible.words import duration
from allotment.sim.job_kind import JOB_KINDS
from tests.conftest import REPO_ROOT


def _simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[Path, str]:
    out = tmp_path / "run"
    code = main(["simulate", "--repo", str(REPO_ROOT), "--at", "2026-11-29", "--cluster", "h100",
                 *args, "--save", str(out)])
    assert code == 0
    return out, capsys.readouterr().out


@pytest.fixture(scope="module")
def scenario_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    import contextlib
    import io

    out = tmp_path_factory.mktemp("kinds") / "run"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["simulate", "--repo", str(REPO_ROOT), "--at", "2026-11-29", "--cluster", "h100",
                     "--scenario", "ai2", "--days", "1", "--seed", "3", "--save", str(out)])
    assert code == 0
    return out, buf.getvalue()


def test_one_run_gives_the_same_wait_per_kind_in_metrics_summary_and_report(scenario_run: tuple[Path, str]) -> None:
    out, summary = scenario_run
    m: dict[str, Any] = json.loads((out / "metrics.json").read_text())
    run = read_run(out)
    ctx = report_context(run, None)
    table = ctx["summary"][0]
    cdfs = {p.title: p for p in ctx["cdfs"]}
    seen = 0
    for k in JOB_KINDS:
        w = m["wait"][k]
        assert f"{k} {w['p50']:.0f}/{w['p90']:.0f}s (n={w['n']:,})" in summary
        assert table[f"wait p50 / p90 ({k})"] == f"{duration(w['p50'])} / {duration(w['p90'])}"
        if w["n"]:
            seen += 1
            label = cdfs[k].lines[0].label
            assert f"(n={w['n']}, p50 {duration(w['p50'])}, p90 {duration(w['p90'])})" in label
        else:
            assert k not in cdfs
    # not a vacuous agreement: the day has debug, interactive, train and batch work
    assert seen >= 4 and m["wait"]["interactive"]["n"] > 0
    # every job that waited is of exactly one kind
    assert sum(m["wait"][k]["n"] for k in JOB_KINDS) == m["wait"]["all"]["n"]
    assert sum(m["pending"][k]["n"] for k in JOB_KINDS) == m["pending"]["all"]["n"]


def _write_trace(path: Path) -> None:
    # labelled debug but protected for an hour: not a debug job by the policy (debug_threshold 15m);
    # labelled train but a 1-GPU job protected for a minute: a debug job by the policy
    lines = [
        {"id": "long", "submit": 0, "account": "core-lm", "gpus": 1, "work": 600, "kind": "debug", "min_runtime": 3600},
        {"id": "short", "submit": 5, "account": "core-lm", "gpus": 1, "work": 60, "kind": "train", "min_runtime": 60},
        {"id": "sess", "submit": 9, "account": "core-lm", "gpus": 2, "work": 900, "kind": "interactive", "min_runtime": 600 * 3},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def test_the_report_counts_debug_jobs_by_the_policy_not_by_the_trace_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.jsonl"
    _write_trace(trace)
    out, _ = _simulate(tmp_path, capsys, "--trace", str(trace))
    m = json.loads((out / "metrics.json").read_text())
    by_kind = waits_by_kind(read_run(out))
    assert {k: len(v) for k, v in by_kind.items()} == {k: m["wait"][k]["n"] for k in JOB_KINDS}
    assert (m["wait"]["debug"]["n"], m["wait"]["batch"]["n"], m["wait"]["interactive"]["n"]) == (1, 1, 1)
    assert m["wait"]["train"]["n"] == 0
    submits = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()[1:]]
    kinds = {e["job"]: e["kind"] for e in submits if e["event"] == "submit"}
    assert kinds == {"long": "batch", "short": "debug", "sess": "interactive"}


def test_an_event_log_without_its_header_is_one_usage_error_not_a_traceback(
    scenario_run: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(scenario_run[0], run)
    lines = (run / "events.jsonl").read_text().splitlines(keepends=True)
    (run / "events.jsonl").write_text("".join(lines[1:]))  # the header line lost
    assert main(["report", "--run", str(run), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "events.jsonl" in err and "Traceback" not in err
