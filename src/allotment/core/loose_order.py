"""A long queue's *loose* jobs in score order, kept from one restart of its merge to the next:
what ``core.fairness_merge`` scored one by one at every restart.

Why: a loose job (one that others of its team wait for, or, kept by age, one with a deadline)
scores as no run does -- what its dependants lend it reads their users' GPUs -- so a merge
scored every one of them at each restart, and a restart follows every start and end of any user
of the queue's account, every change of the queue's jobs and every fit change.  At 8,192 GPUs a
team's queue holds 66 loose jobs on average, scored again at each of 17,006 restarts in half a
day: 20% of ``simulate()``'s instructions (issue 27: the cost per job grew with the cluster).
Yet a restart after one user's start changes the score of only the loose jobs that read that
user's GPUs, and the merge then reads about three loose jobs (stop 50).

What a loose job's ``Scorer.total`` reads (``fixed``, ``memo``: the only scorer a merge holds):
the job itself (a requeued job is a new ``Pend``), the epoch ``t``, the weights (by identity:
``w``; the fit weight ``w_fit`` moves with the load, and only a job whose GPUs fit reads it),
the active boosts (a function of ``t`` for the scheduler, compared anyway), the dependants map
(by identity), the user table (by identity), whether its GPUs fit the best node's free GPUs
(``max_free``), and the running GPUs of its own user and of each user its dependants' parts
name (``Pend.inherit``, kept for this map and table).  Any of the first ones moved (a new
epoch, weights, scorer table or map) scores them all.  Else a kept score is the same
computation on the same inputs, bit for bit, but for the GPUs of the users it reads and its fit
term (``w_fit`` or 0): each restart compares the GPUs of the users read (a handful per account)
with those of the last restart, and the fit, and the jobs that read a user whose GPUs moved, or
whose fit term moved, turn *stale*: they keep their key and get an upper bound of their score.

The bound.  ``total`` is ``max(own, INHERIT x best part)``, each of the form
``((head + fairness) + fit) + boost`` with ``fairness = w_fair x (1 / (1 + gpus / 8))``: with
``w_fair >= 0`` every operation is monotone (floats round monotonically), so the score never
rises as a user's GPUs rise or the fit term falls.  If no user it reads has fewer GPUs than when
it was scored (``g0``) and its fit term is no higher (``fit0``), the kept score itself bounds it,
exactly.  Else, in real numbers, the score rose by at most the most any read fairness term rose
plus what the fit term rose (``INHERIT`` < 1 only shrinks a part's rise); the computed values
differ from the real ones by a few roundings of the magnitudes (heads, boosts, the weights), so
the bound adds ``margin``, a million times that, as ``core.fairness_merge`` does for its runs;
magnitudes near overflow (``LAZY_MOST``) or a negative or non-finite ``w_fair`` make no bound: the
moved jobs are scored again then, as before.  A merge puts the best stale bound among its
frontier (``gi`` -1) and scores that job (``resolve``) only when the bound reaches what it would
emit next; its exact key goes in the merge's heap on its own, and into the list at the next
``bring``.  So the emitted order is exactly the keys' sort, ties included.

Jobs that arrived are scored at once; a job whose reads cannot be listed (no user id, parts made
for another map or table) is scored at every restart.  The keys ``(-score, eligible, id)`` are a
total order (ids are unique), so the fresh entries are the ones a whole sort gives.  A NaN score,
or a NaN eligibility time, has no place in a total order: ``bring`` then says no and the merge
puts every loose job in its heap on its own, as before (with finite magnitudes a stale job's
score cannot turn NaN).  ``tests/core/test_memo_loose_order.py`` checks the fresh keys, the
bounds and the merged order against a fresh scoring.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from allotment.core.dependant_list import DependantList
from allotment.core.ids import UserGpus
from allotment.core.priority import Scorer
from allotment.core.sorted_pairs import key_place
from allotment.core.state import Pend

Key = tuple[float, float, str]  # (-score, eligible, id): ``Scorer.key``

# what a kept job's key is (``_Entry.state``)
FRESH: Final = 0  # exact, in ``keys``/``ents`` where it sorts
STALE: Final = 1  # a user it reads moved since it was scored: ``bound`` >= its score now (``pool``)
RESOLVED: Final = 2  # scored again by a merge (``resolve``): exact, put in place at the next ``bring``
GONE: Final = 3  # left the queue (or all scored afresh): nothing reads it any more

RELATIVE_MARGIN: Final = 1e-9  # of the magnitudes: far above the few roundings (~1e-15) ``total`` makes
LAZY_MOST: Final = 1e300  # magnitudes above this might overflow: no bound, every stale job scored again


class _Entry:
    """A kept loose job: its key when last scored, what that score read (``reads``: user ids;
    ``g0``: their GPUs then, once it is stale) and, stale, an upper bound of its score now."""

    __slots__ = ("bound", "fit0", "g0", "key", "mark", "p", "reads", "state")

    def __init__(self, p: Pend, key: Key) -> None:
        self.p, self.key = p, key
        self.state = FRESH
        self.bound = 0.0
        self.reads: list[int] = []
        self.g0: list[int] = []
        self.fit0 = 0.0  # its fit term when scored, once it is stale
        self.mark = 0  # the ``LooseOrder.stamp`` of the last list of a ``bring`` it was put in


class LooseOrder:
    """A merge's loose jobs, by their kept keys (``keys`` and ``ents``, side by side), and what
    those were made from.  ``add`` and ``drop`` only note a change of the jobs; ``bring`` makes
    the order hold for a scorer (the merge's restart): the ``FRESH`` entries of the lists are
    exact and sorted, the ``STALE`` ones (in ``pool``, their list place meaningless) are bounded,
    and a merge ``resolve``s the best bounded one whenever its bound reaches what it would emit
    next.  Between two ``bring`` nothing but ``resolve`` changes it."""

    __slots__ = ("added", "boosts", "deps", "dropped", "ents", "kept", "keys", "lazy", "left", "max_free", "most", "most_fit", "pool",
                 "readers", "resolved", "seen", "stamp", "t", "untracked", "users", "w", "w_fair", "w_fit")

    def __init__(self) -> None:
        self.keys: list[Key] = []
        self.ents: list[_Entry] = []
        self.kept: dict[str, _Entry] = {}  # id -> the entry of the job whose key is in ``keys``
        self.added: list[Pend] = []  # noted since the last ``bring``, not scored yet
        self.dropped: list[Pend] = []
        self.readers: dict[int, list[_Entry]] = {}  # user id -> kept jobs whose score reads its GPUs
        self.seen: dict[int, int] = {}  # user id -> its GPUs at the last ``bring``
        self.untracked: list[_Entry] = []  # kept jobs whose reads are not listed: scored each time
        self.pool: list[_Entry] = []  # the stale entries (and some no longer: cleaned at ``bring``)
        # has an entry of ``pool`` left ``STALE`` since it was last cleaned?  (else the cleaning
        # at the end of ``bring`` would copy the list as it is: a walk of every stale job per restart)
        self.left = False
        self.resolved: list[_Entry] = []  # resolved since the last ``bring``, a merge's heap's index
        self.most = 0.0  # >= |head| + |boost| of every score kept and of every part it read
        self.most_fit = 0.0  # >= |w_fit| of every score kept
        self.stamp = 0  # marks the entries a ``bring`` listed (a set of ids was a hash per job)
        self.lazy = False  # may stale jobs be bounded (``w_fair`` >= 0, finite), not scored again?
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
        """Make the order hold for ``scorer``, scoring again only what moved and could not be
        bounded (module docstring).  False: a key holds a NaN (nothing kept then)."""
        for p in self.dropped:
            e = self.kept.get(p.jid)
            if e is not None and e.p is p:
                self._take_out(e)
                if e.state == STALE:
                    self.left = True
                e.state = GONE
                del self.kept[p.jid]
        self.dropped = []
        if not self._same_inputs(scorer):
            return self._score_all(scorer)
        if self.resolved:  # exact for this scorer too, unless made stale below (any place does then)
            for e in self.resolved:
                if e.state == RESOLVED:
                    self._take_out(e)
                    e.state = FRESH
                    self._insert(e)
            self.resolved = []
            self.pool = [e for e in self.pool if e.state == STALE]  # (each at most once: made stale again below)
            self.left = False
        users = scorer.user_gpus.gpus
        w_fair, w_fit, mf = scorer.w_fair, scorer.w_fit, scorer.max_free
        if abs(w_fit) > self.most_fit or w_fit != w_fit:
            self.most_fit = abs(w_fit)
        lazy = self.lazy and self.most + abs(w_fair) + self.most_fit < LAZY_MOST
        again: list[_Entry] = []
        self.stamp += 1
        st = self.stamp
        moved: list[int] = []
        for uid, had in self.seen.items():
            if users[uid] != had:
                moved.append(uid)
        # the jobs whose fit term moved: those between the old and new free GPUs, or, when the fit
        # weight (the load) moved, every one that fits under either
        lo, hi = (self.max_free, mf) if self.max_free < mf else (mf, self.max_free)
        if w_fit != self.w_fit:
            lo = -1
        touched = self._touched(moved, lo, hi, st)
        if lazy:
            margin = RELATIVE_MARGIN * (self.most + abs(w_fair) + self.most_fit + 1.0)
            was_fit, was_free = self.w_fit, self.max_free
            for e in touched:
                if e.state == FRESH:  # its score read the GPUs seen and the fit of the last ``bring``
                    e.g0 = [self.seen[u] for u in e.reads]
                    e.fit0 = was_fit if e.p.gpus <= was_free else 0.0
                    e.state = STALE
                    self.pool.append(e)
                _bound(e, users, w_fit if e.p.gpus <= mf else 0.0, w_fair, margin)
            self.stamp += 1  # the jobs scored again below are listed afresh
            st = self.stamp
        else:
            again = touched
        for uid in moved:
            self.seen[uid] = users[uid]
        self.max_free, self.w_fit = mf, w_fit
        if self.untracked:
            self.untracked = [e for e in self.untracked if e.state != GONE]
            for e in self.untracked:
                if e.mark != st:
                    e.mark = st
                    again.append(e)
        if len(again) + len(self.added) >= len(self.ents):  # (as many scores either way: sort once)
            return self._score_all(scorer)
        for e in again:
            self._take_out(e)
        added, self.added = self.added, []
        for e in again:
            if not self._place(e, scorer):
                return self._forget(added)
        for i in range(len(added)):
            p = added[i]
            e = _Entry(p, (0.0, 0.0, ""))
            self.kept[p.jid] = e
            if not self._place(e, scorer):
                return self._forget(added[i + 1:])
            self._track(e, scorer)
        if self.left:
            self.pool = [e for e in self.pool if e.state == STALE]
            self.left = False
        return True

    def _touched(self, moved: list[int], lo: int, hi: int, st: int) -> list[_Entry]:
        """The kept jobs whose score moved, each once (marked ``st``): those reading a user in
        ``moved``, and those with ``lo < gpus <= hi`` (their fit term moved)."""
        out: list[_Entry] = []
        for uid in moved:
            for e in self.readers[uid]:
                if e.state != GONE and e.mark != st:
                    e.mark = st
                    out.append(e)
        if lo < hi:
            for e in self.ents:
                if lo < e.p.gpus <= hi and e.mark != st:  # fits under one of them only (or reads w_fit)
                    e.mark = st
                    out.append(e)
        return out

    def top(self) -> int:
        """The place in ``pool`` of the stale entry with the highest bound, -1 for none."""
        best = -1
        b = 0.0
        pool = self.pool
        for i in range(len(pool)):
            e = pool[i]
            if e.state == STALE and (best < 0 or e.bound > b):
                best, b = i, e.bound
        return best

    def resolve(self, i: int, scorer: Scorer) -> Key:
        """Score the stale entry at ``pool[i]`` (``top``) again: its key now, exact; the entry
        is appended to ``resolved`` (a merge's heap names it by that place)."""
        e = self.pool[i]
        p = e.p
        k = (-scorer.total(p), p.eligible, p.jid)
        if k[0] != k[0]:  # pragma: no cover - finite magnitudes (``lazy``) make no NaN
            raise AssertionError(f"{p.jid} scored NaN with finite magnitudes")
        e.key = k
        e.state = RESOLVED  # (cleaned out of ``pool`` at the next ``bring``, which places it)
        self.resolved.append(e)
        return k

    def fresh_from(self, i: int) -> int:
        """The first place at or after ``i`` of a ``FRESH`` entry (``len(keys)`` for none)."""
        ents = self.ents
        n = len(ents)
        while i < n and ents[i].state != FRESH:
            i += 1
        return i

    def _same_inputs(self, scorer: Scorer) -> bool:
        """Were the kept scores made with ``scorer``'s epoch, weights, boosts, map and table?"""
        return (self.users is scorer.user_gpus and scorer.memo and scorer.mode == "fixed" and self.t == scorer.t
                and self.w is scorer.w and (self.deps is scorer.deps or not (self.deps or scorer.deps))
                and self.w_fair == scorer.w_fair and (self.boosts is scorer.boosts or self.boosts == scorer.boosts))

    def _score_all(self, scorer: Scorer) -> bool:
        """Score every loose job afresh and sort them; the inputs are ``scorer``'s from now."""
        every: list[Pend] = []
        for e in self.kept.values():
            e.state = GONE
            every.append(e.p)
        every.extend(self.added)
        self.added = []
        self.kept, self.readers, self.seen, self.untracked, self.pool, self.resolved = {}, {}, {}, [], [], []
        self.left = False
        # a scorer that keeps nothing (``memo`` off) leaves nothing to keep: ``Pend.inherit``,
        # which ``_track`` reads, is then not its own
        self.users = scorer.user_gpus if scorer.memo else None
        self.t, self.w, self.deps, self.boosts = scorer.t, scorer.w, scorer.deps, scorer.boosts
        self.w_fit, self.w_fair, self.max_free = scorer.w_fit, scorer.w_fair, scorer.max_free
        self.most, self.most_fit = 0.0, abs(scorer.w_fit)
        # the fairness term falls as the GPUs rise only for a weight >= 0 (a NaN: not at all)
        self.lazy = scorer.memo and scorer.w_fair >= 0.0 and scorer.w_fair < LAZY_MOST
        pairs: list[tuple[Key, _Entry]] = []
        for p in every:
            k = (-scorer.total(p), p.eligible, p.jid)
            if k[0] != k[0] or k[1] != k[1]:
                self.kept = {}
                self.keys, self.ents = [], []
                return self._forget(every)
            e = _Entry(p, k)
            pairs.append((k, e))
            self.kept[p.jid] = e
            self._track(e, scorer)
        pairs.sort(key=_first)
        self.keys = [k for k, _ in pairs]
        self.ents = [e for _, e in pairs]
        return True

    def _take_out(self, e: _Entry) -> None:
        """Take ``e`` out of both lists: found by identity (pointer comparisons; a search by
        its key made a generic call to ``bisect`` on boxed tuples, 3.9 thousand instructions)."""
        ents = self.ents
        for i in range(len(ents)):
            if ents[i] is e:
                ents.pop(i)
                self.keys.pop(i)
                return
        raise AssertionError(f"{e.p.jid} is not in the kept loose order")  # pragma: no cover

    def _place(self, e: _Entry, scorer: Scorer) -> bool:
        """Score ``e``'s job and put its key in place, fresh; False if the score is NaN."""
        p = e.p
        k = (-scorer.total(p), p.eligible, p.jid)
        if k[0] != k[0] or k[1] != k[1]:
            return False
        e.key = k
        if e.state == STALE:
            self.left = True
        e.state = FRESH
        self._insert(e)
        return True

    def _insert(self, e: _Entry) -> None:
        i = key_place(self.keys, e.key)  # (no NaN in a kept key)
        self.keys.insert(i, e.key)
        self.ents.insert(i, e)

    def _track(self, e: _Entry, scorer: Scorer) -> None:
        """Note the users whose GPUs ``e``'s score (just computed) read, or that they cannot be
        listed (``untracked``), and the magnitudes it added (``most``)."""
        p = e.p
        if p.uid < 0 or p.static is None:
            self.untracked.append(e)
            return
        s = p.static
        most = abs(s.head) + abs(s.boost)
        got = scorer.deps.get(p.jid) if scorer.deps else None
        if got:  # its dependants' parts, as ``Scorer._inherited_from`` kept them for this map and table
            m = p.inherit
            if m is None or m.got is not got or m.users is not scorer.user_gpus:
                self.untracked.append(e)
                return
            for part in m.parts:
                self._reads(part[0], e, scorer)
                size = abs(part[1]) + abs(part[2])
                if size > most or size != size:
                    most = size
        self._reads(p.uid, e, scorer)
        if most > self.most or most != most:  # a NaN stays: no bound then (``lazy``)
            self.most = most

    def _reads(self, uid: int, e: _Entry, scorer: Scorer) -> None:
        if uid in e.reads:
            return
        e.reads.append(uid)
        r = self.readers.get(uid)
        if r is None:
            self.readers[uid] = [e]
            self.seen[uid] = scorer.user_gpus.gpus[uid]
        else:
            r.append(e)

    def _forget(self, rest: list[Pend]) -> bool:
        """A NaN score: keep nothing, the jobs all to be scored at the next ``bring``."""
        every: list[Pend] = []
        for e in self.kept.values():
            e.state = GONE
            every.append(e.p)
        every.extend(rest)
        self.keys, self.ents, self.kept, self.readers, self.seen, self.untracked = [], [], {}, {}, {}, []
        self.pool, self.resolved = [], []
        self.left = False
        self.added, self.users = every, None
        return False


def _bound(e: _Entry, users: list[int], fit: float, w_fair: float, margin: float) -> None:
    """``e.bound``: an upper bound of its score with the GPUs ``users`` and the fit term ``fit``
    now, from its kept key, read with ``g0`` and ``fit0`` (module docstring).  No user of it has
    fewer GPUs than then and its fit term is no higher: the kept score itself (every operation
    monotone, exactly).  Else the kept score plus the most any read fairness term rose and what
    the fit term rose, plus ``margin`` for the roundings."""
    rise = 0.0
    up = fit > e.fit0
    reads, g0 = e.reads, e.g0
    for i in range(len(reads)):
        g = users[reads[i]]
        h = g0[i]
        if g < h:
            up = True
            d = w_fair * (1.0 / (1.0 + g / 8.0)) - w_fair * (1.0 / (1.0 + h / 8.0))
            if d > rise:
                rise = d
    s0 = -e.key[0]
    if up:
        if fit > e.fit0:
            rise += fit - e.fit0
        e.bound = (s0 + rise) + margin
    else:
        e.bound = s0


def _first(kp: tuple[Key, _Entry]) -> Key:
    return kp[0]
