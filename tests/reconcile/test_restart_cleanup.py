"""Issue 32, item 8: the reconciler's start removes the temporary files that writes interrupted
by a kill -9 left in its state dir (``.status.json.<hex>.tmp``, one per kill, never removed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.atomic_file import temp_beside
from allotment.cli.main import main
from allotment.reconcile.status import STATUS_FILE


def test_restart_removes_temp_files_of_interrupted_writes(
    config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    argv = ["reconcile", "--backend", "sim", "--source", str(config_repo), "--state", str(state),
            "--once"]
    assert main(argv) == 0
    left = [temp_beside(state / STATUS_FILE), temp_beside(state / "sim.json")]
    for t in left:
        t.write_text("half a file")
    assert main(argv) == 0
    assert not any(t.exists() for t in left)
    assert not [p.name for p in state.iterdir() if p.name.endswith(".tmp")]
