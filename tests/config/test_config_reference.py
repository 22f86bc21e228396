"""docs/config-reference.md lists every field of every file kind, generated from the schemas."""

from __future__ import annotations

from pathlib import Path

from tests.config.reference_doc import regenerate
from tests.conftest import assert_golden


def test_config_reference_tables_match_the_schemas(repo_root: Path, regen_golden: bool) -> None:
    path = repo_root / "docs" / "config-reference.md"
    assert_golden(path, regenerate(path.read_text(encoding="utf-8")), regen_golden)
