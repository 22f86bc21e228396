"""Duplicate-id and dangling-dependency checks in bounded memory.

A Python ``set`` of ten million job ids costs most of a gigabyte, which would defeat streaming.
We keep an 8-byte BLAKE2 digest and the line number of each id in flat arrays (16 bytes a job)
and sort them once at the end.  Two different ids sharing a 64-bit digest is possible in
principle (about 3 in a million for ten million ids) and would be reported as a duplicate; we
accept that and say so in docs/trace-format.md.
"""

from __future__ import annotations

import hashlib
from array import array
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def id_digest(job_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(job_id.encode("utf-8"), digest_size=8).digest(), "little")


@dataclass(slots=True)
class IdIndex:
    """Ids seen so far (as digests) and the dependencies still to resolve."""

    digests: array[int] = field(default_factory=lambda: array("Q"))
    lines: array[int] = field(default_factory=lambda: array("Q"))
    # dependencies are rare, so keep them whole: (name, line, col)
    dependencies: list[tuple[str, int, int]] = field(default_factory=list)
    # and who depends: job id -> (its dependencies, line, col), for the cycle search
    dependents: dict[str, tuple[list[str], int, int]] = field(default_factory=dict)

    def add(self, job_id: str, line: int) -> None:
        self.digests.append(id_digest(job_id))
        self.lines.append(line)

    def depend(self, job_id: str, name: str, line: int, col: int) -> None:
        self.dependencies.append((name, line, col))
        self.dependents.setdefault(job_id, ([], line, col))[0].append(name)

    def cycles(self) -> list[Cycle]:
        """Every dependency cycle, once each (see ``dependency_cycles``)."""
        return dependency_cycles(self.dependents)

    def duplicates(self) -> list[tuple[int, int]]:
        """``(line, first_line)`` for every id line whose id appeared on an earlier line.

        Sorts a copy of the digests only (8 bytes a job); positions are looked up just for the
        rare digests that repeat."""
        repeated = self._repeated()
        if repeated is None:
            return []
        d = np.frombuffer(self.digests, dtype=np.uint64)
        lines = np.frombuffer(self.lines, dtype=np.uint64)
        where = np.nonzero(np.isin(d, repeated))[0]
        first: dict[int, int] = {}
        out: list[tuple[int, int]] = []
        for i in sorted(where.tolist(), key=lambda i: int(lines[i])):
            key, line = int(d[i]), int(lines[i])
            if key in first:
                out.append((line, first[key]))
            else:
                first[key] = line
        return sorted(out)

    def _repeated(self) -> Any:
        if not self.digests:
            return None
        s = np.sort(np.frombuffer(self.digests, dtype=np.uint64))
        repeated = np.unique(s[1:][s[1:] == s[:-1]])
        return repeated if len(repeated) else None

    def repeated_digests(self) -> set[int]:
        """Digests seen more than once (works without line numbers, see ``DigestSet``)."""
        r = self._repeated()
        return set() if r is None else {int(x) for x in r.tolist()}

    def unknown_dependencies(self) -> list[tuple[str, int, int]]:
        """Dependencies naming no job in the file."""
        if not self.dependencies:
            return []
        d = np.sort(np.frombuffer(self.digests, dtype=np.uint64))
        out = []
        for name, line, col in self.dependencies:
            h = np.uint64(id_digest(name))
            i = int(np.searchsorted(d, h))
            if i >= len(d) or d[i] != h:
                out.append((name, line, col))
        return out


@dataclass(frozen=True, slots=True)
class Cycle:
    """Jobs that wait for each other, in dependency order, and where the first is written."""

    jobs: tuple[str, ...]
    line: int
    col: int


def dependency_cycles(graph: dict[str, tuple[list[str], int, int]]) -> list[Cycle]:
    """Cycles in ``job -> (dependencies, line, col)``, found by an iterative depth-first search.

    Only jobs that depend on something can be on a cycle, so the graph holds just those (rare in
    traces; the search costs nothing for the others).  Each cycle is reported once, starting at
    its earliest line, so the message is the same whichever job the search met first."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    out: list[Cycle] = []
    for root in sorted(graph, key=lambda j: graph[j][1]):
        if root in state:
            continue
        path: list[str] = [root]
        todo: list[list[str]] = [list(graph[root][0])]
        state[root] = 1
        while path:
            if not todo[-1]:
                state[path.pop()] = 2
                todo.pop()
                continue
            nxt = todo[-1].pop()
            if nxt not in graph or state.get(nxt) == 2:
                continue
            if state.get(nxt) == 1:
                ring = path[path.index(nxt) :]
                k = min(range(len(ring)), key=lambda i: graph[ring[i]][1])
                ring = ring[k:] + ring[:k]
                _, line, col = graph[ring[0]]
                out.append(Cycle(tuple(ring), line, col))
                continue
            state[nxt] = 1
            path.append(nxt)
            todo.append(list(graph[nxt][0]))
    return sorted(out, key=lambda c: c.line)
