"""A state dir that is full, read-only or holds corrupt files: one line, exit 3 (or 2 for a bad
file), and never a status that says Ready (issue 14 item 8).  Full and read-only dirs are real
tmpfs mounts (root only; skipped with a message otherwise)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from allotment.backends.simulated import SimulatedBackend
from allotment.cli.main import main
from allotment.reconcile.reconciler import Reconciler
from allotment.reconcile.source import GitSource
from allotment.reconcile.state_errors import StateDirError
from allotment.reconcile.status import STATUS_FILE, is_ready, read_status
from tests.reconcile.conftest import T0, Clock


@pytest.fixture
def mount(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs at ``tmp_path/mnt``, unmounted at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _remount_ro(mnt: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)


def _argv(source: Path, state: Path) -> list[str]:
    return [
        "reconcile",
        "--backend",
        "sim",
        "--source",
        str(source),
        "--state",
        str(state),
        "--once",
    ]


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    errors = [ln for ln in err if ln.startswith("allot reconcile:")]
    assert len(errors) == 1 and "Traceback" not in "\n".join(err), err
    return errors[0]


def test_starting_on_a_read_only_state_dir_is_one_line_and_exit_3(
    mount: Path, config_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = mount / "state"
    assert main(_argv(config_repo, state)) == 0
    capsys.readouterr()
    _remount_ro(mount)
    assert main(_argv(config_repo, state)) == 3
    assert "Read-only file system" in _one_line_error(capsys)
    assert not is_ready(read_status(state), T0)


def test_a_full_disk_fails_the_tick_in_one_line_and_leaves_no_ready_status(
    mount: Path, config_repo: Path, sim: SimulatedBackend, clock: Clock
) -> None:
    state = mount / "state"
    rec = Reconciler(sim, GitSource(str(config_repo), "main", state), state, clock=clock)
    try:
        rec.tick()
        rec.tick()
        assert is_ready(read_status(state), clock.t)
        filler = mount / "filler"
        with filler.open("wb") as f, pytest.raises(OSError):
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        rec.status.drift = ["x" * 100_000]  # a status that no longer fits
        with pytest.raises(StateDirError) as exc:
            rec.tick()
    finally:
        rec.close()
    assert "No space left on device" in str(exc.value) and "\n" not in str(exc.value)
    # the old Ready status is gone (a full disk still allows unlinking it)
    assert not (state / STATUS_FILE).exists()
    assert not is_ready(read_status(state), clock.t)


@pytest.mark.parametrize(
    "content",
    ["null", '{"ticks": "many"}', '{"conditions": [{"type": "Ready"}]}', "[1, 2]", "{"],
    ids=["null", "wrong-type", "bad-condition", "a-list", "cut"],
)
def test_a_status_file_of_the_wrong_shape_is_one_line_and_exit_2(
    config_repo: Path, tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "st"
    state.mkdir()
    (state / STATUS_FILE).write_text(content)
    assert main(_argv(config_repo, state)) == 2
    assert "status.json: not a reconciler status file" in _one_line_error(capsys)
    assert main(["status", "--reconciler", "--state", str(state)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_corrupt_or_truncated_ledger_is_one_line_and_exit_2(
    config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "st"
    assert main(_argv(config_repo, state)) == 0
    db = sqlite3.connect(state / "ledger.sqlite")
    db.execute("PRAGMA journal_mode=DELETE")
    db.executemany(
        "INSERT INTO usage VALUES (?, 0, ?, 'teamb', 1.0)",
        [(f"j{i}", b * 3600) for i in range(200) for b in range(20)],
    )
    db.commit()
    db.close()
    capsys.readouterr()
    ledger = state / "ledger.sqlite"
    data = ledger.read_bytes()
    ledger.write_bytes(data[: len(data) // 2])  # truncated
    assert main(_argv(config_repo, state)) == 2
    assert "not a usage ledger" in _one_line_error(capsys)
    ledger.write_bytes(b"this is not sqlite" * 100)  # corrupt
    assert main(_argv(config_repo, state)) == 2
    assert "not a usage ledger" in _one_line_error(capsys)
    assert not is_ready(read_status(state), T0)


def test_status_json_is_kstatus_shaped(make_reconciler: Any, tmp_path: Path) -> None:
    make_reconciler().tick()
    raw = json.loads((tmp_path / "state" / STATUS_FILE).read_text())
    for c in raw["conditions"]:
        assert set(c) == {"type", "status", "reason", "message", "lastTransitionTime"}
        assert (
            c["status"] in ("True", "False")
            and c["lastTransitionTime"] == "2026-11-18T11:06:40Z"  # T0
        )


def test_a_status_file_from_before_kstatus_is_still_read(tmp_path: Path) -> None:
    old = {
        "backend": "slurm",
        "last_applied_revision": "ab" * 20,
        "last_tick": T0,
        "ticks": 3,
        "conditions": [
            {"type": "Ready", "status": True, "reason": "Synced", "message": "", "since": T0 - 60}
        ],
    }
    (tmp_path / STATUS_FILE).write_text(json.dumps(old))
    st = read_status(tmp_path)
    assert st.last_applied_revision == "ab" * 20 and st.ticks == 3
    ready = st.condition("Ready")
    assert ready is not None and ready.status and ready.since == T0 - 60


def test_status_json_times_are_rfc3339_utc_and_read_back_exactly(make_reconciler: Any, tmp_path: Path) -> None:
    rec = make_reconciler()
    rec.tick()
    raw = json.loads((tmp_path / "state" / STATUS_FILE).read_text())
    assert raw["last_tick"] == "2026-11-18T11:06:40.000Z"  # T0
    assert raw["last_backend_time"].endswith("Z") and "T" in raw["last_backend_time"]
    back = read_status(tmp_path / "state")
    assert back.last_tick == T0 and back.last_backend_time == rec.status.last_backend_time
