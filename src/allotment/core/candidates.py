"""Each queue's jobs in score order, kept between visits while nothing the order reads changed:
the fast walk's reuse behind ``Scheduler._candidates`` (``core.walk``; the reference scores the
whole queue on every visit).

A visit offers the ``queue_depth`` best untried jobs of its queue by the whole within-team score
(``Scorer.best``).  The score key ``(-total, eligible, id)`` is a total order (ids are unique), so
those are the first ``queue_depth`` untried jobs of the whole queue sorted once by it: a visit only
has to leave out the tried ones.  ``Scorer.total`` of a job of queue ``q`` reads, besides the job
itself (a requeued job is a new ``Pend``, so it changes the queue):

* the epoch ``t`` (age, deadline, boosts) and the dependants map -- the same for a whole pass,
  and for every pass of one epoch;
* the load, through the fit weight, only for the jobs that fit (``fit_weight_key``): when none
  does, the order holds whatever the demand;
* the running GPUs of the users of ``q``'s account, its own and its dependants' (dependants are
  of the same account: ``priority.dependants``) -- ``Accounting.user_version[account id]``;
* whether each job's GPUs fit the best node's free GPUs: ``max_free`` clamped to the queue's
  smallest job minus one and its largest job gives the same answer for every job;
* the queue's jobs -- ``QueueSet.version[q]``.

The order is reused while all of these are the same, and rebuilt (with the same ``Scorer``) when
one differs -- but for the fit alone: when only ``max_free`` moved, only the jobs whose GPUs lie
between its old and new value (clamped) fit where they did not or no longer fit, and only they
are scored again and put back in place by their key (``refit``); every other job's score is
the same computation on the same inputs, bit for bit, and the keys are a total order, so the
list is the one a whole sort gives.  (A fit change was a fifth of all rebuilds in a 3-day
``ai2`` run.)  ``tests/core/test_candidates.py`` and ``tests/sim/test_walk_equivalence.py``
check the kept orders against scoring the whole queue.

A queue of ``SMALL`` jobs or more (in the ``fixed`` derivation) is not sorted whole: a sweep's
thousands of jobs are one user's, whose fairness term moves at each of that user's starts and
ends, so the whole queue was scored again at each (issue 27: 4.8 M scores in a 27-day
Philly-shaped run).  Its order is a lazy merge (``core.fairness_merge``) of the users' jobs:
while no boost is active, grouped once for the whole run by user, GPUs and declared priority and
kept by age (``AgedOrder``: along such a group the heads never rise, at any epoch), else grouped
once per epoch by their epoch-static score (``MergedOrder``); a change of the epoch, the users,
the fit or the jobs begins the merge again, and a visit scores only the runs its first
candidates need.  ``tests/core/test_fairness_merge.py`` checks both against sorting by
``Scorer.key``, across epochs too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from allotment.core.dependant_list import DependantList
from allotment.core.fairness_merge import AgedOrder, LazyOrder, MergedOrder
from allotment.core.priority import Scorer
from allotment.core.sorted_pairs import key_place
from allotment.core.state import Pend

# what ``CandidateOrders.state`` says a kept order needs: ``Final``, so that mypyc makes them
# constants here and in the scheduler (plain globals were three dictionary reads per visit)
KEPT: Final = 0
REFIT: Final = 1
REBUILD: Final = 2


SMALL = 32  # a queue shorter than this is scored whole: the grouping costs more than a few scores


class _Order:
    """One queue's jobs best first with their score keys, and what that order was computed from;
    or, for a long queue, its lazy merge (``merged``, ``core.fairness_merge``: then ``keys`` is
    empty and ``jobs`` the merge's emitted prefix)."""

    __slots__ = ("deps", "fit", "hi", "jobs", "keys", "lo", "load", "merged", "queued", "t", "users")

    def __init__(self, t: float, load: float, deps: Mapping[str, DependantList], fit: int, users: int,
                 queued: int, keys: list[tuple[float, float, str]], jobs: list[Pend], lo: int, hi: int,
                 merged: LazyOrder | None = None) -> None:
        self.t, self.load, self.deps, self.fit, self.users, self.queued = t, load, deps, fit, users, queued
        self.keys, self.jobs, self.lo, self.hi, self.merged = keys, jobs, lo, hi, merged


def fit_key(max_free: int, lo: int, hi: int) -> int:
    """``max_free`` clamped to ``[lo - 1, hi]``: for every job with ``lo <= gpus <= hi``,
    ``gpus <= max_free`` has the same answer for both (the only way the score reads it)."""
    return hi if max_free > hi else lo - 1 if max_free < lo else max_free


def fit_weight_key(load: float, fit: int, lo: int) -> float:
    """What of ``load`` the order reads: the load factor of ``Scorer``'s fit weight, or -1 when
    no job fits (``fit < lo``), since the weight is then added to no score."""
    return -1.0 if fit < lo else min(3.0, max(1.0, load))


class CandidateOrders:
    """The kept orders, one per queue."""

    def __init__(self, small: int | None = None) -> None:
        self._by: dict[str, _Order] = {}
        self.small = SMALL if small is None else small  # read now: a test may merge every queue

    def state(self, q: str, t: float, load: float, deps: Mapping[str, DependantList], max_free: int,
              users: int, queued: int) -> int:
        """Does the kept order of ``q`` hold for these inputs (``KEPT``), or does it need a
        ``refit`` (only the fit moved) or a ``rebuild`` first?"""
        o = self._by.get(q)
        if (o is None or o.queued != queued or o.users != users or o.t != t or o.deps is not deps
                or o.load != fit_weight_key(load, o.fit, o.lo)):
            return REBUILD
        return KEPT if o.fit == fit_key(max_free, o.lo, o.hi) else REFIT

    def rebuild(self, q: str, every: list[Pend], scorer: Scorer, t: float, load: float,
                deps: Mapping[str, DependantList], max_free: int, users: int, queued: int) -> None:
        """Order ``every`` job of ``q`` by ``scorer`` (the pass's) and keep it with its inputs."""
        if len(every) >= self.small and scorer.mode == "fixed" and scorer.memo:
            old = self._by.get(q)
            m = old.merged if old is not None else None
            if m is not None and m.holds(scorer):
                if old is not None and old.queued != queued:
                    m.update(every, scorer)
            else:  # grouped for every epoch while no boost is active, else for this one
                m = AgedOrder(scorer, every) if AgedOrder.fits(scorer) else None
                if m is None or not m.holds(scorer):
                    m = MergedOrder(scorer, every)
            if m.holds(scorer) and m.restart(scorer):
                lo, hi = m.gpus_range()
                fit = fit_key(max_free, lo, hi)
                self._by[q] = _Order(t, fit_weight_key(load, fit, lo), deps, fit, users, queued, [], m.out, lo, hi, m)
                return
        lo, hi = _gpus_range(every)
        fit = fit_key(max_free, lo, hi)
        keys, jobs = scorer.ranked(every)
        self._by[q] = _Order(t, fit_weight_key(load, fit, lo), deps, fit, users, queued, keys, jobs, lo, hi)

    def refit(self, q: str, scorer: Scorer, load: float, max_free: int) -> None:
        """After ``state`` said ``REFIT``: score again the jobs of ``q`` whose fit changed, and
        put each back where its key goes."""
        o = self._by[q]
        fit = fit_key(max_free, o.lo, o.hi)
        m = o.merged
        if m is not None:  # the merge begins again with this fit: no whole order to patch
            if not m.restart(scorer):  # pragma: no cover - the same inputs restarted it exactly before
                raise AssertionError("a kept merge turned inexact on a fit change")
            o.jobs, o.fit, o.load = m.out, fit, fit_weight_key(load, fit, o.lo)
            return
        a, b = (o.fit, fit) if o.fit < fit else (fit, o.fit)
        keys: list[tuple[float, float, str]] = []
        jobs: list[Pend] = []
        moved: list[Pend] = []
        was_keys, was_jobs = o.keys, o.jobs
        for j in range(len(was_jobs)):  # (``zip`` is a generic iterator under mypyc)
            p = was_jobs[j]
            if a < p.gpus <= b:
                moved.append(p)
            else:
                keys.append(was_keys[j])
                jobs.append(p)
        for p in moved:
            k = scorer.key(p)
            i = key_place(keys, k)
            keys.insert(i, k)
            jobs.insert(i, p)
        o.keys, o.jobs, o.fit, o.load = keys, jobs, fit, fit_weight_key(load, fit, o.lo)

    def best(self, q: str, jobs: Callable[[], list[Pend]], scorer: Callable[[], Scorer], t: float, load: float,
             deps: Mapping[str, DependantList], max_free: int, users: int, queued: int,
             tried: set[str], depth: int) -> list[Pend]:
        """The first ``depth`` jobs of ``q`` not in ``tried``, best first (``Scorer.best`` over
        them): ``state``, ``refit`` or ``rebuild`` if it says so, ``first``.  ``jobs`` lists the queue's jobs,
        ``scorer`` makes the pass's scorer now; both are called only when the order must be
        rebuilt.  (The scheduler calls the three itself: no closures per visit.)"""
        need = self.state(q, t, load, deps, max_free, users, queued)
        if need == REFIT:
            self.refit(q, scorer(), load, max_free)
        elif need == REBUILD:
            self.rebuild(q, jobs(), scorer(), t, load, deps, max_free, users, queued)
        return self.first(q, tried, depth)

    def jobs(self, q: str) -> list[Pend]:
        """``q``'s whole kept order, best first -- once ``state`` says it holds (read only)."""
        o = self._by[q]
        if o.merged is not None:
            o.merged.upto(o.merged.size())
        return o.jobs

    def first(self, q: str, tried: set[str], depth: int) -> list[Pend]:
        """The first ``depth`` jobs of ``q``'s kept order not in ``tried``, best first -- once
        ``kept`` says it holds."""
        o = self._by[q]
        out: list[Pend] = []
        m = o.merged
        if m is not None:
            i = 0
            while i < len(m.out) or m.upto(i + 1):
                p = m.out[i]
                i += 1
                if p.jid not in tried:
                    out.append(p)
                    if len(out) >= depth:
                        break
            return out
        for p in o.jobs:
            if p.jid not in tried:
                out.append(p)
                if len(out) >= depth:
                    break
        return out


def _gpus_range(every: list[Pend]) -> tuple[int, int]:
    """(fewest, most) GPUs of ``every`` job, (0, 0) for none: a plain loop, since under mypyc
    ``min``/``max`` over a generator are generic calls with a generator object each (this runs
    on every rebuild)."""
    lo = hi = 0
    first = True
    for p in every:
        g = p.gpus
        if first:
            lo = hi = g
            first = False
        elif g < lo:
            lo = g
        elif g > hi:
            hi = g
    return lo, hi
