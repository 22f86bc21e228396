"""Every bad configuration in the corpus gives exactly the expected file:line:col: messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.cli.main import main
from tests.config.corpus import AT, BAD, BASE, cases, materialize
from tests.conftest import assert_golden


def test_corpus_is_large_enough() -> None:
    assert len(cases()) >= 30


def test_base_of_the_corpus_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--repo", str(BASE), "--at", AT, "-q"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("case", cases())
def test_bad_config_reports_exact_positions(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], regen_golden: bool
) -> None:
    repo = materialize(case, tmp_path / "repo")
    code = main(["validate", "--repo", str(repo), "--at", AT, "-q"])
    out = capsys.readouterr()
    assert out.out == ""
    assert "Traceback" not in out.err
    assert out.err, "a bad config must say what is wrong"
    assert_golden(BAD / case / "expected.txt", out.err, regen_golden)
    has_error = any(": warning: " not in line for line in out.err.splitlines())
    assert code == (2 if has_error else 0)
