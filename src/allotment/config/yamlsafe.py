"""Turn the bytes of one YAML file into plain Python values, treating the file as hostile.

Why not ``yaml.safe_load``: it gives no positions, silently keeps the last of duplicate keys and
expands aliases without limit.  Why not ruamel's round-trip loader: it is far too slow for a
10,000-file tree.  So libyaml's C composer builds the node graph (positions included) and this
module walks it once, building values and a ``SourceMap`` while refusing:

- any tag other than the plain JSON-like core (str, int, float, bool, null, map, seq, timestamp),
  so nothing in a config file can name a Python object;
- alias expansion beyond ``MAX_NODES`` nodes per file (alias bombs) and recursive aliases;
- nesting deeper than ``MAX_DEPTH``; duplicate keys; non-string keys; merge keys.

Speed: most files are plain (no aliases, no odd tags, nothing wrong), and positions are only
needed for a diagnostic.  So two *fast paths* come first, each giving up on anything unusual:
``yamlfast.fast_parse`` (a reader for the plain block subset, no libyaml at all), then libyaml
with a constructor that knows only the plain tags (``_Fallback`` on anything else).  Their source
map is lazy: built by the exact walk if a diagnostic ever asks.  Whatever both give up on goes
through the exact walk, which then decides.  Property tests check the paths agree.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar

import yaml

from allotment.config.sourcemap import DocPath, SourceMap
from allotment.config.yamlfast import fast_parse
from allotment.errors import Diagnostic

MAX_DEPTH = 32
MAX_NODES = 250_000
# Without aliases a document has at most about one node per character, so a text shorter than
# this cannot exceed MAX_NODES and may skip the counting walk; longer ones never do.
_FAST_MAX_CHARS = 200_000

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = frozenset(_CORE + t for t in ("str", "int", "float", "bool", "null", "timestamp"))
_MAP_TAG = _CORE + "map"
_SEQ_TAG = _CORE + "seq"
_constructor = yaml.constructor.SafeConstructor()
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Fallback(Exception):
    """The fast path met something it does not decide; the exact walk will."""


def _construct_undefined(self: Any, node: yaml.Node) -> Any:
    raise _Fallback


def _construct_timestamp(self: Any, node: yaml.ScalarNode) -> Any:
    value = yaml.constructor.SafeConstructor.construct_yaml_timestamp(self, node)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        value = value.astimezone(dt.UTC)
    return value


class _PlainConstructor(yaml.constructor.SafeConstructor):
    """SafeConstructor restricted to the plain tags; no aliases, merges or duplicate keys."""

    yaml_constructors: ClassVar[dict[Any, Any]] = {}
    yaml_multi_constructors: ClassVar[dict[Any, Any]] = {}

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects or node in self.recursive_objects:
            raise _Fallback  # an alias: let the exact walk count expansions
        return super().construct_object(node, deep)

    def construct_plain_map(self, node: yaml.MappingNode) -> Any:
        data: dict[str, Any] = {}
        yield data
        for key_node, value_node in node.value:
            if key_node.tag != _CORE + "str" or not isinstance(key_node, yaml.ScalarNode):
                raise _Fallback
            key = key_node.value
            if key in data:
                raise _Fallback
            data[key] = self.construct_object(value_node, deep=False)


_SC = yaml.constructor.SafeConstructor
for _tag, _fn in (
    ("str", _SC.construct_yaml_str),
    ("int", _SC.construct_yaml_int),
    ("float", _SC.construct_yaml_float),
    ("bool", _SC.construct_yaml_bool),
    ("null", _SC.construct_yaml_null),
    ("timestamp", _construct_timestamp),
    ("seq", _SC.construct_yaml_seq),
    ("map", _PlainConstructor.construct_plain_map),
):
    _PlainConstructor.add_constructor(_CORE + _tag, _fn)  # type: ignore[type-var]
_PlainConstructor.add_constructor(None, _construct_undefined)


def _find_cparser() -> Any:
    """libyaml's parser, or None (then every file takes the exact walk)."""
    try:
        from yaml import _yaml
    except ImportError:  # pragma: no cover
        return None
    return getattr(_yaml, "CParser", None)


_CParser: Any = _find_cparser()


class _PlainLoader(_CParser or object, _PlainConstructor, yaml.resolver.Resolver):  # type: ignore[misc]
    """CParser + the plain constructor + PyYAML's resolver: CSafeLoader with fewer tags."""

    def __init__(self, stream: str) -> None:
        _CParser.__init__(self, stream)
        _PlainConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)


class _NoAliasLoader(_PlainLoader):
    construct_object = yaml.constructor.SafeConstructor.construct_object


def _depth_ok(value: Any) -> bool:
    """Same rule as the exact walk (no node deeper than MAX_DEPTH), visiting containers only."""
    stack = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if d > MAX_DEPTH or (d == MAX_DEPTH and v):
            return False
        for x in v.values() if isinstance(v, dict) else v:
            if isinstance(x, (dict, list)):
                stack.append((x, d + 1))
    return True


def _fast_load(text: str) -> Any:
    """The plain value, or None when the exact walk must decide."""
    if _CParser is None:  # pragma: no cover
        return None
    # Without '&' there are no anchors, so no aliases: skip the per-node alias check.
    loader = _PlainLoader(text) if "&" in text else _NoAliasLoader(text)
    try:
        value = loader.get_single_data()
    except (_Fallback, yaml.YAMLError, ValueError, OverflowError, RecursionError):
        return None
    finally:
        loader.dispose()
    if not isinstance(value, (dict, list)) or not _depth_ok(value):
        return None
    return value


class _Refused(Exception):
    def __init__(self, node: yaml.Node, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


def _pos(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _describe_tag(tag: str) -> str:
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


class _Walker:
    def __init__(self, smap: SourceMap) -> None:
        self.smap = smap
        self.count = 0
        self.stack: set[int] = set()

    def walk(self, node: yaml.Node, path: DocPath, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise _Refused(node, f"document expands to more than {MAX_NODES} nodes (alias bomb?)")
        if depth > MAX_DEPTH:
            raise _Refused(node, f"nesting deeper than {MAX_DEPTH} levels")
        self.smap.values[path] = _pos(node)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node)
        if id(node) in self.stack:
            raise _Refused(node, "recursive alias")
        self.stack.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                if node.tag != _SEQ_TAG:
                    raise _Refused(node, f"tag {_describe_tag(node.tag)} is not allowed")
                return [self.walk(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
            if isinstance(node, yaml.MappingNode):
                if node.tag != _MAP_TAG:
                    raise _Refused(node, f"tag {_describe_tag(node.tag)} is not allowed")
                return self._mapping(node, path, depth)
            raise _Refused(node, "unexpected YAML node")  # pragma: no cover - libyaml has no others
        finally:
            self.stack.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, path: DocPath, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for knode, vnode in node.value:
            if knode.tag == _CORE + "merge":
                raise _Refused(knode, "merge keys (<<) are not supported; write the keys out")
            if not isinstance(knode, yaml.ScalarNode):
                raise _Refused(knode, "mapping keys must be plain strings")
            key = self._scalar(knode)
            if not isinstance(key, str):
                raise _Refused(knode, f"mapping key {knode.value!r} must be a string (quote it)")
            if key in out:
                raise _Refused(knode, f"duplicate key '{key}'")
            child = (*path, key)
            self.smap.keys[child] = _pos(knode)
            out[key] = self.walk(vnode, child, depth + 1)
        return out

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        tag = node.tag
        if tag == _CORE + "str":
            return node.value
        if tag not in _SCALAR_TAGS:
            raise _Refused(node, f"tag {_describe_tag(tag)} is not allowed")
        try:
            if tag == _CORE + "timestamp":
                value: Any = _constructor.construct_yaml_timestamp(node)
                if isinstance(value, dt.datetime) and value.tzinfo is not None:
                    value = value.astimezone(dt.UTC)
                return value
            return _constructor.construct_object(node, deep=True)
        except (ValueError, OverflowError, yaml.YAMLError) as exc:
            raise _Refused(node, f"invalid {_describe_tag(tag)} value {node.value!r}") from exc


def parse_yaml(file: str, data: bytes) -> tuple[Any, SourceMap, list[Diagnostic]]:
    """Return (value, source map, diagnostics).  On any diagnostic the value is None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _exact(file, data)
    body = text[1:] if text.startswith("\ufeff") else text
    value = None
    if len(body) < _FAST_MAX_CHARS:
        value = fast_parse(body)
        if value is None:
            value = _fast_load(body)
    if value is None:
        return _exact(file, data)

    def build() -> tuple[dict[DocPath, tuple[int, int]], dict[DocPath, tuple[int, int]]]:
        _, smap, _ = _exact(file, data)
        return smap.values, smap.keys

    return value, SourceMap(file, build=build), []


def _exact(file: str, data: bytes) -> tuple[Any, SourceMap, list[Diagnostic]]:
    """The exact walk: every refusal decided here, with positions."""
    smap = SourceMap(file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (
            None,
            smap,
            [Diagnostic(file, 0, 0, f"not valid UTF-8 (bad byte at offset {exc.start})")],
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and "single document" in exc.context:
            problem = "a config file holds one YAML document; remove the second '---'"
        return None, smap, [Diagnostic(file, line, col, f"YAML syntax error: {problem}")]
    except yaml.YAMLError as exc:
        return None, smap, [Diagnostic(file, 0, 0, f"YAML error: {exc}")]
    if root is None:
        return {}, smap, []
    try:
        value = _Walker(smap).walk(root, (), 0)
    except _Refused as exc:
        line, col = _pos(exc.node)
        return None, smap, [Diagnostic(file, line, col, exc.message)]
    except RecursionError:
        return None, smap, [Diagnostic(file, 1, 1, f"nesting deeper than {MAX_DEPTH} levels")]
    return value, smap, []
