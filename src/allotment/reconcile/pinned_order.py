"""The core's wanted order as backend priorities, changing as few of them as possible.

Why: Slurm starts pending jobs in priority order and its main scheduler stops at the first job
that does not fit, so the jobs the core starts now must sit above every job it keeps waiting,
and the waiting ones in the core's order.  Renumbering the whole head as ``TOP - position`` on
every tick rewrote almost every job whenever the head moved (751 ``scontrol update`` calls in
224 ticks on the issue's replay): each costs controller time and none changed what Slurm does.

Here a job keeps its priority while it is still in the right place relative to the others.
``pin_order`` keeps the longest run of jobs whose present priorities already fall in the wanted
order (a longest decreasing subsequence) and gives new values only to the others, in the gaps
between their kept neighbours; only when a gap is too narrow is the whole band spread again.
Values live in ``(PINNED_FLOOR, PRIORITY_TOP]``, far above anything multifactor gives (the test
cluster's weights sum to 111,000), so a pinned job always goes before an unpinned one.  Two
bands: the jobs the core starts now in ``(START_FLOOR, PRIORITY_TOP]``, the waiting head in
``(PINNED_FLOOR, START_FLOOR]``, so a job that moves from one to the other always gets a new
value (the action that also clears its node pin, ``reconcile.active``).  A job we
pinned that is no longer ranked (requeued and not yet eligible again) is parked at
``PINNED_FLOOR`` so a stale high value cannot jump it ahead of the ranked jobs when it comes
back; the next tick ranks it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence

PRIORITY_TOP = 2_000_000_000  # Slurm priorities are 32-bit; leave headroom below 2^32 - 2
START_FLOOR = 1_500_000_000  # the jobs the core starts now sit above this, the waiting head below
PINNED_FLOOR = 1_000_000_000  # above any multifactor priority: a job here was pinned by us


def is_pinned(priority: int) -> bool:
    return priority >= PINNED_FLOOR


def is_start_band(priority: int) -> bool:
    return priority > START_FLOOR


def pin_order(
    wanted: Sequence[str],
    current: Mapping[str, int],
    floor: int = PINNED_FLOOR,
    top: int = PRIORITY_TOP,
) -> dict[str, int]:
    """New priorities for the jobs of ``wanted`` (best first) that need one; ``current`` holds
    each job's present priority.  After applying them, priorities strictly decrease along
    ``wanted`` and all lie in ``(floor, top]``."""
    keep = _kept(wanted, current, floor, top)
    new: dict[str, int] = {}
    hi = top + 1  # exclusive bounds of the gap being filled
    gap: list[str] = []
    for job in [*wanted, None]:
        if job is not None and job not in keep:
            gap.append(job)
            continue
        lo = current[job] if job is not None else floor
        if gap and not _fill(gap, hi, lo, new):
            return _spread(wanted, current, floor, top)
        gap = []
        hi = lo
    return {j: v for j, v in new.items() if current.get(j) != v}


def _kept(wanted: Sequence[str], current: Mapping[str, int], floor: int, top: int) -> set[str]:
    """The longest subsequence of jobs in the band whose priorities strictly decrease along
    ``wanted`` (patience sorting on negated values; ties broken by position, so it is stable)."""
    cand = [(i, -current[j]) for i, j in enumerate(wanted) if j in current and floor < current[j] <= top]
    tails: list[int] = []  # tails[k]: smallest negated value ending an increasing run of k+1
    tail_at: list[int] = []  # index into cand of that tail
    back: list[int] = [-1] * len(cand)
    for c, (_, v) in enumerate(cand):
        k = bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
            tail_at.append(c)
        else:
            tails[k] = v
            tail_at[k] = c
        back[c] = tail_at[k - 1] if k else -1
    out: set[str] = set()
    c = tail_at[-1] if tail_at else -1
    while c >= 0:
        out.add(wanted[cand[c][0]])
        c = back[c]
    return out


def _fill(gap: list[str], hi: int, lo: int, new: dict[str, int]) -> bool:
    """Evenly spaced values strictly between ``lo`` and ``hi`` for ``gap``; False if no room."""
    k, width = len(gap), hi - lo
    if width < k + 1:
        return False
    for i, job in enumerate(gap):
        new[job] = lo + width * (k - i) // (k + 1)
    return True


def _spread(wanted: Sequence[str], current: Mapping[str, int], floor: int, top: int) -> dict[str, int]:
    out: dict[str, int] = {}
    _fill(list(wanted), top + 1, floor, out)
    return {j: v for j, v in out.items() if current.get(j) != v}
