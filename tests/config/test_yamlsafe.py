"""The hostile-input YAML reader: plain values out, positions right, nothing executable in."""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.config.yamlsafe import MAX_DEPTH, parse_yaml

_keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=20),
    st.dates(min_value=dt.date(1970, 1, 1), max_value=dt.date(2100, 1, 1)),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_keys, _values, max_size=6))
def test_reads_back_what_safe_dump_writes(doc: dict[str, Any]) -> None:
    text = yaml.safe_dump(doc, allow_unicode=True)
    value, _, diags = parse_yaml("f.yaml", text.encode())
    assert diags == []
    assert value == yaml.safe_load(text)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_keys, st.dictionaries(_keys, st.integers(), max_size=3), max_size=5))
def test_source_map_points_at_each_key(doc: dict[str, dict[str, int]]) -> None:
    text = yaml.safe_dump(doc, default_flow_style=False)
    lines = text.splitlines()
    _, smap, _ = parse_yaml("f.yaml", text.encode())
    for k, inner in doc.items():
        line, col = smap.key((k,))
        assert lines[line - 1][col - 1 :].lstrip("'").startswith(k)  # 'no' is dumped quoted
        for k2 in inner:
            line, col = smap.key((k, k2))
            assert lines[line - 1][col - 1 :].lstrip("'").startswith(k2)


def test_empty_file_is_an_empty_mapping() -> None:
    assert parse_yaml("f.yaml", b"")[0] == {}
    assert parse_yaml("f.yaml", b"# only a comment\n")[0] == {}


def test_nesting_at_the_limit_is_fine_beyond_it_refused() -> None:
    ok = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert parse_yaml("f.yaml", ok.encode())[2] == []
    bad = "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    assert parse_yaml("f.yaml", bad.encode())[2][0].message.startswith("nesting deeper")


def test_datetimes_come_back_in_utc() -> None:
    value, _, _ = parse_yaml("f.yaml", b"t: 2026-01-01T10:00:00+02:00\n")
    assert value["t"] == dt.datetime(2026, 1, 1, 8, 0, tzinfo=dt.UTC)


def test_byte_order_mark_is_accepted() -> None:
    assert parse_yaml("f.yaml", "\ufeffa: 1\n".encode())[0] == {"a": 1}


def test_refusal_leaves_no_value() -> None:
    value, _, diags = parse_yaml("f.yaml", b"a: !!python/name:os.system\n")
    assert value is None
    assert diags[0].format() == "f.yaml:1:4: tag !!python/name:os.system is not allowed"
