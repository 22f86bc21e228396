"""The shipped JSON Schemas: generated from the models, and agreeing with them on real files."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from allotment.config.files import read_repo_files
from allotment.config.kinds import KINDS, kind_of
from allotment.config.schemas import schema_file_name, schema_text
from allotment.config.yamlsafe import parse_yaml
from tests.conftest import assert_golden

SCHEMAS = Path(__file__).resolve().parents[2] / "src" / "allotment" / "schemas"


def _jsonable(value: Any) -> Any:
    """YAML dates and datetimes as the ISO strings a JSON-based editor would see."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / schema_file_name(kind)).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_shipped_schema_matches_the_models(kind: str, regen_golden: bool) -> None:
    assert_golden(SCHEMAS / schema_file_name(kind), schema_text(kind), regen_golden)


def test_every_bundled_file_is_valid_against_its_shipped_schema(repo_root: Path) -> None:
    files = read_repo_files(repo_root)
    seen = set()
    for path, data in files.items():
        kind = kind_of(path)
        assert kind is not None, path
        seen.add(kind)
        value, _, diags = parse_yaml(path, data)
        assert diags == []
        errors = list(_validator(kind).iter_errors(_jsonable(value)))
        assert errors == [], f"{path}: {errors[0].message}"
    assert seen == set(KINDS)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("budget", "owners: [a@b.org]\nchildren:\n  x:\n    share: -1\n"),
        ("budget", "owners: [a@b.org]\nchildren:\n  x:\n    shares: 1\n"),
        ("budget", "owners: [not an owner]\n"),
        ("budget", "owners: [a@b.org]\nchildren:\n  Bad Name:\n    share: 1\n"),
        ("scheduler", "lookback: 7days\n"),
        ("cluster", "node_groups: []\n"),
        ("boosts", "boosts:\n  - target: team:x\n"),
    ],
)
def test_schema_refuses_what_the_models_refuse(kind: str, text: str) -> None:
    value, _, _ = parse_yaml("f.yaml", text.encode())
    assert list(_validator(kind).iter_errors(_jsonable(value)))
    with pytest.raises(ValueError):
        KINDS[kind].model_validate(value)
