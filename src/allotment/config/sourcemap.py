"""Where each value of a YAML document was written, so any later check can point at a line.

A document path is a tuple of mapping keys and sequence indexes, ``("children", "nlp", "share")``.
Two positions are kept per path: the value's and, for mapping entries, the key's (an unknown key is
reported at the key, a wrong value at the value).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DocPath = tuple[str | int, ...]


@dataclass(slots=True)
class SourceMap:
    """Positions (1-based line, col) of every node of one document, by document path."""

    file: str
    values: dict[DocPath, tuple[int, int]] = field(default_factory=dict)
    keys: dict[DocPath, tuple[int, int]] = field(default_factory=dict)

    def value(self, path: DocPath) -> tuple[int, int]:
        """Position of the value at ``path``; falls back to the nearest enclosing node."""
        while path:
            pos = self.values.get(path)
            if pos is not None:
                return pos
            path = path[:-1]
        return self.values.get((), (1, 1))

    def key(self, path: DocPath) -> tuple[int, int]:
        """Position of the key that introduces ``path`` (or of its value, for sequence items)."""
        pos = self.keys.get(path)
        return pos if pos is not None else self.value(path)
