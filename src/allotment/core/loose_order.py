"""A long queue's *loose* jobs in score order, kept from one restart of its merge to the next:
what ``core.fairness_merge`` scored one by one at every restart.

Why: a loose job (one that others of its team wait for, or, kept by age, one with a deadline)
scores as no run does -- what its dependants lend it reads their users' GPUs -- so a merge
scored every one of them at each restart, and a restart follows every start and end of any user
of the queue's account, every change of the queue's jobs and every fit change.  At 8,192 GPUs a
team's queue holds 66 loose jobs on average, scored again at each of 17,006 restarts in half a
day: 20% of ``simulate()``'s instructions (issue 27: the cost per job grew with the cluster).
Yet a restart after one user's start changes the score of only the loose jobs that read that
user's GPUs.

What a loose job's ``Scorer.total`` reads (``fixed``, ``memo``: the only scorer a merge holds):
the job itself (a requeued job is a new ``Pend``), the epoch ``t``, the weights (by identity:
``w``; the fit weight ``w_fit`` moves with the load, and only a job whose GPUs fit reads it),
the active boosts (a function of ``t`` for the scheduler, compared anyway), the dependants map
(by identity), the user table (by identity), whether its GPUs fit the best node's free GPUs
(``max_free``), and the running GPUs of its own user and of each user its dependants' parts
name (``Pend.inherit``, kept for this map and table).  So a kept score is the same computation
on the same inputs, bit for bit, while all of those are the same: each restart compares the GPUs
of the users read (a handful per account) with those the kept scores were made with, and scores
again only the jobs that read a user whose GPUs moved, whose fit flipped, that fit (under the
old or the new ``max_free``) when the fit weight moved, or that arrived; any other input moved
(a new epoch, weights, scorer table or map) scores them all.  (The load moves at arrivals and
ends: scoring every loose job again then was most of what a first version of this cost, and on
a busy cluster few of them fit.)  A job whose reads cannot be listed (no user id, parts made for
another map or table) is scored at every restart.  The keys ``(-score, eligible, id)`` are a
total order (ids are unique), so the kept list is the one a whole sort gives, and the merge
takes it as one more sorted stream.  A NaN score, or a NaN eligibility time, has no place in a
total order: ``bring`` then says no and the merge puts every loose job in its heap on its own,
as before.
``tests/core/test_memo_loose_order.py`` checks the kept order against a fresh scoring.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping

from allotment.core.dependant_list import DependantList
from allotment.core.ids import UserGpus
from allotment.core.priority import Scorer
from allotment.core.state import Pend

Key = tuple[float, float, str]  # (-score, eligible, id): ``Scorer.key``


class LooseOrder:
    """A merge's loose jobs, best first (``keys`` and ``jobs``, side by side), and what their
    kept scores were made from.  ``add`` and ``drop`` only note a change of the jobs; ``bring``
    makes the order hold for a scorer (the merge's restart), and the lists are not changed
    between two ``bring``: the merge reads them as they are."""

    __slots__ = ("added", "boosts", "deps", "dropped", "jobs", "kept", "keys", "max_free", "readers", "seen", "t",
                 "untracked", "users", "w", "w_fair", "w_fit")

    def __init__(self) -> None:
        self.keys: list[Key] = []
        self.jobs: list[Pend] = []
        self.kept: dict[str, Pend] = {}  # id -> the job whose key is in ``keys``
        self.added: list[Pend] = []  # noted since the last ``bring``, not scored yet
        self.dropped: list[Pend] = []
        self.readers: dict[int, list[Pend]] = {}  # user id -> kept jobs whose score reads its GPUs
        self.seen: dict[int, int] = {}  # user id -> its GPUs when those scores were made
        self.untracked: list[Pend] = []  # kept jobs whose reads are not listed: scored each time
        # what every kept score was made with (None: nothing kept yet)
        self.users: UserGpus | None = None
        self.t = 0.0
        self.w: object = None
        self.deps: Mapping[str, DependantList] | None = None
        self.boosts: Mapping[str, float] | None = None
        self.w_fit = self.w_fair = 0.0
        self.max_free = 0

    def add(self, p: Pend) -> None:
        self.added.append(p)

    def drop(self, p: Pend) -> None:
        for i in range(len(self.added)):
            if self.added[i] is p:
                del self.added[i]
                return
        self.dropped.append(p)

    def bring(self, scorer: Scorer) -> bool:
        """Make ``keys``/``jobs`` the loose jobs in ``scorer``'s key order, scoring again only
        what moved (module docstring).  False: a key holds a NaN (nothing kept then)."""
        for p in self.dropped:
            if self.kept.get(p.jid) is p:
                self._take_out(p)
                del self.kept[p.jid]
        self.dropped = []
        if not self._same_inputs(scorer):
            return self._score_all(scorer)
        users = scorer.user_gpus.gpus
        again: list[Pend] = []
        mark: set[str] = set()
        for uid, had in self.seen.items():
            now = users[uid]
            if now != had:
                self.seen[uid] = now
                for p in self.readers[uid]:
                    if self.kept.get(p.jid) is p and p.jid not in mark:
                        mark.add(p.jid)
                        again.append(p)
        mf = scorer.max_free
        lo, hi = (self.max_free, mf) if self.max_free < mf else (mf, self.max_free)
        if scorer.w_fit != self.w_fit:  # every job that fits under either reads the fit weight
            lo = -1
        if lo < hi:
            for p in self.jobs:
                if lo < p.gpus <= hi and p.jid not in mark:  # fits under one of them only (or reads w_fit)
                    mark.add(p.jid)
                    again.append(p)
        self.max_free, self.w_fit = mf, scorer.w_fit
        if self.untracked:
            self.untracked = [p for p in self.untracked if self.kept.get(p.jid) is p]
            for p in self.untracked:
                if p.jid not in mark:
                    mark.add(p.jid)
                    again.append(p)
        if len(again) + len(self.added) >= len(self.jobs):  # (as many scores either way: sort once)
            return self._score_all(scorer)
        for p in again:
            self._take_out(p)
        added, self.added = self.added, []
        for p in again:
            if not self._place(p, scorer):
                return self._forget(added)
        for i in range(len(added)):
            p = added[i]
            self.kept[p.jid] = p
            if not self._place(p, scorer):
                return self._forget(added[i + 1:])
            self._track(p, scorer)
        return True

    def _same_inputs(self, scorer: Scorer) -> bool:
        """Were the kept scores made with ``scorer``'s epoch, weights, boosts, map and table?"""
        return (self.users is scorer.user_gpus and scorer.memo and scorer.mode == "fixed" and self.t == scorer.t
                and self.w is scorer.w and (self.deps is scorer.deps or not (self.deps or scorer.deps))
                and self.w_fair == scorer.w_fair and (self.boosts is scorer.boosts or self.boosts == scorer.boosts))

    def _score_all(self, scorer: Scorer) -> bool:
        """Score every loose job afresh and sort them; the inputs are ``scorer``'s from now."""
        every = list(self.kept.values())
        every.extend(self.added)
        self.added = []
        self.kept, self.readers, self.seen, self.untracked = {}, {}, {}, []
        # a scorer that keeps nothing (``memo`` off) leaves nothing to keep: ``Pend.inherit``,
        # which ``_track`` reads, is then not its own
        self.users = scorer.user_gpus if scorer.memo else None
        self.t, self.w, self.deps, self.boosts = scorer.t, scorer.w, scorer.deps, scorer.boosts
        self.w_fit, self.w_fair, self.max_free = scorer.w_fit, scorer.w_fair, scorer.max_free
        pairs: list[tuple[Key, Pend]] = []
        for p in every:
            k = (-scorer.total(p), p.eligible, p.jid)
            if k[0] != k[0] or k[1] != k[1]:
                self.kept = {}
                self.keys, self.jobs = [], []
                return self._forget(every)
            pairs.append((k, p))
            self.kept[p.jid] = p
            self._track(p, scorer)
        pairs.sort(key=_first)
        self.keys = [k for k, _ in pairs]
        self.jobs = [p for _, p in pairs]
        return True

    def _take_out(self, p: Pend) -> None:
        """Take ``p`` out of both lists: found by identity (pointer comparisons; a search by
        its key made a generic call to ``bisect`` on boxed tuples, 3.9 thousand instructions)."""
        jobs = self.jobs
        for i in range(len(jobs)):
            if jobs[i] is p:
                jobs.pop(i)
                self.keys.pop(i)
                return
        raise AssertionError(f"{p.jid} is not in the kept loose order")  # pragma: no cover

    def _place(self, p: Pend, scorer: Scorer) -> bool:
        """Score ``p`` and put its key in place; False if the score is NaN."""
        k = (-scorer.total(p), p.eligible, p.jid)
        if k[0] != k[0] or k[1] != k[1]:
            return False
        i = bisect_left(self.keys, k)
        self.keys.insert(i, k)
        self.jobs.insert(i, p)
        return True

    def _track(self, p: Pend, scorer: Scorer) -> None:
        """Note the users whose GPUs ``p``'s score (just computed) read, or that they cannot be
        listed (``untracked``)."""
        if p.uid < 0:
            self.untracked.append(p)
            return
        got = scorer.deps.get(p.jid) if scorer.deps else None
        if got:  # its dependants' parts, as ``Scorer._inherited_from`` kept them for this map and table
            m = p.inherit
            if m is None or m.got is not got or m.users is not scorer.user_gpus:
                self.untracked.append(p)
                return
            for part in m.parts:
                self._reads(part[0], p, scorer)
        self._reads(p.uid, p, scorer)

    def _reads(self, uid: int, p: Pend, scorer: Scorer) -> None:
        r = self.readers.get(uid)
        if r is None:
            self.readers[uid] = [p]
            self.seen[uid] = scorer.user_gpus.gpus[uid]
        elif r[-1] is not p:
            r.append(p)

    def _forget(self, rest: list[Pend]) -> bool:
        """A NaN score: keep nothing, the jobs all to be scored at the next ``bring``."""
        every = list(self.kept.values())
        every.extend(rest)
        self.keys, self.jobs, self.kept, self.readers, self.seen, self.untracked = [], [], {}, {}, {}, []
        self.added, self.users = every, None
        return False


def _first(kp: tuple[Key, Pend]) -> Key:
    return kp[0]
