"""The fast YAML paths never disagree with the exact walk: same value, or they step aside."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.config.yamlfast import fast_parse
from allotment.config.yamlsafe import _exact, _fast_load, parse_yaml
from tests.config.corpus import BAD, BASE

# Scalars chosen to hit PyYAML's implicit typing: booleans, octal, sexagesimal, nulls, dates ...
_TRICKY = st.sampled_from(
    [
        "yes",
        "No",
        "on",
        "OFF",
        "y",
        "n",
        "true",
        "False",
        "null",
        "~",
        "Null",
        "012",
        "0x1f",
        "1_000",
        "1:30",
        "-1",
        "+2",
        "0",
        "7",
        "1.5",
        ".5",
        "1e3",
        ".inf",
        "-.nan",
        "2026-01-31",
        "2026-01-31T10:00:00Z",
        "=",
        "<<",
        "a@b.org",
        "user:alice",
        "x y",
        "t1",
        "f",
        "o",
        "ab#c",
        '"quoted"',
        '"with \\" escape"',
        "'single'",
        "*alias",
        "&anchor x",
        "!tag x",
        "@handle",
        "- dash",
        "[a, b]",
        "[]",
        "[yes, 2, x]",
        "{a: 1}",
        "a: b",
        "%x",
        "`x",
        "|",
        ">",
    ]
)
_WORDS = st.from_regex(r"[a-z][a-z0-9_.-]{0,6}", fullmatch=True)
_SCALAR = st.one_of(_TRICKY, _WORDS)


@st.composite
def _doc(draw: st.DrawFn, indent: int = 0, depth: int = 0) -> str:
    lines = []
    for key in draw(st.lists(st.one_of(_WORDS, _TRICKY), min_size=1, max_size=4)):
        pad = " " * indent
        kind = draw(st.sampled_from(["scalar", "list", "map", "empty", "comment"]))
        if kind == "scalar":
            lines.append(f"{pad}{key}: {draw(_SCALAR)}")
        elif kind == "list":
            lines.append(f"{pad}{key}:")
            sub = " " * (indent + draw(st.sampled_from([0, 2, 4])))
            lines += [f"{sub}- {draw(_SCALAR)}" for _ in range(draw(st.integers(0, 3)))]
        elif kind == "map" and depth < 3:
            lines.append(f"{pad}{key}:")
            lines.append(draw(_doc(indent + 2, depth + 1)))
        elif kind == "comment":
            lines.append(f"{pad}# {draw(_SCALAR)}")
        else:
            lines.append(f"{pad}{key}:")
    return "\n".join(lines)


def _safe_load(text: str) -> object:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return "<error>"


@settings(max_examples=200, deadline=None)
@given(_doc())
def test_fast_parse_agrees_with_pyyaml_or_steps_aside(text: str) -> None:
    value = fast_parse(text)
    if value is not None:
        assert value == _safe_load(text)


@settings(max_examples=120, deadline=None)
@given(_doc())
def test_plain_libyaml_path_agrees_with_the_exact_walk_or_steps_aside(text: str) -> None:
    value = _fast_load(text)
    if value is not None:
        exact, _, diags = _exact("f.yaml", text.encode())
        assert diags == []
        assert value == exact


@settings(max_examples=120, deadline=None)
@given(_doc())
def test_parse_yaml_gives_the_exact_walks_value_and_positions(text: str) -> None:
    value, smap, diags = parse_yaml("f.yaml", text.encode())
    exact, esmap, ediags = _exact("f.yaml", text.encode())
    assert (value, diags) == (exact, ediags)
    assert (smap.values, smap.keys) == (esmap.values, esmap.keys)


def test_every_corpus_and_bundled_file_reads_the_same_on_every_path(repo_root: Path) -> None:
    files = [
        p
        for root in (
            BAD,
            BASE,
            repo_root / "budgets",
            repo_root / "inventory",
            repo_root / "policies",
        )
        for p in root.rglob("*.yaml")
    ]
    assert len(files) > 80
    fast_used = 0
    for path in files:
        data = path.read_bytes()
        exact, _, diags = _exact(path.name, data)
        value, _, diags2 = parse_yaml(path.name, data)
        assert (value, diags2) == (exact, diags), path
        try:
            text = data.decode()
        except UnicodeDecodeError:
            continue
        fast = fast_parse(text)
        if fast is not None:
            fast_used += 1
            assert fast == exact, path
    assert fast_used > 40  # the fast reader really is the common path
