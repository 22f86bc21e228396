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
  of the same account: ``priority.dependants``) -- ``Accounting.user_version[account]``;
* whether each job's GPUs fit the best node's free GPUs: ``max_free`` clamped to the queue's
  smallest job minus one and its largest job gives the same answer for every job;
* the queue's jobs -- ``QueueSet.version[q]``.

The order is reused while all of these are the same, and rebuilt (with the same ``Scorer``) when
one differs.  ``tests/sim/test_walk_equivalence.py`` checks the fast walk against the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from allotment.core.jobs import JobSpec
from allotment.core.priority import Scorer
from allotment.core.state import Pend


class _Key:
    """One job's score key ``(-total, eligible, id)`` and what of the pass it read: its user's
    running GPUs and its fit term (the fit weight when it fits the best node, else 0)."""

    __slots__ = ("fit", "job", "key", "user_gpus")

    def __init__(self, job: Pend, key: tuple[float, float, str], user_gpus: int, fit: float) -> None:
        self.job, self.key, self.user_gpus, self.fit = job, key, user_gpus, fit


class _Order:
    """One queue's jobs best first, what that order was computed from, and each job's key."""

    __slots__ = ("deps", "fit", "hi", "jobs", "keys", "lo", "load", "queued", "t", "users")

    def __init__(self, t: float, load: float, deps: Mapping[str, tuple[JobSpec, ...]], fit: int, users: int,
                 queued: int, jobs: list[Pend], lo: int, hi: int, keys: dict[str, _Key]) -> None:
        self.t, self.load, self.deps, self.fit, self.users, self.queued = t, load, deps, fit, users, queued
        self.jobs, self.lo, self.hi, self.keys = jobs, lo, hi, keys


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

    def __init__(self) -> None:
        self._by: dict[str, _Order] = {}

    def best(self, q: str, jobs: Callable[[], list[Pend]], scorer: Callable[[], Scorer], t: float, load: float,
             deps: Mapping[str, tuple[JobSpec, ...]], max_free: int, users: int, queued: int,
             tried: set[str], depth: int) -> list[Pend]:
        """The first ``depth`` jobs of ``q`` not in ``tried``, best first (``Scorer.best`` over
        them).  ``jobs`` lists the queue's jobs, ``scorer`` makes the pass's scorer now; both
        are called only when the order must be rebuilt."""
        o = self._by.get(q)
        if (o is None or o.queued != queued or o.users != users or o.t != t or o.deps is not deps
                or o.fit != fit_key(max_free, o.lo, o.hi) or o.load != fit_weight_key(load, o.fit, o.lo)):
            o = self._by[q] = _rebuild(o, jobs(), scorer(), t, load, deps, users, queued)
        out: list[Pend] = []
        for p in o.jobs:
            if p.jid not in tried:
                out.append(p)
                if len(out) >= depth:
                    break
        return out


def _rebuild(old: _Order | None, every: list[Pend], sc: Scorer, t: float, load: float,
             deps: Mapping[str, tuple[JobSpec, ...]], users: int, queued: int) -> _Order:
    """The order of ``every`` by ``sc``: ``Scorer.rank``'s keys, sorted.  A job's key from the
    old order is kept when it is the same job, at the same epoch, with the same dependants map,
    and what else its ``Scorer.total`` reads is the same: its user's running GPUs and its fit
    term (a job others wait for also reads theirs, so it is always scored again).  Most
    rebuilds follow one start, which changes one user's GPUs."""
    was = old.keys if old is not None and old.t == t and old.deps is deps else {}
    ug, w_fit, max_free = sc.user_gpus, sc.w_fit, sc.max_free
    keys: dict[str, _Key] = {}
    ranked: list[tuple[tuple[float, float, str], Pend]] = []
    lo = hi = -1
    for p in every:
        g = p.gpus
        if lo < 0 or g < lo:
            lo = g
        if g > hi:
            hi = g
        mine = ug.get((p.account, p.user), 0)
        fit = w_fit if g <= max_free else 0.0  # the very term Scorer.total adds
        k = was.get(p.jid)
        if k is None or k.job is not p or k.user_gpus != mine or k.fit != fit or p.jid in deps:
            k = _Key(p, (-sc.total(p), p.eligible, p.jid), mine, fit)
        keys[p.jid] = k
        ranked.append((k.key, p))
    ranked.sort(key=_first)  # keys end in the job id: never equal
    lo, hi = max(lo, 0), max(hi, 0)
    fk = fit_key(max_free, lo, hi)
    return _Order(t, fit_weight_key(load, fk, lo), deps, fk, users, queued, [p for _, p in ranked], lo, hi, keys)


def _first(e: tuple[tuple[float, float, str], Pend]) -> tuple[float, float, str]:
    return e[0]
