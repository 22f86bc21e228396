"""Sorting a stream of jobs by submit time in bounded memory (external merge sort).

Sources are usually sorted (SWF and the Alibaba trace are) but sacct and hand-made CSVs are not,
and the canonical trace must be.  Records are sorted in chunks of ``chunk`` in memory; when there
is more than one chunk each is pickled to a temporary file and the runs are merged with
``heapq.merge``, so memory is one chunk plus one record per run.
"""

from __future__ import annotations

import heapq
import pickle
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

T = TypeVar("T")

DEFAULT_CHUNK = 20_000  # about 6 MB of records in memory at once
MAX_FANIN = 128  # runs merged at once; more are first merged into longer runs (open files)


def _spill(items: list[Any], folder: Path, index: int, batch: int) -> Path:
    """Write one sorted run, ``batch`` records per pickle call (fewer calls; the merge then
    holds one batch per run, so the batch is kept small next to the chunk)."""
    path = folder / f"run{index:05d}.pkl"
    with path.open("wb") as fh:
        for i in range(0, len(items), batch):
            pickle.dump(items[i : i + batch], fh, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _replay(fh: IO[bytes]) -> Iterator[Any]:
    while True:
        try:
            batch = pickle.load(fh)  # our own temporary file, written just above
        except EOFError:
            return
        yield from batch


def external_sort(
    items: Iterable[T],
    key: Callable[[T], Any],
    *,
    chunk: int = DEFAULT_CHUNK,
    fanin: int = MAX_FANIN,
) -> Generator[T, None, None]:
    """Yield ``items`` sorted by ``key`` (stable), holding at most ``chunk`` of them in memory."""
    it = iter(items)
    buf: list[T] = []
    for item in it:
        buf.append(item)
        if len(buf) >= chunk:
            break
    else:  # everything fit in one chunk: no temporary files at all
        buf.sort(key=key)
        yield from buf
        return
    batch = max(1, min(1024, chunk // 64))
    with tempfile.TemporaryDirectory(prefix="allot-sort-") as tmp:
        folder = Path(tmp)
        runs: list[Path] = []
        while buf:
            buf.sort(key=key)
            runs.append(_spill(buf, folder, len(runs), batch))
            buf = []
            for item in it:
                buf.append(item)
                if len(buf) >= chunk:
                    break
        while len(runs) > fanin:  # cascade: keep the number of open files bounded
            merged = folder / f"merged{len(runs):07d}-{runs[0].name}"
            with merged.open("wb") as out:
                batch_buf: list[Any] = []
                for item in _merge(runs[:fanin], key):
                    batch_buf.append(item)
                    if len(batch_buf) >= batch:
                        pickle.dump(batch_buf, out, protocol=pickle.HIGHEST_PROTOCOL)
                        batch_buf = []
                if batch_buf:
                    pickle.dump(batch_buf, out, protocol=pickle.HIGHEST_PROTOCOL)
            for p in runs[:fanin]:
                p.unlink()
            runs = [merged, *runs[fanin:]]  # first: it holds the earliest inputs (stability)
        yield from _merge(runs, key)


def _merge(runs: list[Path], key: Callable[[Any], Any]) -> Iterator[Any]:
    handles = [p.open("rb") for p in runs]
    try:
        yield from heapq.merge(*(_replay(h) for h in handles), key=key)
    finally:
        for h in handles:
            h.close()
