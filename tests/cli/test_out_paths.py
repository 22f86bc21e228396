"""Every output flag is checked before any work (``cli/out_paths.py``), and a path the system
refuses mid-command is a one-line error naming it, exit 2, never a traceback (``cli/main.py``).

``/proc`` refuses new files to every user, root included (``os.access`` would not tell: root
passes it on a read-only mount), so it stands for a folder the command may not write."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from allotment.cli.main import main

REPO = Path(__file__).resolve().parents[2]  # the bundled example config
SIM = ["simulate", "--repo", str(REPO), "--scenario", "ai2", "--days", "30"]


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        ([*SIM, "--json", "/proc/allot/m.json"], "--json"),
        ([*SIM, "--events", "/proc/e.jsonl"], "--events"),
        ([*SIM, "--save", "/proc/run"], "--save"),
        (["sweep", "--repo", str(REPO), "--scenario", "ai2", "--seeds", "1-3",
          "--set", "reservations=1,2", "--json", "/proc/s.json"], "--json"),
        (["trace", "generate", "--repo", str(REPO), "--scenario", "ai2", "--days", "30",
          "-o", "/proc/t.jsonl"], "-o"),
        (["report", "--run", "/nowhere", "-o", "/proc/r.html"], "-o"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_any_work(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    t = time.perf_counter()
    code = main(argv)
    took = time.perf_counter() - t
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{flag} /proc/" in err and "Traceback" not in err, err
    assert err.count("\n") == 1, err
    assert took < 5  # a 30-day run or a 3-seed sweep was not started


def test_a_save_folder_that_is_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "run"
    f.write_text("mine\n")
    assert main([*SIM, "--save", str(f)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert f.read_text() == "mine\n"  # nothing lost


def test_missing_folders_of_an_output_are_made_as_before(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "m.json"
    assert main([*SIM[:-1], "0.05", "--json", str(out)]) == 0
    assert out.is_file()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".allot-probe-")]


def test_a_write_the_system_refuses_mid_command_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    # /dev/full takes the open and refuses the write: past every check, caught by main's net
    code = main([*SIM[:-1], "0.05", "--json", "/dev/full"])
    err = capsys.readouterr().err
    assert code == 2
    assert "No space left on device" in err and "Traceback" not in err
    assert err.count("\n") == 1
