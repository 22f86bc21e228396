"""Golden files for ``allot compile`` on the corpus base and the bundled example: any change to
the rendered table or JSON shows up as a reviewed diff (``make regen``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.cli.main import main
from tests.config.corpus import BASE
from tests.conftest import assert_golden

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("fmt", ["table", "json"])
@pytest.mark.parametrize("repo", ["base", "bundled"])
def test_compile_output_matches_golden(
    repo: str, fmt: str, repo_root: Path, capsys: pytest.CaptureFixture[str], regen_golden: bool
) -> None:
    path = BASE if repo == "base" else repo_root
    at = "2026-06-01" if repo == "base" else "2026-11-29"
    assert main(["compile", "--repo", str(path), "--at", at, "--format", fmt]) == 0
    suffix = "json" if fmt == "json" else "txt"
    assert_golden(GOLDEN / f"{repo}.{suffix}", capsys.readouterr().out, regen_golden)
