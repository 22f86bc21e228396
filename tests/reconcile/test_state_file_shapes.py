"""Issue 32, item 7: every state file of the wrong shape is one line and exit 2 (or, for one
audit line nothing relies on, skipped with a warning), never a traceback, never accepted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allotment.cli.main import main
from allotment.reconcile.memory_file import MEMORY_FILE
from allotment.reconcile.observation_file import OBSERVATION_FILE, load_observation
from allotment.reconcile.state_errors import StateFileError
from allotment.reconcile.status import STATUS_FILE, read_status
from allotment.strict_json import loads_finite

DEEP = "[" * 100_000 + "]" * 100_000


def _argv(source: Path, state: Path) -> list[str]:
    return ["reconcile", "--backend", "sim", "--source", str(source), "--state", str(state),
            "--once"]


@pytest.fixture
def state(config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A state dir one reconciler tick made."""
    state = tmp_path / "state"
    assert main(_argv(config_repo, state)) == 0
    capsys.readouterr()
    return state


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("allot reconcile:"), err
    return err[0]


def test_an_audit_line_whose_seq_is_not_a_number_is_skipped_with_a_warning_not_a_crash(
    state: Path, config_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (state / "audit.jsonl").open("a") as f:
        f.write(json.dumps({"phase": "intent", "seq": "x", "batch": "b", "time": 1.0}) + "\n")
    n = len((state / "audit.jsonl").read_text().splitlines())
    for _ in range(2):  # every start, not only the first
        assert main(_argv(config_repo, state)) == 0
        err = capsys.readouterr().err
        assert f"audit.jsonl:{n}: 'seq' must be a whole number, got 'x'; line skipped" in err


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999"])
def test_a_memory_file_with_a_non_finite_number_is_one_line_and_exit_2(
    state: Path, config_repo: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    (state / MEMORY_FILE).write_text(
        '{"version": 1, "evicted_by": {}, "first_submit": {}, "yields": [], '
        f'"epoch": {value}, "epoch_usage": {{}}}}'
    )
    assert main(_argv(config_repo, state)) == 2
    assert MEMORY_FILE in _one_line(capsys)


@pytest.mark.parametrize("text", ['{"now": "x"}', "[1]", DEEP, '{"now": NaN}'])
def test_a_corrupt_sim_json_is_one_line_and_exit_2(
    state: Path, config_repo: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    (state / "sim.json").write_text(text)
    assert main(_argv(config_repo, state)) == 2
    assert "sim.json: not a simulated cluster's state" in _one_line(capsys)


def test_a_deeply_nested_or_non_finite_observation_or_status_is_a_bad_file(state: Path) -> None:
    for text in (DEEP, '{"at": Infinity, "nodes": [], "jobs": []}'):
        (state / OBSERVATION_FILE).write_text(text)
        with pytest.raises(StateFileError, match="not an observation"):
            load_observation(state)
    for text in (DEEP, '{"last_tick": NaN}'):
        (state / STATUS_FILE).write_text(text)
        with pytest.raises(StateFileError, match="not a reconciler status file"):
            read_status(state)


def test_strict_json_reads_what_json_writes() -> None:
    doc = {"a": [1, 2.5, -0.0, 1e300, None, True, "NaN"], "b": {"c": "x"}}
    assert loads_finite(json.dumps(doc)) == doc
