"""One queue's jobs in score order without scoring the whole queue at each start and end: the
fast walk's order of a long queue (``core.candidates``), exact to the last bit.

Why: within an epoch a job's ``fixed`` score (``core.priority.Scorer.total``) is
``((head + fairness) + fit) + boost`` where ``head`` and ``boost`` only the epoch changes
(``StaticScore``), ``fairness`` is its user's (it moves at each of that user's starts and ends)
and ``fit`` reads its GPUs.  A sweep's 2,000-4,000 pending jobs are one user's, so every start and
end of that user moved the score of all of them, and the whole queue was scored and sorted again.

How, exactly.  The jobs (those nobody of their team waits for: the others are ``loose``) fall in
*groups* (one user, one GPU count: the same fairness and fit at any instant) and, within a group,
in *runs* of bit-identical ``(head, boost)``: the jobs of one run score bit-identically at any
instant (``total`` reads nothing else of them), so their order is their tie-break
``(eligible, id)``, kept sorted.  A group's runs are kept sorted by ``v = head + boost``.

A merge then gives the jobs best first, lazily.  A run's score ``T`` is ``Scorer.total`` of its
first job -- the reference's own computation, never a re-associated sum -- and ``T`` differs from
``v + fairness + fit`` by at most a few roundings (``|error| <= 4u (|head| + |boost| + |fairness|
+ |fit|)``, ``u = 2**-53``), so ``U = v + moving + margin`` (``margin`` a million times that) is an
upper bound of ``T`` for that run and, float addition being monotone, for every later run of the
group.  A scored job is emitted only when its key ``(-T, eligible, id)`` is below every unscored
run's least possible key, i.e. ``T > U`` strictly for the best unscored run of every group; else
that run is scored first.  So the emitted order is exactly the keys' sort, ties included, and a
visit scores about ``queue_depth`` runs, plus one per group and the near-ties, instead of the
whole queue.  ``tests/core/test_fairness_merge.py`` checks it against sorting by ``Scorer.key``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from heapq import heapify, heappop, heappush
from typing import Final

from allotment.core.loose_order import LooseOrder
from allotment.core.priority import Scorer
from allotment.core.state import Pend

GroupKey = tuple[int, str, str, int]  # user id, account, user, GPUs
RunKey = tuple[float, float]  # head, boost
RELATIVE_MARGIN: Final = 1e-9  # of the magnitudes: far above the few roundings (~1e-15) ``total`` makes


class _Run:
    """Jobs of one group with bit-identical ``(head, boost)``, by ``(eligible, id)``."""

    __slots__ = ("jobs", "keys", "v")

    def __init__(self, v: float) -> None:
        self.v = v
        self.keys: list[tuple[float, str]] = []
        self.jobs: list[Pend] = []


class _Group:
    """One user's jobs of one GPU count: its runs, and their keys ``(-v, head, boost)`` sorted
    (best ``v`` first), with the runs themselves in that order (``seq``: the merge reads a run by
    its place, where a look-up by its ``(head, boost)`` hashed two floats, twice per bound)."""

    __slots__ = ("order", "runs", "seq")

    def __init__(self) -> None:
        self.runs: dict[RunKey, _Run] = {}
        self.order: list[tuple[float, float, float]] = []
        self.seq: list[_Run] = []  # ``runs[(order[i][1], order[i][2])]`` at ``i``


def gpus_range_of(counts: dict[int, int]) -> tuple[int, int]:
    """(fewest, most) of the GPU counts in ``counts`` (GPUs -> how many groups, or seqs, and
    loose jobs of that many GPUs a merge holds; none at 0), (0, 0) for none: what
    ``core.candidates`` bounds a queue's fit by.  A few distinct counts, where the groups' keys
    and the loose jobs were a walk after every change of the jobs (141 M instructions in half a
    day at 8,192 GPUs).  Kept per group and per loose job, not per job: a group's jobs all have
    its GPUs, and ``_build`` then counts once per group, not once per job of the queue."""
    lo = hi = 0
    first = True
    for g in counts:
        if first or g < lo:
            lo = g
        if first or g > hi:
            hi = g
        first = False
    return lo, hi


def _count(counts: dict[int, int], g: int, d: int) -> None:
    """One more (``d`` 1) or one fewer (``d`` -1) group, seq or loose job of ``g`` GPUs in
    ``counts``."""
    n = counts.get(g, 0) + d
    if n:
        counts[g] = n
    else:
        del counts[g]


class LazyOrder:
    """A long queue's jobs merged lazily, best first (``core.candidates``): ``MergedOrder`` (any
    scores; grouped anew each epoch) or ``AgedOrder`` (no active boost; kept across epochs).
    ``out`` is the emitted prefix, best first; ``restart`` begins the merge again for a scorer
    and says whether the merge is exact for it (else the caller sorts the queue whole)."""

    __slots__ = ("out",)

    def __init__(self) -> None:
        self.out: list[Pend] = []

    def holds(self, scorer: Scorer) -> bool:
        raise NotImplementedError

    def update(self, every: list[Pend], scorer: Scorer) -> None:
        raise NotImplementedError

    def gpus_range(self) -> tuple[int, int]:
        raise NotImplementedError

    def restart(self, scorer: Scorer) -> bool:
        raise NotImplementedError

    def upto(self, n: int) -> bool:
        raise NotImplementedError

    def size(self) -> int:
        raise NotImplementedError


class MergedOrder(LazyOrder):
    """One queue's jobs for one epoch (``t``, weights, dependants), grouped and kept through
    arrivals and starts (``update``), and merged lazily for the pass's scorer (``restart``,
    ``upto``).  ``out`` is the emitted prefix, best first."""

    __slots__ = (
        "active",
        "counts",
        "deps",
        "frontier",
        "gl",
        "groups",
        "kept_loose",
        "last",
        "loose",
        "members",
        "most",
        "range",
        "scored",
        "scorer",
        "t",
        "w",
    )

    def __init__(self, scorer: Scorer, every: list[Pend]) -> None:
        super().__init__()
        self.t, self.w, self.deps = scorer.t, scorer.w, scorer.deps
        self.groups: dict[GroupKey, _Group] = {}
        self.members: dict[str, Pend] = {}
        self.loose: dict[str, Pend] = {}  # jobs others wait for: scored one by one (``kept_loose``)
        self.kept_loose = LooseOrder()  # the same, in score order, scored again only where it moved
        self.range: tuple[int, int] | None = None  # ``gpus_range``, until the jobs change
        self.counts: dict[int, int] = {}  # GPUs -> groups (seqs) and loose jobs of that many (``gpus_range_of``)
        self.most = 0.0  # >= |head| + |boost| of every job ever added (a bound: never lowered)
        self.scorer = scorer
        self.last = every  # the queue's jobs as last seen, in queue key order (``update``)
        self.active: list[_Run] = []
        self.gl: list[_Group] = []
        self.scored: list[tuple[float, float, str, int, int]] = []
        self.frontier: list[tuple[float, int, int]] = []
        self._build(every, scorer)

    def _build(self, every: list[Pend], scorer: Scorer) -> None:
        """Group ``every`` job at once: appended run by run, then each group's runs and each
        run's jobs sorted (the queue's own order, by declared priority then eligibility, leaves
        a run's jobs sorted already but for a rare run across priorities)."""
        deps, members, groups = self.deps, self.members, self.groups
        most = 0.0
        counts = self.counts
        for p in every:
            members[p.jid] = p
            if p.jid in deps:
                self.loose[p.jid] = p
                self.kept_loose.add(p)
                _count(counts, p.gpus, 1)
                continue
            s = scorer.static(p)
            head, boost = s.head, s.boost
            size = abs(head) + abs(boost)
            if size > most or size != size:
                most = size
            gk = (p.uid, p.account, p.user, p.gpus)
            g = groups.get(gk)
            if g is None:
                g = groups[gk] = _Group()
                _count(counts, p.gpus, 1)
            rk = (head, boost)
            r = g.runs.get(rk)
            if r is None:
                v = head + boost
                r = g.runs[rk] = _Run(v)
                g.order.append((-v, head, boost))
                g.seq.append(r)
            r.keys.append((p.eligible, p.jid))
            r.jobs.append(p)
        self.most = most
        for g in groups.values():
            if len(g.order) > 1:  # (the keys are distinct, as the runs' are: a pair never compares its run)
                pairs = sorted(zip(g.order, g.seq, strict=True))
                g.order = [k for k, _ in pairs]
                g.seq = [r for _, r in pairs]
            for r in g.runs.values():
                _sort_run(r)

    def holds(self, scorer: Scorer) -> bool:
        """Was this grouping made for ``scorer``'s epoch, weights and dependants, and is it exact
        (finite magnitudes)?"""
        return (self.t == scorer.t and self.w is scorer.w and (self.deps is scorer.deps or not (self.deps or scorer.deps))
                and math.isfinite(self.most) and math.isfinite(scorer.w_fair) and math.isfinite(scorer.w_fit))

    def update(self, every: list[Pend], scorer: Scorer) -> None:
        """Make the grouping hold ``every`` job (the queue now): add the new, drop the gone
        (``changes``)."""
        added, gone = changes(self.last, every)
        for p in gone:
            self._drop(p, scorer)
        for p in added:
            self._add(p, scorer)
        self.last = every

    def gpus_range(self) -> tuple[int, int]:
        """(fewest, most) GPUs of the jobs held, (0, 0) for none: from their counts by GPUs,
        kept until the jobs change."""
        if self.range is None:
            self.range = gpus_range_of(self.counts)
        return self.range

    def _add(self, p: Pend, scorer: Scorer) -> None:
        self.members[p.jid] = p
        self.range = None
        if p.jid in self.deps:
            self.loose[p.jid] = p
            self.kept_loose.add(p)
            _count(self.counts, p.gpus, 1)
            return
        s = scorer.static(p)
        head, boost = s.head, s.boost
        size = abs(head) + abs(boost)
        if size > self.most or size != size:  # a NaN stays: ``holds`` then refuses the grouping
            self.most = size
        gk = (p.uid, p.account, p.user, p.gpus)
        g = self.groups.get(gk)
        if g is None:
            g = self.groups[gk] = _Group()
            _count(self.counts, p.gpus, 1)
        rk = (head, boost)
        r = g.runs.get(rk)
        if r is None:
            v = head + boost
            r = g.runs[rk] = _Run(v)
            ok = (-v, head, boost)
            at = bisect_left(g.order, ok)
            g.order.insert(at, ok)
            g.seq.insert(at, r)
        k = (p.eligible, p.jid)
        i = bisect_left(r.keys, k)
        r.keys.insert(i, k)
        r.jobs.insert(i, p)

    def _drop(self, p: Pend, scorer: Scorer) -> None:
        del self.members[p.jid]
        self.range = None
        if p.jid in self.loose:
            del self.loose[p.jid]
            self.kept_loose.drop(p)
            _count(self.counts, p.gpus, -1)
            return
        s = scorer.static(p)  # the same as when added: same epoch and weights (``holds``)
        gk = (p.uid, p.account, p.user, p.gpus)
        g = self.groups[gk]
        rk = (s.head, s.boost)
        r = g.runs[rk]
        i = bisect_left(r.keys, (p.eligible, p.jid))
        r.keys.pop(i)
        r.jobs.pop(i)
        if not r.jobs:
            del g.runs[rk]
            ok = (-r.v, s.head, s.boost)
            at = bisect_left(g.order, ok)
            del g.order[at]
            del g.seq[at]
            if not g.order:
                del self.groups[gk]
                _count(self.counts, p.gpus, -1)

    def size(self) -> int:
        return len(self.members)

    def restart(self, scorer: Scorer) -> bool:
        """Begin the merge again for ``scorer`` (the same epoch; fairness, fit or jobs moved):
        the loose jobs in score order (``core.loose_order``: one more sorted stream, its stale
        jobs' best bound one more frontier entry), each group's best run as its frontier.  True:
        exact for it."""
        self.scorer = scorer
        self.out = []
        self.active = []
        self.scored = []
        self.frontier = []
        self.gl = list(self.groups.values())
        if self.loose:
            if self.kept_loose.bring(scorer):
                _first_loose(self.kept_loose, self.scored, self.frontier)
            else:  # a NaN score: each loose job on its own, as the heap orders them
                for p in self.loose.values():
                    self.active.append(_single(p))
                    self.scored.append((-scorer.total(p), p.eligible, p.jid, len(self.active) - 1, 0))
                heapify(self.scored)
        for gi, g in enumerate(self.gl):
            self.frontier.append((-self._bound(g, 0), gi, 0))
        heapify(self.frontier)
        return True

    def _bound(self, g: _Group, i: int) -> float:
        """An upper bound of the score of run ``i`` of ``g`` and of every later run of it."""
        r = g.seq[i]
        sc = self.scorer
        margin = RELATIVE_MARGIN * (self.most + abs(sc.w_fair) + abs(sc.w_fit) + 1.0)
        return (r.v + sc.moving(r.jobs[0])) + margin

    def upto(self, n: int) -> bool:
        """Emit into ``out`` until it holds ``n`` jobs; False if the queue ran out first."""
        out, scored, frontier, active = self.out, self.scored, self.frontier, self.active
        while len(out) < n:
            while frontier and (not scored or not scored[0][0] < frontier[0][0]):
                _, gi, ri = heappop(frontier)
                if gi < 0:  # the loose jobs' best bound: that one scored
                    _resolve_loose(self.kept_loose, ri, self.scorer, scored, frontier)
                    continue
                g = self.gl[gi]
                r = g.seq[ri]
                active.append(r)
                first = r.jobs[0]
                heappush(scored, (-self.scorer.total(first), first.eligible, first.jid, len(active) - 1, 0))
                if ri + 1 < len(g.order):
                    heappush(frontier, (-self._bound(g, ri + 1), gi, ri + 1))
            if not scored:
                return False
            neg, _, _, ai, pos = heappop(scored)
            if ai < 0:  # the loose jobs' stream, or one scored again (``_resolve_loose``)
                _next_loose(self.kept_loose, ai, pos, out, scored)
                continue
            r = active[ai]
            out.append(r.jobs[pos])
            if pos + 1 < len(r.jobs):
                nxt = r.jobs[pos + 1]
                heappush(scored, (neg, nxt.eligible, nxt.jid, ai, pos + 1))
        return True


LOOSE_MOST: Final = 64  # more loose jobs than this (deadlines, prerequisites): the epoch's grouping instead

SeqKey = tuple[int, str, str, int, int]  # user id, account, user, GPUs, declared priority as scored


class _Seq:
    """One user's jobs of one GPU count and one declared priority, none with a deadline or
    waited for, by ``(eligible, id)``: at any epoch their heads are non-increasing along it
    (``AgedOrder``)."""

    __slots__ = ("jobs", "keys")

    def __init__(self) -> None:
        self.keys: list[tuple[float, str]] = []
        self.jobs: list[Pend] = []


class _Span:
    """A run of ``AgedOrder``: positions ``[start, end)`` of ``seq``, bit-identical heads."""

    __slots__ = ("end", "seq")

    def __init__(self, seq: _Seq, end: int) -> None:
        self.seq, self.end = seq, end


class AgedOrder(LazyOrder):
    """One queue's jobs merged lazily as ``MergedOrder`` merges them, but grouped once for every
    epoch, not once per epoch: the fast walk's order of a long queue while no boost is active.

    Why: ``MergedOrder`` groups a queue anew at each epoch (every job's static part, its run,
    its group: 10% of a 27-day Philly-shaped run's instructions, a sweep's 2,000-4,000 jobs
    every five minutes), because a run is a set of bit-identical ``(head, boost)``, and ages
    move every head.  But with no boost active (``boost`` 0) a job without a deadline scores
    ``head = (w_declared x declared + w_deadline x 0) + w_age x min(max(0, t - eligible), cap) / div``:
    for one declared priority, every operation is monotone in ``eligible`` (floats round
    monotonically; ``w_age >= 0``, ``div > 0``), so along one user's jobs of one GPU count and
    one declared priority sorted by ``(eligible, id)`` (a ``_Seq``: an order no epoch changes)
    heads never rise, at every epoch.  So a seq's jobs of bit-identical head lie side by side:
    a run is a span of the seq, found from its first job by a galloping search on the heads
    (``Scorer.static``, kept on the job for the epoch), and a seq's later runs all score at most
    as its next one: the merge and its bound are ``MergedOrder``'s, run for run, with groups
    and runs read off the seqs for the epoch at hand.  What an epoch costs is then the seqs'
    first runs and the runs a visit reads, not the queue.  Jobs with a deadline (urgency moves
    with the time), those others wait for (``loose``, as there) and any with a non-finite
    eligibility time are scored at each restart; with more than ``LOOSE_MOST`` of them, or an
    active boost, or a weight this proof does not cover, ``holds`` is False and the caller
    groups by epoch instead.  ``tests/core/test_fairness_merge.py`` checks it against sorting
    by ``Scorer.key`` across epochs."""

    __slots__ = ("active", "count", "counts", "deps", "frontier", "gl", "kept_loose", "last", "loose", "margin", "range", "scored",
                 "scorer", "seqs", "w")

    def __init__(self, scorer: Scorer, every: list[Pend]) -> None:
        super().__init__()
        self.w, self.deps = scorer.w, scorer.deps
        self.seqs: dict[SeqKey, _Seq] = {}
        self.loose: dict[str, Pend] = {}
        self.kept_loose = LooseOrder()  # ``loose`` in score order, scored again only where it moved
        self.range: tuple[int, int] | None = None  # ``gpus_range``, until the jobs change
        self.count = 0
        self.counts: dict[int, int] = {}  # GPUs -> groups (seqs) and loose jobs of that many (``gpus_range_of``)
        self.scorer = scorer
        self.last = every  # the queue's jobs as last seen, in queue key order (``update``)
        self.active: list[_Span] = []
        self.gl: list[_Seq] = []
        self.scored: list[tuple[float, float, str, int, int]] = []
        self.frontier: list[tuple[float, int, int]] = []
        self.margin = 0.0
        seqs = self.seqs
        for p in every:  # appended, then each seq sorted (the queue's order leaves them sorted)
            self.count += 1
            if self._loose(p):
                self.loose[p.jid] = p
                self.kept_loose.add(p)
                _count(self.counts, p.gpus, 1)
                continue
            k = self._key(p)
            sq = seqs.get(k)
            if sq is None:
                sq = seqs[k] = _Seq()
                _count(self.counts, p.gpus, 1)
            sq.keys.append((p.eligible, p.jid))
            sq.jobs.append(p)
        for sq in seqs.values():
            _sort_seq(sq)

    @staticmethod
    def fits(scorer: Scorer) -> bool:
        """Does ``scorer`` score as the proof above reads it: ``fixed``, no boost active, finite
        weights, ``w_age >= 0``?"""
        k = scorer.k
        return (scorer.mode == "fixed" and not scorer.boosts and k.age >= 0.0 and math.isfinite(k.age)
                and math.isfinite(k.declared) and math.isfinite(k.deadline) and math.isfinite(k.age_cap)
                and k.age_div > 0.0 and math.isfinite(scorer.w_fair) and math.isfinite(scorer.w_fit))

    def holds(self, scorer: Scorer) -> bool:
        """Was this grouping made for ``scorer``'s weights and dependants, and may it serve it?"""
        return (self.w is scorer.w and (self.deps is scorer.deps or not (self.deps or scorer.deps))
                and len(self.loose) <= LOOSE_MOST and AgedOrder.fits(scorer))

    def _loose(self, p: Pend) -> bool:
        return p.deadline is not None or p.jid in self.deps or not math.isfinite(p.eligible)

    def _key(self, p: Pend) -> SeqKey:
        # the declared priority ``Scorer._raw`` reads: propagated, or the job's own
        return (p.uid, p.account, p.user, p.gpus, p.declared if self.scorer.dependencies else p.spec.priority)

    def update(self, every: list[Pend], scorer: Scorer) -> None:
        """Make the seqs hold ``every`` job (the queue now): add the new, drop the gone."""
        added, gone = changes(self.last, every)
        for p in gone:
            self._drop(p)
        for p in added:
            self._add(p)
        self.last = every

    def _add(self, p: Pend) -> None:
        self.count += 1
        self.range = None
        if self._loose(p):
            self.loose[p.jid] = p
            self.kept_loose.add(p)
            _count(self.counts, p.gpus, 1)
            return
        k = self._key(p)
        sq = self.seqs.get(k)
        if sq is None:
            sq = self.seqs[k] = _Seq()
            _count(self.counts, p.gpus, 1)
        e = (p.eligible, p.jid)
        i = bisect_left(sq.keys, e)
        sq.keys.insert(i, e)
        sq.jobs.insert(i, p)

    def _drop(self, p: Pend) -> None:
        self.count -= 1
        self.range = None
        if p.jid in self.loose:
            del self.loose[p.jid]
            self.kept_loose.drop(p)
            _count(self.counts, p.gpus, -1)
            return
        k = self._key(p)
        sq = self.seqs[k]
        i = bisect_left(sq.keys, (p.eligible, p.jid))
        sq.keys.pop(i)
        sq.jobs.pop(i)
        if not sq.jobs:
            del self.seqs[k]
            _count(self.counts, p.gpus, -1)

    def size(self) -> int:
        return self.count

    def gpus_range(self) -> tuple[int, int]:
        """(fewest, most) GPUs of the jobs held, (0, 0) for none: from their counts by GPUs,
        kept until the jobs change."""
        if self.range is None:
            self.range = gpus_range_of(self.counts)
        return self.range

    def restart(self, scorer: Scorer) -> bool:
        """Begin the merge again for ``scorer`` (any epoch; fairness, fit or jobs moved): the
        loose jobs in score order (``core.loose_order``, as ``MergedOrder``'s), each seq's first run as its frontier.  The margin reads the largest
        head, at one end of each seq (heads are monotone along it).  False: a head is not
        finite, the merge's bound would not hold (the caller sorts the queue whole)."""
        self.scorer = scorer
        self.out = []
        self.active = []
        self.scored = []
        self.frontier = []
        self.gl = list(self.seqs.values())
        most = 0.0
        for sq in self.gl:
            a = scorer.static(sq.jobs[0])
            b = scorer.static(sq.jobs[-1])
            for size in (abs(a.head) + abs(a.boost), abs(b.head) + abs(b.boost)):
                if size > most or size != size:
                    most = size
        if not math.isfinite(most):
            return False
        self.margin = RELATIVE_MARGIN * (most + abs(scorer.w_fair) + abs(scorer.w_fit) + 1.0)
        if self.loose:
            if self.kept_loose.bring(scorer):
                _first_loose(self.kept_loose, self.scored, self.frontier)
            else:  # a NaN score: each loose job on its own, as the heap orders them
                for p in self.loose.values():
                    self.active.append(_Span(_Seq(), 1))
                    self.active[-1].seq.jobs.append(p)
                    self.scored.append((-scorer.total(p), p.eligible, p.jid, len(self.active) - 1, 0))
                heapify(self.scored)
        for gi, sq in enumerate(self.gl):
            self.frontier.append((-self._bound(sq, 0), gi, 0))
        heapify(self.frontier)
        return True

    def _bound(self, sq: _Seq, i: int) -> float:
        """An upper bound of the score of the run at ``i`` of ``sq`` and of every later one."""
        p = sq.jobs[i]
        s = self.scorer.static(p)
        return ((s.head + s.boost) + self.scorer.moving(p)) + self.margin

    def _run_end(self, sq: _Seq, i: int) -> int:
        """The end of the run that begins at ``i``: the first later position whose head (and
        boost) differ from ``i``'s, found by galloping then bisecting (heads are monotone along
        the seq, so the equal ones are one span)."""
        jobs, sc = sq.jobs, self.scorer
        s = sc.static(jobs[i])
        head, boost = s.head, s.boost
        n = len(jobs)
        lo, step = i, 1  # lo: known in the run
        hi = n  # first position known past it (or the end)
        while lo + step < n:
            t = sc.static(jobs[lo + step])
            if t.head == head and t.boost == boost:
                lo += step
                step *= 2
            else:
                hi = lo + step
                break
        while hi - lo > 1:
            mid = (lo + hi) // 2
            t = sc.static(jobs[mid])
            if t.head == head and t.boost == boost:
                lo = mid
            else:
                hi = mid
        return hi

    def upto(self, n: int) -> bool:
        """Emit into ``out`` until it holds ``n`` jobs; False if the queue ran out first."""
        out, scored, frontier, active = self.out, self.scored, self.frontier, self.active
        while len(out) < n:
            while frontier and (not scored or not scored[0][0] < frontier[0][0]):
                _, gi, i = heappop(frontier)
                if gi < 0:  # the loose jobs' best bound: that one scored
                    _resolve_loose(self.kept_loose, i, self.scorer, scored, frontier)
                    continue
                sq = self.gl[gi]
                end = self._run_end(sq, i)
                active.append(_Span(sq, end))
                first = sq.jobs[i]
                heappush(scored, (-self.scorer.total(first), first.eligible, first.jid, len(active) - 1, i))
                if end < len(sq.jobs):
                    heappush(frontier, (-self._bound(sq, end), gi, end))
            if not scored:
                return False
            neg, _, _, ai, pos = heappop(scored)
            if ai < 0:  # the loose jobs' stream, or one scored again (``_resolve_loose``)
                _next_loose(self.kept_loose, ai, pos, out, scored)
                continue
            sp = active[ai]
            out.append(sp.seq.jobs[pos])
            if pos + 1 < sp.end:
                nxt = sp.seq.jobs[pos + 1]
                heappush(scored, (neg, nxt.eligible, nxt.jid, ai, pos + 1))
        return True


def _sort_seq(sq: _Seq) -> None:
    """Sort ``sq``'s jobs by ``(eligible, id)`` unless they are already (a plain loop first)."""
    keys = sq.keys
    for i in range(1, len(keys)):
        if keys[i] < keys[i - 1]:
            pairs = sorted(zip(keys, sq.jobs, strict=True))
            sq.keys = [k for k, _ in pairs]
            sq.jobs = [p for _, p in pairs]
            return


_RUN: Final = 16  # ``changes`` tries whole blocks after this many jobs in a row agreed ...
_BLOCK: Final = 64  # ... first this many at a time, doubling while blocks agree, up to ``_MOST_BLOCK``
_MOST_BLOCK: Final = 4096


def changes(last: list[Pend], every: list[Pend]) -> tuple[list[Pend], list[Pend]]:
    """(added, gone): the jobs of ``every`` (the queue now) not in ``last`` (as last seen), and
    the reverse.

    The queue's jobs come sorted by their queue key (``Queue.jobs``), as did the last list
    seen, so the two are walked side by side comparing identities -- a start costs a pass of
    pointer comparisons, not a dict of the queue.  Where they agree for ``_RUN`` jobs in a row
    the walk gallops: slices of ``_BLOCK`` jobs, doubling while they agree, are compared as
    lists, identity by identity in C (a ``Pend`` has no ``__eq__``: equal lists are the same
    jobs), where one step of the loop reads two items through mypyc's checked list access
    (stop 45: the walk was 1.3 G instructions of a Philly-shaped 54-day run, growing with the
    queue times its changes); a block that differs sends it back job by job.  Exact in any
    order: a job of both lists is either matched to itself or left unmatched in both, so
    called both gone and new, and the caller drops it before it adds it back (only slower,
    never wrong)."""
    added: list[Pend] = []
    gone: list[Pend] = []
    i = j = 0
    n, m = len(every), len(last)
    run = 0  # jobs in a row that agreed
    block = _BLOCK
    while i < n and j < m:
        if run >= _RUN:
            if i + block <= n and j + block <= m and every[i:i + block] == last[j:j + block]:
                i += block
                j += block
                if block < _MOST_BLOCK:
                    block += block
                continue
            run = 0
            block = _BLOCK
        a = every[i]
        b = last[j]
        if a is b:
            i += 1
            j += 1
            run += 1
            continue
        run = 0
        ka, kb = a.key, b.key
        if ka < kb:
            added.append(a)
            i += 1
        elif kb < ka:
            gone.append(b)
            j += 1
        else:  # the same key, another job (a requeued job is a new ``Pend``)
            added.append(a)
            gone.append(b)
            i += 1
            j += 1
    added.extend(every[i:])
    gone.extend(last[j:])
    return added, gone


def _sort_run(r: _Run) -> None:
    """Sort ``r``'s jobs by ``(eligible, id)`` unless they are already (a plain loop first)."""
    keys = r.keys
    for i in range(1, len(keys)):
        if keys[i] < keys[i - 1]:
            pairs = sorted(zip(keys, r.jobs, strict=True))
            r.keys = [k for k, _ in pairs]
            r.jobs = [p for _, p in pairs]
            return


def _first_loose(kept: LooseOrder, scored: list[tuple[float, float, str, int, int]],
                 frontier: list[tuple[float, int, int]]) -> None:
    """Put the best fresh kept loose job in the merge's heap (``scored``, empty) as the head of
    their stream (``ai`` -1, ``pos`` its place in ``kept.ents``), and the best stale one's bound
    in ``frontier`` (``gi`` -1, ``ri`` its place in ``kept.pool``): a merge scores it only when
    that bound reaches what it would emit next (``_resolve_loose``)."""
    i = kept.fresh_from(0)
    if i < len(kept.keys):
        k = kept.keys[i]
        scored.append((k[0], k[1], k[2], -1, i))
    j = kept.top()
    if j >= 0:
        frontier.append((-kept.pool[j].bound, -1, j))


def _resolve_loose(kept: LooseOrder, j: int, scorer: Scorer, scored: list[tuple[float, float, str, int, int]],
                   frontier: list[tuple[float, int, int]]) -> None:
    """Score the stale loose job at ``kept.pool[j]`` (the best bound): its exact key goes in the
    heap on its own (``ai`` -2, ``pos`` its place in ``kept.resolved``), the next best bound in
    ``frontier``."""
    k = kept.resolve(j, scorer)
    heappush(scored, (k[0], k[1], k[2], -2, len(kept.resolved) - 1))
    j = kept.top()
    if j >= 0:
        heappush(frontier, (-kept.pool[j].bound, -1, j))


def _next_loose(kept: LooseOrder, ai: int, pos: int, out: list[Pend],
                scored: list[tuple[float, float, str, int, int]]) -> None:
    """The loose job emitted: ``out`` takes it; from the stream (``ai`` -1), the heap takes the
    next fresh one."""
    if ai != -1:
        out.append(kept.resolved[pos].p)
        return
    out.append(kept.ents[pos].p)
    i = kept.fresh_from(pos + 1)
    if i < len(kept.keys):
        k = kept.keys[i]
        heappush(scored, (k[0], k[1], k[2], -1, i))


def _single(p: Pend) -> _Run:
    r = _Run(0.0)
    r.keys.append((p.eligible, p.jid))
    r.jobs.append(p)
    return r
