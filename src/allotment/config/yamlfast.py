"""A fast reader for the plain subset of YAML that config files are almost always written in.

Why: libyaml through PyYAML costs ~50 us per small file in Python object overhead, too slow for
a 10,000-file tree in under a second.  Budget files are simple: block mappings, block sequences of
plain scalars, ``[a, b]`` flow lists, full-line comments.  This reader handles exactly that and
returns ``None`` for *anything* else (quotes with escapes, anchors, tags, multi-line scalars,
non-ASCII, tabs, trailing comments, ...), and the caller then uses the libyaml path.

Scalars are typed with PyYAML's own implicit-resolver table, so a value means here what it means
to PyYAML; only the unambiguous forms (decimal ints, simple floats, ``YYYY-MM-DD`` dates, strings)
are built here, the rest falls back.  A property test checks agreement with ``yaml.safe_load``.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import yaml

_RESOLVERS = yaml.resolver.Resolver.yaml_implicit_resolvers
_CORE = "tag:yaml.org,2002:"
_UNSAFE_TEXT = re.compile(r"[^\x20-\x7e\n]|\n[ ]*(\.\.\.|---|%)|\t")
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*):(?: (.*))?$")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_SIMPLE_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)$")
_SIMPLE_FLOAT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\.[0-9]+$")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_QUOTED = re.compile(r'"([^"\\]*)"$')
# A word no implicit resolver of PyYAML can claim (resolvers start only with digits, + - . < = ~
# and the letters y n t f o in either case): certainly a string.  The common case, checked first.
_WORD = re.compile(r"[a-eg-mp-su-xzA-EG-MP-SU-XZ_][A-Za-z0-9_.@/+-]*\Z")
_LINE = re.compile(r"^( *)([^ #\n][^\n]*?) *$", re.M)
_HASH_IN_CONTENT = re.compile(r"^ *[^ #\n][^\n]*#", re.M)

MAX_ITEMS = 10_000  # more than this in one flow list: let the exact walk count nodes


class _Unsupported(Exception):
    pass


def _scalar(text: str, flow: bool) -> Any:
    """A plain (or simply double-quoted) scalar, typed as PyYAML would type it."""
    if _WORD.match(text):
        return text
    if not text:
        raise _Unsupported
    if text[0] == '"':
        m = _QUOTED.match(text)
        if m is None:
            raise _Unsupported
        return m.group(1)
    if text[0] in _INDICATORS or text != text.strip() or ": " in text or " #" in text:
        raise _Unsupported
    if text.endswith(":") or (flow and any(c in text for c in ",[]{}:")):
        raise _Unsupported
    tag = _CORE + "str"
    for resolver_tag, regexp in _RESOLVERS.get(text[0], ()):
        if regexp.match(text):
            tag = resolver_tag
            break
    if tag == _CORE + "str":
        return text
    if tag == _CORE + "int" and _SIMPLE_INT.match(text):
        return int(text)
    if tag == _CORE + "float" and _SIMPLE_FLOAT.match(text):
        return float(text)
    if tag == _CORE + "timestamp" and _DATE.match(text):
        return dt.date.fromisoformat(text)
    raise _Unsupported


def _value(rest: str) -> Any:
    if rest.startswith("["):
        if not rest.endswith("]"):
            raise _Unsupported
        inner = rest[1:-1].strip()
        if not inner:
            return []
        items = inner.split(",")
        if len(items) > MAX_ITEMS:
            raise _Unsupported
        return [_scalar(item.strip(), flow=True) for item in items]
    return _scalar(rest, flow=False)


class _Parser:
    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.lines = lines
        self.i = 0

    def block(self, indent: int, depth: int) -> Any:
        if depth > 30:
            raise _Unsupported
        if self.lines[self.i][1].startswith("- ") or self.lines[self.i][1] == "-":
            return self.sequence(indent)
        return self.mapping(indent, depth)

    def sequence(self, indent: int) -> list[Any]:
        out = []
        while self.i < len(self.lines):
            ind, content = self.lines[self.i]
            if ind < indent:
                break
            if ind > indent or not content.startswith("- "):
                raise _Unsupported
            item = content[2:]
            if _WORD.match(item):
                out.append(item)
            elif _KEY_LINE.match(item) or item.startswith(("- ", "[")):
                raise _Unsupported  # mappings or lists inside lists: leave to libyaml
            else:
                out.append(_scalar(item, flow=False))
            self.i += 1
        return out

    def mapping(self, indent: int, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        while self.i < len(self.lines):
            ind, content = self.lines[self.i]
            if ind < indent:
                break
            m = _KEY_LINE.match(content)
            if ind > indent or m is None:
                raise _Unsupported
            key = _scalar(m.group(1), flow=False)
            if not isinstance(key, str) or key in out:
                raise _Unsupported
            rest = m.group(2)
            self.i += 1
            if rest:
                out[key] = _value(rest)
                continue
            if self.i < len(self.lines) and self.lines[self.i][0] > indent:
                out[key] = self.block(self.lines[self.i][0], depth + 1)
            elif (
                self.i < len(self.lines)
                and self.lines[self.i][0] == indent
                and (self.lines[self.i][1].startswith("- "))
            ):
                raise _Unsupported  # "key:\n- item" at the same indent: legal, left to libyaml
            else:
                out[key] = None
        return out


def fast_parse(text: str) -> dict[str, Any] | None:
    """The document as plain values, or None when it is outside the subset (or not a mapping)."""
    if _UNSAFE_TEXT.search(text) or text.startswith(("---", "...", "%")):
        return None
    if _HASH_IN_CONTENT.search(text):
        return None  # a trailing comment or a '#' in a value: leave it to libyaml
    lines = [(len(indent), content) for indent, content in _LINE.findall(text)]
    if not lines or lines[0][0] != 0:
        return None
    parser = _Parser(lines)
    try:
        value = parser.block(0, 0)
    except (_Unsupported, ValueError):
        return None
    if parser.i != len(lines) or not isinstance(value, dict):
        return None
    return value
