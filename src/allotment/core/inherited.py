"""What a prerequisite inherits from the jobs of its team that wait for it: the facts scoring
reads of each dependant, and the fast walk's merge of them along the dependency edges.

``core.priority`` owns the rule (``Scorer._inherited``: ``INHERIT`` x the best score any
dependant would have now).  The reference (``Scorer(memo=False)``) reads every dependant of a
job, one by one, every pass.  The fast walk (``memo=True``) reads the same numbers through
``DependantFactsCache``:

* each dependant's facts (``DependantFacts``) are copied once per run, by the spec's identity
  (``JobSpec`` is an interpreted class: each read of it is a generic attribute lookup);
* what the dependants of a job lend *without a deadline* -- per (user, boost), the highest
  declared priority, weighted -- is merged along the edges (``closure``): a job's dependants are
  its direct same-team dependants and theirs (``priority.dependants``), so its part is the merge
  of each direct dependant's own part with that dependant's merged part.  Each job's part is made
  once per run (per weights and active boosts), from its direct dependants' parts, not from its
  whole closure: chains of runs make the closures grow as the square of their length (874,525
  dependants over 23,106 prerequisites in a 30-day ``ai2`` trace), the merged parts do not.

The merge gives the flat computation's answer exactly: what is kept per (user, boost) is a
maximum, and a maximum does not depend on how the values are grouped; the same floats are
computed the same way (``w.declared * priority + w.deadline * 0.0``).  Dependants with a
deadline read the time and the prerequisite's remaining work, so they are listed (``dated``,
each once) and scored on each call.  A job on a dependency cycle (a trace the checks refuse,
which the core may still be handed) is read flat.  The merge needs the map to be
``priority.dependants``'s (each job's set is every same-team job that reaches it, so it is its
direct dependants' sets joined with them), which is what the drivers set
(``ClusterState.dependants``); ``tests/core/test_inherited.py`` checks it against the flat
reading over generated graphs.

The other derivations (``adaptive`` and ``fifo``: ``Scorer._inherited_derived``) lend a
dependant's whole score when the prerequisite's remaining work is under ``short_prerequisite`` x
the dependant's work, else ``INHERIT`` x it; their score reads a dependant's declared priority,
user, boost and work (its fairness and the prerequisite's fit are the same for all of one user).
Their merge (``derived``, ``DerivedParts``) keeps, per (user, declared priority, boost) of the
dependants without a deadline, the most and the least work: the dependants of one such group
score alike, so the best any of them lends whole is lent iff the one with the most work is long
enough (``short x work`` grows with the work: ``short`` is >= 0), and ``INHERIT`` x it iff the
one with the least is not.  Those with a deadline are listed, as above.  The reference read every
dependant of every prerequisite at every scoring -- along ``ai2``'s closed-loop streams, chains
of up to 160 runs, each rebuild of a queue's order read each waiting run's whole tail (issue 28:
an ``adaptive`` + dependencies 30-day run did not finish); a group is a handful of numbers, and
each job's is made once per run from its direct dependants'.  ``tests/core/test_inherited.py``
checks it against the flat reading too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple, TypeVar

from allotment.core.boosts import BoostIndex, boost_of
from allotment.core.dependant_list import DependantList
from allotment.core.ids import UserGpus, UserId
from allotment.core.jobs import JobSpec
from allotment.core.weights import ScoreWeights


class Part(NamedTuple):
    """A dependant's part: its (account, user) id, weighted declared + deadline, boost.

    A named tuple, not a plain ``tuple[...]``: compiled, a plain tuple type is unboxed, so a
    part read from a dependant's merged parts became a new tuple and two new floats in each
    merge along a chain -- 1.2 million tuples, about 130 MiB at the first pass of a 90-day
    ``ai2`` run (issue 27 item 4); a named tuple stays one object, shared along the chain."""

    who: UserId
    head: float
    boost: float


class DependantFacts:
    """What ``Scorer._inherited_parts`` reads of one dependant ``spec``, copied once: its id,
    user, account, declared priority, deadline, work and prerequisites, and ``who``, its
    (account, user) id in the table ``users``.  Read-only by convention."""

    __slots__ = ("account", "deadline", "depends_on", "jid", "priority", "spec", "user", "who", "work")

    def __init__(self, spec: JobSpec, who: UserId) -> None:
        self.spec, self.who = spec, who
        self.jid, self.user, self.account = spec.id, spec.user, spec.account
        self.priority, self.deadline, self.work = spec.priority, spec.deadline, spec.work
        self.depends_on: tuple[str, ...] = spec.depends_on


class ClosureParts:
    """The dependants of one job (``got``) as the fast walk scores them: the parts of those
    without a deadline, one per (user, boost) with the highest head (``timeless``), and those
    with one (``dated``, each once).  Read-only by convention."""

    __slots__ = ("dated", "got", "timeless")

    def __init__(self, got: DependantList, timeless: tuple[Part, ...], dated: tuple[DependantFacts, ...]) -> None:
        self.got, self.timeless, self.dated = got, timeless, dated


# a group of dependants without a deadline as the derived scores read them: (their (account,
# user) id, declared priority, boost, the most work, the least work)
Group = tuple[UserId, int, float, float, float]


class DerivedParts:
    """The dependants of one job (``got``) as the fast walk's ``adaptive`` and ``fifo`` score
    them: those without a deadline grouped by (user, declared priority, boost), each group with
    its most and least work (``groups``), and those with one (``dated``, each once).  Read-only
    by convention."""

    __slots__ = ("dated", "got", "groups")

    def __init__(self, got: DependantList, groups: tuple[Group, ...], dated: tuple[DependantFacts, ...]) -> None:
        self.got, self.groups, self.dated = got, groups, dated


_P = TypeVar("_P", ClosureParts, DerivedParts)  # what a merge keeps per job


class DependantFactsCache:
    """Each dependant's ``DependantFacts`` for the user table ``users``, by the spec's identity
    (checked against the spec kept in the record, so a reused address cannot alias), and each
    job's ``ClosureParts`` for the dependants map, weights and active boosts last asked with
    (``closure``; a new map or weights, or boosts of another value, start them afresh), and its
    ``DerivedParts`` for the map and active boosts last asked with (``derived``)."""

    __slots__ = ("_boosts", "_deps", "_derived", "_derived_boosts", "_derived_deps", "_direct", "_direct_deps", "_kept",
                 "_weights", "by_id", "users")

    def __init__(self, users: UserGpus) -> None:
        self.users = users
        self.by_id: dict[int, DependantFacts] = {}
        self._deps: dict[str, DependantList] | None = None
        self._weights: object = None  # the policy's weights object the parts were made with
        self._boosts: Mapping[str, float] | None = None
        self._kept: dict[str, ClosureParts] = {}  # per job, its merged parts (for the above)
        # per job, the list its direct dependants were read from and them: the simulator changes
        # the map's entries in place between passes (sim.known_dependencies), so each is checked
        # against its own list, as the merged parts are
        self._direct: dict[str, tuple[DependantList | None, tuple[DependantFacts, ...]]] = {}
        self._direct_deps: dict[str, DependantList] | None = None  # the map ``_direct`` was read from
        self._derived: dict[str, DerivedParts] = {}  # per job, its merged derived parts
        self._derived_deps: dict[str, DependantList] | None = None
        self._derived_boosts: Mapping[str, float] | None = None

    def of(self, spec: JobSpec) -> DependantFacts:
        k = id(spec)
        f = self.by_id.get(k)
        if f is None or f.spec is not spec:
            f = self.by_id[k] = DependantFacts(spec, self.users.id_of(spec.account, spec.user))
        return f

    def closure(self, root: str, deps: dict[str, DependantList], w: ScoreWeights,
                boosts: Mapping[str, float], index: BoostIndex | None) -> ClosureParts:
        """``root``'s dependants ``deps[root]`` merged (``index``: ``boosts`` indexed, None when
        there are none)."""
        if deps is not self._deps or w.source is not self._weights:
            self._deps, self._weights, self._boosts = deps, w.source, boosts
            self._kept = {}
        elif boosts is not self._boosts:
            if boosts != self._boosts:
                self._kept = {}
            self._boosts = boosts
        got = deps[root]
        c = self._kept.get(root)
        if c is not None:
            if c.got is got:
                return c
            grew = got.grew
            if grew is not None and grew[0] is c.got:  # one run joined the end of root's chain
                c = self._kept[root] = self._extended(c, got, self.of(grew[1]), w, index)
                return c
        if len(self._kept) > 2 * len(deps) + 64:  # the parts of jobs gone from the map (it changes in place)
            _trim(self._kept, deps)
        self._build(root, deps, self._kept, lambda got, kids: self._merge(got, kids, deps, w, index),
                    lambda got: self._flat(got, w, index))
        return self._kept[root]

    def derived(self, root: str, deps: dict[str, DependantList], boosts: Mapping[str, float],
                index: BoostIndex | None) -> DerivedParts:
        """``root``'s dependants ``deps[root]`` merged for the derived scores (``index``:
        ``boosts`` indexed, None when there are none); a new map, or boosts of another value,
        start them afresh."""
        if deps is not self._derived_deps:
            self._derived_deps, self._derived_boosts, self._derived = deps, boosts, {}
        elif boosts is not self._derived_boosts:
            if boosts != self._derived_boosts:
                self._derived = {}
            self._derived_boosts = boosts
        got = deps[root]
        c = self._derived.get(root)
        if c is not None and c.got is got:
            return c
        if len(self._derived) > 2 * len(deps) + 64:
            _trim(self._derived, deps)
        self._build(root, deps, self._derived, lambda got, kids: self._merge_derived(got, kids, deps, index),
                    lambda got: self._flat_derived(got, index))
        return self._derived[root]

    def _direct_of(self, j: str, deps: dict[str, DependantList]) -> tuple[DependantFacts, ...]:
        """The dependants of ``j`` that name it (its direct ones: the rest depend on those)."""
        if deps is not self._direct_deps:
            self._direct_deps, self._direct = deps, {}
        got = self._direct.get(j)
        if got is None or got[0] is not deps.get(j):
            if len(self._direct) > 2 * len(deps) + 64:
                _trim(self._direct, deps)
            self._read_direct(j, deps)
            got = self._direct[j]
        return got[1]

    def _read_direct(self, root: str, deps: dict[str, DependantList]) -> None:
        """Keep the direct dependants of ``root`` and of each of its dependants, from one reading
        of ``root``'s: each direct dependant of a dependant ``q`` reaches ``root`` through ``q``,
        so it is among them, unless ``q`` reaches ``root`` back (a cycle: a direct dependant of
        ``q`` may then be ``root`` itself); then only ``root``'s own are kept."""
        got = deps[root]
        ids = {s.id for s in got}
        kids: dict[str, list[DependantFacts]] = {root: []}
        for s in got:
            f = self.of(s)
            for q in f.depends_on:
                if q == root or q in ids:
                    mine = kids.get(q)
                    if mine is None:
                        mine = kids[q] = []
                    mine.append(f)
        own = tuple(kids[root])
        self._direct[root] = (got, own)
        if any(len(deps.get(d.jid, ())) >= len(got) for d in own):
            return  # root is on a cycle
        for q, ds in kids.items():
            sub = deps.get(q)
            if sub is not None and ((c := self._direct.get(q)) is None or c[0] is not sub):
                self._direct[q] = (sub, tuple(ds))

    def _build(self, root: str, deps: dict[str, DependantList], kept: dict[str, _P],
               merge: Callable[[DependantList, tuple[DependantFacts, ...]], _P],
               flat: Callable[[DependantList], _P]) -> None:
        """Merge ``root``'s parts into ``kept`` (``merge`` of its direct dependants, whose parts
        are in ``kept``), and first those of its dependants not merged yet, each after its own
        (an explicit stack: a chain may be longer than the recursion limit).  A job on a
        dependency cycle is read flat (``flat``): its direct dependant ``d`` then reaches it
        back, so ``d``'s dependants are all of its own but ``d``, with it -- as many, where a
        dependant off the cycle has fewer than the job (itself is not among its own).  So every
        job merged has more dependants than each one it merges, and the stack never meets a job
        twice."""
        stack = [root]
        while stack:
            j = stack[-1]
            got = deps[j]
            kids = self._direct_of(j, deps)
            todo = None
            cycle = False
            for d in kids:
                sub = deps.get(d.jid)
                if sub is not None and sub:
                    if len(sub) >= len(got):
                        cycle = True
                        break
                    c = kept.get(d.jid)
                    if todo is None and (c is None or c.got is not sub):
                        todo = d.jid
            if cycle:
                kept[j] = flat(got)
            elif todo is not None:
                stack.append(todo)
                continue
            else:
                kept[j] = merge(got, kids)
            stack.pop()

    def _merge(self, got: DependantList, kids: tuple[DependantFacts, ...], deps: dict[str, DependantList],
               w: ScoreWeights, index: BoostIndex | None) -> ClosureParts:
        """A job's parts: each direct dependant's own and its merged ones."""
        parts: list[Part] = []
        same: dict[tuple[UserId, float], int] = {}
        dated: list[DependantFacts] = []
        seen: set[int] | None = None if len(kids) < 2 else set()  # dated ones may come by two paths
        for d in kids:
            if d.deadline is not None:
                _add_dated(dated, seen, d)
            else:
                keep_best(parts, same, dependant_part(d, w, 0.0, 0.0, index))
            sub = deps.get(d.jid)
            if sub is not None and sub:
                c = self._kept[d.jid]
                for part in c.timeless:
                    keep_best(parts, same, part)
                for x in c.dated:
                    _add_dated(dated, seen, x)
        return ClosureParts(got, tuple(parts), tuple(dated))

    def _extended(self, c: ClosureParts, got: DependantList, d: DependantFacts, w: ScoreWeights,
                  index: BoostIndex | None) -> ClosureParts:
        """``c``'s parts with ``d``'s, for ``got`` (``c.got`` and ``d``): the merge of a maximum
        takes one more value, in the place the walk along the chain would give it (after the
        others: a new (user, boost) goes last, a dated one is listed last)."""
        if d.deadline is not None:
            return ClosureParts(got, c.timeless, (*c.dated, d))
        parts = list(c.timeless)
        same = {(who, boost): i for i, (who, _, boost) in enumerate(parts)}
        keep_best(parts, same, dependant_part(d, w, 0.0, 0.0, index))
        return ClosureParts(got, tuple(parts), c.dated)

    def _flat(self, got: DependantList, w: ScoreWeights, index: BoostIndex | None) -> ClosureParts:
        """A job's parts read dependant by dependant (for a job on or above a cycle)."""
        parts: list[Part] = []
        same: dict[tuple[UserId, float], int] = {}
        dated: list[DependantFacts] = []
        for spec in got:
            d = self.of(spec)
            if d.deadline is not None:
                dated.append(d)
                continue
            keep_best(parts, same, dependant_part(d, w, 0.0, 0.0, index))
        return ClosureParts(got, tuple(parts), tuple(dated))


    def _merge_derived(self, got: DependantList, kids: tuple[DependantFacts, ...], deps: dict[str, DependantList],
                       index: BoostIndex | None) -> DerivedParts:
        """A job's derived parts: each direct dependant's own and its merged ones."""
        groups: dict[tuple[UserId, int, float], Group] = {}
        dated: list[DependantFacts] = []
        seen: set[int] | None = None if len(kids) < 2 else set()  # dated ones may come by two paths
        for d in kids:
            if d.deadline is not None:
                _add_dated(dated, seen, d)
            else:
                _add_group(groups, (d.who, d.priority, _boost(d, index), d.work, d.work))
            sub = deps.get(d.jid)
            if sub is not None and sub:
                c = self._derived[d.jid]
                for g in c.groups:
                    _add_group(groups, g)
                for x in c.dated:
                    _add_dated(dated, seen, x)
        return DerivedParts(got, tuple(groups.values()), tuple(dated))

    def _flat_derived(self, got: DependantList, index: BoostIndex | None) -> DerivedParts:
        """A job's derived parts read dependant by dependant (for a job on or above a cycle)."""
        groups: dict[tuple[UserId, int, float], Group] = {}
        dated: list[DependantFacts] = []
        for spec in got:
            d = self.of(spec)
            if d.deadline is not None:
                dated.append(d)
            else:
                _add_group(groups, (d.who, d.priority, _boost(d, index), d.work, d.work))
        return DerivedParts(got, tuple(groups.values()), tuple(dated))


def _boost(d: DependantFacts, index: BoostIndex | None) -> float:
    return 0.0 if index is None else boost_of(index, d.jid, d.user, d.account)


def _add_group(groups: dict[tuple[UserId, int, float], Group], g: Group) -> None:
    """Add ``g`` to the group of its (user, priority, boost): the most and the least work."""
    k = (g[0], g[1], g[2])
    had = groups.get(k)
    if had is None:
        groups[k] = g
    elif g[3] > had[3] or g[4] < had[4]:
        groups[k] = (g[0], g[1], g[2], g[3] if g[3] > had[3] else had[3], g[4] if g[4] < had[4] else had[4])


def dependant_part(d: DependantFacts, w: ScoreWeights, t: float, ahead: float, index: BoostIndex | None) -> Part:
    """(its user's id, weighted declared + deadline urgency, boost) of the dependant ``d`` of a
    job with ``ahead`` seconds of work left, at epoch ``t`` (neither is read without a
    deadline); ``index``: the active boosts indexed (None: none)."""
    urgency = 0.0
    deadline = d.deadline
    if deadline is not None:
        slack = deadline - t - ahead - d.work
        urgency = 1.0 if slack <= 0 else 1.0 / (1.0 + slack / 3600.0)
    head = w.declared * d.priority + w.deadline * urgency
    boost = 0.0 if index is None else boost_of(index, d.jid, d.user, d.account)
    return Part(d.who, head, boost)


def keep_best(parts: list[Part], same: dict[tuple[UserId, float], int], part: Part) -> None:
    """Keep ``part``, or the higher head of the one with its (user, boost): the rest of their
    scores is the same, and float addition is monotone, so that one's score is their maximum
    (``same`` holds each kept part's place by its (user, boost))."""
    k = (part[0], part[2])
    i = same.get(k)
    if i is None:
        same[k] = len(parts)
        parts.append(part)
    elif part[1] > parts[i][1]:
        parts[i] = part


def _add_dated(dated: list[DependantFacts], seen: set[int] | None, d: DependantFacts) -> None:
    if seen is not None:
        k = id(d)
        if k in seen:
            return
        seen.add(k)
    dated.append(d)


_V = TypeVar("_V")

def _trim(kept: dict[str, _V], deps: dict[str, DependantList]) -> None:
    """Drop what is kept for jobs no longer in ``deps`` (a map the simulator changes in place
    keeps its identity all run, so nothing else would let them go)."""
    for j in [j for j in kept if j not in deps]:
        del kept[j]
