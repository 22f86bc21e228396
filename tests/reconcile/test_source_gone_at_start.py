"""Issue 32, item 6: restarting the reconciler while its local git ``--source`` is gone exited 2
before any tick, so a node that turned unhealthy meanwhile was never drained; a running loop
handles the same fault (SourceUnavailable, last good revision kept).  A start now does the same."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.reconcile.status import STATUS_FILE


def _argv(source: Path, state: Path) -> list[str]:
    return ["reconcile", "--backend", "sim", "--source", str(source), "--state", str(state),
            "--health-file", str(state.parent / "health.txt"), "--once"]


def test_a_start_with_the_local_source_gone_ticks_on_the_last_good_revision(
    config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    assert main(_argv(config_repo, state)) == 0
    before = json.loads((state / STATUS_FILE).read_text())
    node = sorted(json.loads((state / "sim.json").read_text())["nodes"])[0]
    shutil.rmtree(config_repo)
    (tmp_path / "health.txt").write_text(f"{node} unhealthy fan failed\n")  # while it was down
    capsys.readouterr()
    code = main(_argv(config_repo, state))
    out = capsys.readouterr()
    assert "not a folder, git repository or URL" not in out.err and "Traceback" not in out.err
    assert code == 1  # --once: the newest revision could not be fetched, as in a running loop
    assert f"drain {node}" in out.out  # the new unhealthy node is drained
    after = json.loads((state / STATUS_FILE).read_text())
    assert after["ticks"] == before["ticks"] + 1
    assert "SourceUnavailable" in json.dumps(after["conditions"])
    assert after["driving_revision"] == before["driving_revision"]  # the last good one, kept


def test_a_source_that_never_was_is_still_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_argv(tmp_path / "nosuch", tmp_path / "state")) == 2
    assert "not a folder, git repository or URL" in capsys.readouterr().err
