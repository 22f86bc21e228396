"""Where each value of a YAML document was written, so any later check can point at a line.

A document path is a tuple of mapping keys and sequence indexes, ``("children", "nlp", "share")``.
Two positions are kept per path: the value's and, for mapping entries, the key's (an unknown key is
reported at the key, a wrong value at the value).

Most files are valid and most positions are never asked for, so a map can be *lazy*: it holds
the file's text and a function that builds the positions on first use (see ``yamlsafe``).
"""

from __future__ import annotations

from collections.abc import Callable

DocPath = tuple[str | int, ...]
Positions = dict[DocPath, tuple[int, int]]


class SourceMap:
    """Positions (1-based line, col) of every node of one document, by document path."""

    __slots__ = ("_build", "_keys", "_values", "file")

    def __init__(
        self,
        file: str,
        values: Positions | None = None,
        keys: Positions | None = None,
        build: Callable[[], tuple[Positions, Positions]] | None = None,
    ) -> None:
        self.file = file
        self._values: Positions = values if values is not None else {}
        self._keys: Positions = keys if keys is not None else {}
        self._build = build

    def _ensure(self) -> None:
        if self._build is not None:
            build, self._build = self._build, None
            self._values, self._keys = build()

    @property
    def values(self) -> Positions:
        self._ensure()
        return self._values

    @property
    def keys(self) -> Positions:
        self._ensure()
        return self._keys

    def value(self, path: DocPath) -> tuple[int, int]:
        """Position of the value at ``path``; falls back to the nearest enclosing node."""
        values = self.values
        while path:
            pos = values.get(path)
            if pos is not None:
                return pos
            path = path[:-1]
        return values.get((), (1, 1))

    def key(self, path: DocPath) -> tuple[int, int]:
        """Position of the key that introduces ``path`` (or of its value, for sequence items)."""
        pos = self.keys.get(path)
        return pos if pos is not None else self.value(path)
