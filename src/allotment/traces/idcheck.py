"""Duplicate-id and dangling-dependency checks in bounded memory.

A Python ``set`` of ten million job ids costs most of a gigabyte, which would defeat streaming.
We keep an 8-byte BLAKE2 digest and the line number of each id (16 bytes a job), a run of them
at a time in memory and the rest sorted in a temporary file (``IdIndex``).  Two different ids
sharing a 64-bit digest is possible in principle (about 3 in a million for ten million ids) and
would be reported as a duplicate; we accept that and say so in docs/trace-format.md.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from allotment.spill import Spill


def id_digest(job_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(job_id.encode("utf-8"), digest_size=8).digest(), "little")


_RUN: Final = 1 << 16  # ids held before they are sorted and spilled (1 MiB of digests and lines)


@dataclass(slots=True)
class IdIndex:
    """Ids seen so far (as digests) and the dependencies still to resolve.

    Why spilled: 16 bytes a job still grew with the trace (issue 32, item 5: 73 MiB for
    ``trace check`` of 1M jobs).  Every ``_RUN`` ids are sorted by digest (stably: lines stay in
    file order within a digest) and written to a ``Spill`` as a run; the checks then read the
    digest space a range at a time, ``ceil(ids / _RUN)`` equal ranges, each range's slice of
    every run found by bisection.  Digests are uniform hashes, so a range holds about ``_RUN``
    ids whatever the file's length; only many repeats of one id (each of them an error) make one
    range larger."""

    digests: array[int] = field(default_factory=lambda: array("Q"))  # the ids not yet in a run
    lines: array[int] = field(default_factory=lambda: array("Q"))
    # dependencies are rare, so keep them whole: (name, line, col)
    dependencies: list[tuple[str, int, int]] = field(default_factory=list)
    # and who depends: job id -> (its dependencies, line, col), for the cycle search
    dependents: dict[str, tuple[list[str], int, int]] = field(default_factory=dict)
    spill: Spill = field(default_factory=Spill)
    runs: list[_Run] = field(default_factory=list)  # written, in the order read
    total: int = 0
    run: int = _RUN  # ids a run (a test makes it small)

    def add(self, job_id: str, line: int) -> None:
        self.add_digest(id_digest(job_id), line)

    def add_digest(self, digest: int, line: int = 0) -> None:
        """An id by its digest (``line`` 0: the caller needs no line, ``repeated_digests``)."""
        self.digests.append(digest)
        self.lines.append(line)
        self.total += 1
        if len(self.digests) >= self.run:
            d, lines = _sorted(self.digests, self.lines)
            self.runs.append(_Run(self.spill, len(d), self.spill.write_bytes(d.tobytes()),
                                  self.spill.write_bytes(lines.tobytes())))
            self.digests, self.lines = array("Q"), array("Q")

    def depend(self, job_id: str, name: str, line: int, col: int) -> None:
        self.dependencies.append((name, line, col))
        self.dependents.setdefault(job_id, ([], line, col))[0].append(name)

    def cycles(self) -> list[Cycle]:
        """Every dependency cycle, once each (see ``dependency_cycles``)."""
        return dependency_cycles(self.dependents)

    def duplicates(self) -> list[tuple[int, int]]:
        """``(line, first_line)`` for every id line whose id appeared on an earlier line."""
        out: list[tuple[int, int]] = []
        for d, lines in self._ranges():
            new = np.empty(len(d), dtype=bool)
            new[0] = True
            np.not_equal(d[1:], d[:-1], out=new[1:])
            if new.all():
                continue
            first = lines[np.flatnonzero(new)][np.cumsum(new) - 1]  # each line's group's first line
            again = ~new
            out.extend(zip(lines[again].tolist(), first[again].tolist(), strict=True))
        return sorted(out)

    def repeated_digests(self) -> set[int]:
        """Digests seen more than once (works without line numbers)."""
        out: set[int] = set()
        for d, _ in self._ranges():
            out.update(d[1:][d[1:] == d[:-1]].tolist())
        return out

    def unknown_dependencies(self) -> list[tuple[str, int, int]]:
        """Dependencies naming no job in the file, in the order they were met."""
        if not self.dependencies:
            return []
        want = np.array([id_digest(name) for name, _, _ in self.dependencies], dtype=np.uint64)
        found = np.zeros(len(want), dtype=bool)
        for d, _ in self._ranges():
            i = np.searchsorted(d, want).clip(max=len(d) - 1)
            found |= d[i] == want
        return [dep for dep, ok in zip(self.dependencies, found.tolist(), strict=True) if not ok]

    def _ranges(self) -> Iterator[tuple[Any, Any]]:
        """The ids' (digests, lines) a range of digests at a time, sorted by digest then line."""
        if not self.total:
            return
        tail_d, tail_l = _sorted(self.digests, self.lines)
        runs: list[_Run | tuple[Any, Any]] = [*self.runs, (tail_d, tail_l)]
        parts = -(-self.total // self.run)
        at = [0] * len(runs)
        for r in range(parts):
            hi = ((r + 1) << 64) // parts  # 2^64 for the last: past every digest
            ds, ls = [], []
            for k, run in enumerate(runs):
                if isinstance(run, _Run):
                    j = run.search(hi)
                    d, lines = run.slice(at[k], j)
                else:
                    j = len(run[0]) if hi >> 64 else int(np.searchsorted(run[0], np.uint64(hi)))
                    d, lines = run[0][at[k]:j], run[1][at[k]:j]
                at[k] = j
                ds.append(d)
                ls.append(lines)
            d, lines = np.concatenate(ds), np.concatenate(ls)
            if len(d):
                order = np.lexsort((lines, d))
                yield d[order], lines[order]


def _sorted(digests: array[int], lines: array[int]) -> tuple[Any, Any]:
    """Copies of ``digests`` and ``lines`` ordered by digest, stably."""
    d = np.frombuffer(digests, dtype=np.uint64) if digests else np.zeros(0, dtype=np.uint64)
    lines_ = np.frombuffer(lines, dtype=np.uint64) if lines else np.zeros(0, dtype=np.uint64)
    order = np.argsort(d, kind="stable")
    return d[order], lines_[order]


@dataclass(frozen=True, slots=True)
class _Run:
    """``n`` digests sorted, and their lines, written to ``spill`` at ``digests_at``, ``lines_at``."""

    spill: Spill
    n: int
    digests_at: int
    lines_at: int

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        return int(self.spill.read("Q", self.digests_at + 8 * i, 1)[0])

    def search(self, hi: int) -> int:
        """How many digests are below ``hi``."""
        return self.n if hi >> 64 else bisect_left(self, hi)

    def slice(self, i: int, j: int) -> tuple[Any, Any]:
        """Digests and lines ``[i, j)``, read from the file."""
        d = np.frombuffer(self.spill.read("Q", self.digests_at + 8 * i, j - i), dtype=np.uint64)
        lines = np.frombuffer(self.spill.read("Q", self.lines_at + 8 * i, j - i), dtype=np.uint64)
        return d, lines


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
