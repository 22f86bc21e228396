"""Within-team priority: which of one team's pending jobs goes first.  ``Scorer`` is the one
implementation: the pass ranks candidates with ``Scorer.total`` and ``allot explain`` shows
``Scorer.parts`` -- the same arithmetic.

The score is a weighted sum of signals (weights from ``Policy.priority_weights``), highest first:

* declared: the user's own priority, raised to the highest priority of any job of its own team
  that depends on it (a job others wait for inherits their urgency, see ``propagate``);
* deadline urgency: 0 without a deadline, rising to 1 as the slack before the deadline runs out;
* age: time since the job became eligible, capped (``age_cap_s``) so age cannot override the rest;
* fairness among the team's users: a user with fewer GPUs running goes first;
* fit: 1 when the job fits the free capacity right now, so free GPUs do not idle behind a job
  that cannot start; its weight grows with load (when demand is high, packing matters more);
* boosts: manual, expiring bumps from ``Policy.boosts`` (``active_boosts``).

A prerequisite scores at least ``INHERIT`` (0.9) x the score of each job of its own team that
waits for it (``dependants``), scored as it would be if it were pending now -- its declared
priority, its boost, and its deadline with the prerequisite's remaining work taken from its slack
-- so a dependant's urgency reaches the work that holds it up, not only its declared priority.
Another team's jobs never lend urgency: their team's place is the Fair Tree's to decide.

That is the ``fixed`` derivation (``within_team.mode``, the default: the order the scheduler has
always made).  Two more (``derive``, docs/design/within-team.md):

* ``adaptive`` -- the Osprey write-up's: each factor in [0, 1] (declared priority squashed,
  ``declared_factor``; deadline urgency; capped age; user fairness; fit 1 or 0), weighted by a
  blend of two weight sets (``within_team.below`` under the load threshold, ``.above`` over it,
  linear across ``within_team.blend`` around ``threshold``, ``blended``) and divided by the
  weights' sum, so the derived score is in [0, 1]; a boost is added on top.  Load is demanded /
  installed GPUs (running-only utilization sits near 100% whenever anything waits, so it cannot
  tell a light queue from a heavy one).  A prerequisite scores at least ``INHERIT`` x each
  same-team dependant's score, or the whole of it when the prerequisite's remaining work is
  under ``short_prerequisite`` x the dependant's work (the write-up's "3 hours to 45 minutes":
  a short job that unblocks a long one goes first).
* ``fifo`` -- oldest eligible first: every derived score is 0, the tie-break decides; boosts
  (approved, expiring overrides) still count, and with dependencies a prerequisite inherits them.

``within_team.dependencies: false`` scores every job alone: its own declared priority, nothing
inherited.  Neither mode reads another team's jobs: the order between teams stays the Fair
Tree's.

Time-varying signals (age, deadline, boosts) are read at the pass's epoch (``core.epoch``).  Ties
break by eligibility time, then job id.

Between two epochs only fairness and fit can change (running GPUs, free GPUs), so the rest of a
job's score is the same for every pass of the epoch: a ``Scorer(memo=True)`` (the fast walk,
``core.walk``) keeps it on the job (``StaticScore``) and adds the same floats in the same order,
so the sum is the same to the last bit; ``memo=False`` (the reference) recomputes it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from allotment.compile.model import PriorityWeights
from allotment.core.boosts import BoostIndex, active_boosts, boost_of
from allotment.core.context import Context
from allotment.core.dependant_list import DependantList
from allotment.core.ids import UserGpus
from allotment.core.inherited import DependantFactsCache, dependant_part, keep_best
from allotment.core.jobs import JobSpec
from allotment.core.state import InheritedParts, Pend, StaticScore
from allotment.core.weights import ScoreWeights

__all__ = ["ARRAYS_FROM", "INHERIT", "INSERT_UPTO", "MERGE_FROM", "BoostIndex", "DependencyPass", "PriorityScore", "Scorer", "Term", "active_boosts", "blended",
           "boost_of", "declared_factor", "dependants", "dependency_pass", "propagate"]

INHERIT: Final = 0.9  # a prerequisite scores at least this fraction of its best same-team dependant's score
# ``Scorer.ranked`` scores queues this long over arrays where they pay (``core.within_team_arrays``):
# below, numpy's per-call cost exceeds the Python saved
ARRAYS_FROM: Final = 64
# the fast walks read the dependants of a prerequisite with this many or more merged
# (``core.inherited.DerivedParts``), fewer one by one: a merge made afresh costs more than it
# saves on a few (``decide`` makes them per tick: ``benchmarks/within_team_bench.py``); read
# when a ``Scorer`` is made (a test may merge every prerequisite's)
MERGE_FROM = 16
# ``Scorer.ranked`` puts a queue this short in order by insertion (``ranked_by_insertion``):
# quadratic, so only where a sort's per-job tuples and generic comparisons cost more (the candidate
# orders sort whole the queues shorter than ``candidates.SMALL``, 32: longer ones are merged)
INSERT_UPTO: Final = 32


@dataclass(frozen=True, slots=True)
class Term:
    """One factor of the score as ``allot explain`` shows it: its value and its weight (their
    product is the weighted part; ``adaptive`` divides the sum by the weights' sum)."""

    name: str
    factor: float
    weight: float


@dataclass(frozen=True, slots=True)
class PriorityScore:
    total: float
    declared: float
    deadline: float
    age: float
    fairness: float
    fit: float
    boost: float
    inherited: float = 0.0  # INHERIT x the best dependant's score (0: none waits on it)
    mode: str = "fixed"
    terms: tuple[Term, ...] = ()  # every factor with its weight
    # the load the weights were read at (demanded / installed GPUs): ``fixed`` scales fit by it
    # (1x-3x), ``adaptive`` blends its two weight sets by it (``blended``)
    load: float = 0.0


Weights5 = tuple[float, float, float, float, float]  # declared, deadline, age, fairness, fit


def blended(pw: PriorityWeights, load: float) -> Weights5:
    """The adaptive weights at ``load``: ``below`` up to ``threshold - blend/2``, ``above`` from
    ``threshold + blend/2``, linear between (a step at ``threshold`` when ``blend`` is 0), so
    every weight is continuous in load but for that step."""
    lo, hi = pw.threshold - pw.blend / 2.0, pw.threshold + pw.blend / 2.0
    x = (0.0 if load < lo else 1.0) if hi <= lo else min(1.0, max(0.0, (load - lo) / (hi - lo)))
    a, b = pw.below, pw.above
    return ((1 - x) * a.declared + x * b.declared, (1 - x) * a.deadline + x * b.deadline,
            (1 - x) * a.age + x * b.age, (1 - x) * a.fairness + x * b.fairness, (1 - x) * a.fit + x * b.fit)


def declared_factor(priority: int) -> float:
    """A declared priority (any 32-bit integer) in (0, 1): 0 -> 0.5, higher is higher, the
    ends approached, never reached.  Monotone, so it keeps every user's own order."""
    return 0.5 + 0.5 * priority / (1.0 + abs(priority))


def _urgency(deadline: float | None, t: float, ahead: float) -> float:
    """0 without a deadline, rising to 1 as the slack (time left minus work left) runs out."""
    if deadline is None:
        return 0.0
    slack = deadline - t - ahead
    return 1.0 if slack <= 0 else 1.0 / (1.0 + slack / 3600.0)


def propagate(specs: Iterable[JobSpec]) -> dict[str, int]:
    """Effective declared priority: a job's own, or the highest of any job of the same account
    depending on it.  Only within the team: another team's priority never orders this team's
    work (its prerequisite would otherwise slice its own team's jobs for a stranger).

    One pass over the jobs with dependants, each after all of its own (``_dependants_first``),
    taking the best of its direct dependants' (already final) priorities: the relaxation to a
    fixed point (``propagate_by_relaxing``, the plain definition the property test compares
    with) swept every job once per link of the longest chain, 5.8 ms of the 10,000-job
    benchmark's derivation.  A dependency cycle falls back to the relaxation."""
    by_id, direct = _direct_dependants(specs)
    return _propagated(by_id, direct, _dependants_first(direct))


def propagate_by_relaxing(specs: Iterable[JobSpec]) -> dict[str, int]:
    """``propagate`` by its definition: relax along ``depends_on`` edges until stable."""
    by_id = {s.id: s for s in specs}
    eff = {i: s.priority for i, s in by_id.items()}
    for _ in range(len(by_id)):
        changed = False
        for s in by_id.values():
            for dep in s.depends_on:
                if dep in eff and eff[dep] < eff[s.id] and by_id[dep].account == s.account:
                    eff[dep] = eff[s.id]
                    changed = True
        if not changed:
            break
    return eff


@dataclass(frozen=True, slots=True)
class DependencyPass:
    """What the dependency pass gives a tick: each job's same-team dependants (``dependants``)
    and its effective declared priority (``propagate``), from one reading of the edges."""

    dependants: dict[str, DependantList]
    declared: dict[str, int]


def dependency_pass(specs: Iterable[JobSpec]) -> DependencyPass:
    """``dependants(specs)`` and ``propagate(specs)``, sharing the edges and their order."""
    by_id, direct = _direct_dependants(specs)
    order = _dependants_first(direct)
    deps = dependants_by_search(by_id.values()) if order is None else _joined(by_id, direct, order)
    return DependencyPass(deps, _propagated(by_id, direct, order))


def _propagated(by_id: dict[str, JobSpec], direct: dict[str, list[str]], order: list[str] | None) -> dict[str, int]:
    """``propagate`` from the edges and ``_dependants_first``'s order (None: a cycle)."""
    if order is None:
        return propagate_by_relaxing(by_id.values())
    eff = {i: s.priority for i, s in by_id.items()}
    for root in order:
        best = eff[root]
        for d in direct[root]:
            got = eff[d]
            if got > best:
                best = got
        eff[root] = best
    return eff


def dependants(specs: Iterable[JobSpec]) -> dict[str, DependantList]:
    """Per job, the jobs of its own account that depend on it, directly or through others
    (sorted by id; jobs nobody of its team waits for are left out).

    Each job's set is its direct dependants' sets joined, taken in an order where a dependant
    comes before what it depends on; a chain's link adds one job in front of its successor's
    tuple, unsorted work for a 30-day trace's chains of up to 160 runs (a search per job from
    scratch, ``dependants_by_search``, was 2.4 s of such a run compiled; this, 0.3 s).  A dependency cycle
    (a trace the checks would refuse, but the core may be handed one) falls back to that search,
    which is also the plain definition the property test compares with."""
    by_id, direct = _direct_dependants(specs)
    order = _dependants_first(direct)
    if order is None:
        return dependants_by_search(by_id.values())
    return _joined(by_id, direct, order)


def _joined(by_id: dict[str, JobSpec], direct: dict[str, list[str]], order: list[str]) -> dict[str, DependantList]:
    """``dependants`` along ``order`` (each job after all of its own): direct sets joined; a
    job with one direct dependant that sorts before all of that one's shares its list
    (``DependantList.before``: one slot a job along a chain, not the chain's length)."""
    out: dict[str, DependantList] = {}
    for root in order:
        ds = direct[root]
        if len(ds) == 1:
            d = ds[0]
            out[root] = one_dependant(by_id[d], out.get(d))
            continue
        got: set[str] = set(ds)
        for d in ds:
            below = out.get(d)
            if below is not None:
                for x in below:
                    got.add(x.id)
        out[root] = DependantList(tuple(by_id[j] for j in sorted(got)))
    return {root: out[root] for root in direct}


def one_dependant(dependant: JobSpec, after: DependantList | None) -> DependantList:
    """The dependants of a job with one same-team dependant, ``dependant``, whose own are
    ``after`` (no cycle): it in front of them when its id sorts before theirs (one slot a job
    along a chain), else all of them sorted by id.  ``_joined`` makes a chain's lists so, and so
    does the simulator's pass when a run joins the end of a chain
    (``sim.known_dependencies``)."""
    if after is None or dependant.id < after.first_id():
        return DependantList.before(dependant, after)
    return DependantList(tuple(sorted((dependant, *after.specs()), key=_spec_id)))


def _spec_id(spec: JobSpec) -> str:
    return spec.id


def dependants_by_search(specs: Iterable[JobSpec]) -> dict[str, DependantList]:
    """``dependants`` by its definition: from each job, every same-account job reachable along
    dependency edges (itself left out, which only a cycle would reach), sorted by id."""
    by_id, direct = _direct_dependants(specs)
    out: dict[str, DependantList] = {}
    for root in direct:
        seen: set[str] = set()
        todo = list(direct[root])
        while todo:
            j = todo.pop()
            if j not in seen and j != root:
                seen.add(j)
                todo.extend(direct.get(j, ()))
        out[root] = DependantList(tuple(by_id[j] for j in sorted(seen)))
    return out


def _direct_dependants(specs: Iterable[JobSpec]) -> tuple[dict[str, JobSpec], dict[str, list[str]]]:
    """The jobs by id, and per job the same-account jobs that name it in ``depends_on``."""
    by_id = {s.id: s for s in specs}
    direct: dict[str, list[str]] = {}
    for s in by_id.values():
        for dep in s.depends_on:
            if dep in by_id and by_id[dep].account == s.account:
                direct.setdefault(dep, []).append(s.id)
    return by_id, direct


def _dependants_first(direct: dict[str, list[str]]) -> list[str] | None:
    """The jobs with dependants, each after all of its own, or None if the edges hold a cycle.

    Kahn's order over the jobs with dependants: a job is ready once every direct dependant that
    has dependants itself is placed (a depth-first post-order gave the same guarantee at twice
    the cost: 1.7 of the benchmark's milliseconds).  A cycle leaves its jobs never ready."""
    waiting = dict.fromkeys(direct, 0)  # per job, its direct dependants not placed yet
    ups: dict[str, list[str]] = {}  # per job with dependants, the jobs waiting for it to be placed
    for j, ds in direct.items():
        for d in ds:
            if d in waiting:
                waiting[j] += 1
                got = ups.get(d)
                if got is None:
                    ups[d] = [j]
                else:
                    got.append(j)
    ready = [j for j, n in waiting.items() if n == 0]
    order: list[str] = []
    while ready:
        j = ready.pop()
        order.append(j)
        for u in ups.get(j, ()):
            n = waiting[u] - 1
            waiting[u] = n
            if n == 0:
                ready.append(u)
    return order if len(order) == len(direct) else None


class Scorer:
    """The within-team score of pending jobs for one pass: at time ``t`` (the epoch), with
    ``max_free`` free GPUs on the best node, ``load`` = demanded / installed GPUs, and each
    (account, user)'s running GPUs in ``user_gpus`` (by id: a queued job's ``Pend.uid`` is its
    id in the table the scheduler scores with; a job without one, as explain makes them, is
    looked up by name)."""

    __slots__ = (
        "age_cap",
        "age_div",
        "boost_index",
        "boosts",
        "dependencies",
        "deps",
        "facts",
        "k",
        "load",
        "max_free",
        "memo",
        "merge_from",
        "merged",
        "mode",
        "pw",
        "short",
        "t",
        "user_gpus",
        "w",
        "w_fair",
        "w_fit",
        "wsum",
        "ww",
    )

    def __init__(
        self,
        ctx: Context,
        t: float,
        load: float,
        max_free: int,
        user_gpus: UserGpus,
        boosts: Mapping[str, float],
        deps: Mapping[str, DependantList] | None = None,
        *,
        memo: bool = False,
        merged: bool = False,
        boost_index: BoostIndex | None = None,
        facts: DependantFactsCache | None = None,
        weights: ScoreWeights | None = None,
    ) -> None:
        # the weights as a compiled record (``core.weights``): the scheduler's, made once, or made
        # here; ``w`` is the policy's object they copy, which the memos compare by identity
        self.k = k = weights if weights is not None else ScoreWeights(ctx.policy.priority_weights)
        self.w = k.source
        self.t = t
        self.age_cap = k.age_cap
        self.age_div = k.age_div
        self.load = load  # reported by ``parts`` (explain): what the weights below were read at
        self.w_fit = k.fit * min(3.0, max(1.0, load))
        self.w_fair = k.fairness
        self.max_free = max_free
        self.user_gpus = user_gpus
        # the derivation (``within_team``): ``fixed`` runs the code below as it always has
        pw: PriorityWeights = k.source
        self.pw, self.mode, self.dependencies, self.short = pw, k.mode, k.dependencies, k.short
        if k.mode == "adaptive":
            self.ww: Weights5 = blended(pw, load)
            self.wsum = sum(self.ww)
        else:  # the sum of five zeros, without a generic call of ``sum``
            self.ww, self.wsum = (0.0, 0.0, 0.0, 0.0, 0.0), 0.0
        if not pw.dependencies:
            deps = None
        self.boosts = boosts  # active_boosts(ctx, t), computed once per pass
        # ``boosts`` indexed (``BoostsAt.index``: once per epoch), or made when first needed
        self.boost_index: BoostIndex | None = boost_index
        # dependants(...) of every known job, as a dict: under mypyc ``get`` on a ``Mapping`` is a
        # generic method call, on a ``dict`` a direct one (``dependants`` makes dicts: no copy)
        self.deps: dict[str, DependantList] = deps if isinstance(deps, dict) else dict(deps or {})
        # keep each job's time-only part (StaticScore) across passes of the epoch; only for
        # callers whose ``boosts`` is always ``active_boosts(ctx, t)`` (the scheduler's walk)
        self.memo = memo
        # read what the dependants lend ``adaptive`` and ``fifo`` from their merged groups
        # (``core.inherited.DerivedParts``), not one by one: both fast walks (``WalkPolicy.merges``)
        self.merged = merged or memo
        self.merge_from: int = MERGE_FROM
        # the dependants' facts: the scheduler's, copied once per run (only for that user table),
        # else this scorer's own, read afresh
        self.facts = facts if facts is not None and facts.users is user_gpus else DependantFactsCache(user_gpus)

    def parts(self, p: Pend) -> PriorityScore:
        """Each weighted signal of ``p``, and each factor with its weight; its ``total`` is
        ``total(p)``, the one definition of the score (so explain cannot show a sum the pass did
        not rank by)."""
        names = ("declared", "deadline", "age", "fairness", "fit")
        raw = self._raw(p)
        if self.mode == "fixed":
            declared, deadline, age, fairness, fit, boost = self._signals(p)
            w = self.k
            weights = (w.declared, w.deadline, w.age, w.fairness, self.w_fit)
            terms = tuple(Term(n, f, x) for n, f, x in zip(names, raw, weights, strict=True))
            return PriorityScore(self.total(p), declared, deadline, age, fairness, fit, boost, self._inherited(p),
                                 "fixed", terms, self.load)
        ww, wsum = self.ww, self.wsum
        d, dl, a, fa, fi = (ww[i] * raw[i] / wsum if wsum > 0 else 0.0 for i in range(5))
        boost = self._boost(p.jid, p.user, p.account)
        got = self.deps.get(p.jid) if self.deps else None
        return PriorityScore(self.total(p), d, dl, a, fa, fi, boost, self._inherited_derived(p, got) if got else 0.0,
                             self.mode, tuple(Term(n, f, x) for n, f, x in zip(names, raw, ww, strict=True)), self.load)

    def total(self, p: Pend) -> float:
        """The score: declared + deadline + age + fairness + fit + boost, added in that order
        (the first three and the boost from ``_static``), raised to ``_inherited`` for a job
        that others of its team wait for (only then: a job nobody waits for keeps its own
        score, negative or not).  In the other modes, ``_derived``."""
        if self.mode != "fixed":
            return self._derived(p)
        s = p.static
        if s is None or s.t != self.t or s.weights is not self.w or not self.memo:
            s = self._static(p)
        fairness = self.w_fair * (1.0 / (1.0 + self._running(p) / 8.0))
        fit = self.w_fit if p.gpus <= self.max_free else 0.0
        own = s.head + fairness + fit + s.boost
        got = self.deps.get(p.jid) if self.deps else None
        if got is None:
            return own
        inherited = self._inherited_from(p, got)
        return inherited if inherited > own else own  # max(own, inherited), without the call

    def static(self, p: Pend) -> StaticScore:
        """``p``'s epoch-static part (head and boost) exactly as ``total`` reads it: kept on the
        job (``memo``) or computed now.  What ``core.fairness_merge`` groups a user's jobs by."""
        s = p.static
        if s is None or s.t != self.t or s.weights is not self.w or not self.memo:
            s = self._static(p)
        return s

    def moving(self, p: Pend) -> float:
        """fairness + fit of ``p`` now: the part of ``total`` that moves within an epoch, the
        same for every job of one user with the same GPUs.  Only a bound's input
        (``core.fairness_merge``): a score itself is always ``total``."""
        fit = self.w_fit if p.gpus <= self.max_free else 0.0
        return self.w_fair * (1.0 / (1.0 + self._running(p) / 8.0)) + fit

    def _static(self, p: Pend) -> StaticScore:
        """declared + deadline + age, and the boost: what only the epoch changes."""
        declared, deadline, age, _, _, boost = self._signals(p)
        s = StaticScore(self.t, self.w, declared + deadline + age, boost)
        if self.memo:
            p.static = s
        return s

    def _inherited(self, p: Pend) -> float:
        """``INHERIT`` x the best score of a same-team job waiting for ``p`` (0 if none): each
        dependant's declared + deadline + fairness + fit + boost, added in that order."""
        got = self.deps.get(p.jid) if self.deps else None
        return self._inherited_from(p, got) if got else 0.0

    def _inherited_from(self, p: Pend, got: DependantList) -> float:
        """``_inherited`` of ``p``, whose dependants are ``got``.  (``-math.inf`` and the
        ``Final`` ``INHERIT`` are constants under mypyc; ``-float("inf")`` parsed a string and
        a plain global was a dict lookup, per call.)"""
        if not got:
            return 0.0
        m = p.inherit
        # kept only for the same dependants (``got`` is a new list whenever one arrives or leaves,
        # even within an epoch) and the same epoch, or, timeless, the same boosts
        if m is None or m.weights is not self.w or not self.memo or m.users is not self.user_gpus or m.got is not got or not (
            m.t == self.t or (m.timeless and self._same_boosts(m))
        ):
            m = self._inherited_parts(p, got)
        w_fair, users = self.w_fair, self.user_gpus.gpus
        fit = self.w_fit if p.gpus <= self.max_free else 0.0
        best = -math.inf
        for who, head, boost in m.parts:
            score = head + w_fair * (1.0 / (1.0 + users[who] / 8.0)) + fit + boost
            if score > best:  # max(best, score), without the call
                best = score
        return INHERIT * best

    def _same_boosts(self, m: InheritedParts) -> bool:
        """Were ``m``'s parts made with this pass's active boosts?  By identity, else by value:
        then ``m`` keeps this pass's equal mapping, so that the epoch's next passes find it by
        identity (a dict comparison per job and pass was 11% of ``_inherited_from``)."""
        if m.boosts is self.boosts:
            return True
        if m.boosts == self.boosts:
            m.boosts = self.boosts
            return True
        return False

    def _inherited_parts(self, p: Pend, got: DependantList) -> InheritedParts:
        """What of ``_inherited`` only the epoch changes (``InheritedParts``): read dependant by
        dependant (the reference), or, kept (``memo``), from the dependants' merged parts
        (``core.inherited``), with only those that have a deadline read again."""
        w, t = self.w, self.t
        index = self._boosts() if self.boosts else None
        ahead = max(0.0, p.work - p.done_work)  # the dependant cannot start before p ends
        if not self.memo:
            ds = [self.facts.of(spec) for spec in got]
            flat = tuple(dependant_part(d, self.k, t, ahead, index) for d in ds)
            return InheritedParts(t, w, flat, all(d.deadline is None for d in ds), got, self.boosts, self.user_gpus)
        c = self.facts.closure(p.jid, self.deps, self.k, self.boosts, index)
        parts = c.timeless
        if c.dated:  # the rest read the time and p's remaining work: scored now
            kept = list(parts)
            same = {(who, boost): i for i, (who, _, boost) in enumerate(kept)}
            for d in c.dated:
                keep_best(kept, same, dependant_part(d, self.k, t, ahead, index))
            parts = tuple(kept)
        m = InheritedParts(t, w, parts, not c.dated, got, self.boosts, self.user_gpus)
        p.inherit = m
        return m

    def _running(self, p: Pend) -> int:
        """The GPUs ``p``'s user runs in its team (by its id; by name if it has none)."""
        uid = p.uid
        if uid < 0:
            uid = self.user_gpus.id_of(p.account, p.user)
        return self.user_gpus.gpus[uid]

    def _boosts(self) -> BoostIndex:
        if self.boost_index is None:
            self.boost_index = BoostIndex(self.boosts)
        return self.boost_index

    def _raw(self, p: Pend) -> Weights5:
        """The factors before weights: declared priority (as declared, or propagated from its
        dependants; ``adaptive`` squashes it, ``declared_factor``), deadline urgency, capped
        age, user fairness, fit (1 or 0)."""
        t = self.t
        declared = p.declared if self.dependencies else p.spec.priority
        urgency = _urgency(p.deadline, t, p.work - p.done_work)
        age = min(max(0.0, t - p.eligible), self.age_cap) / self.age_div
        fairness = 1.0 / (1.0 + self._running(p) / 8.0)
        fit = 1.0 if p.gpus <= self.max_free else 0.0
        return (declared if self.mode == "fixed" else declared_factor(declared), urgency, age, fairness, fit)

    def _signals(self, p: Pend) -> tuple[float, float, float, float, float, float]:
        w = self.k
        declared, urgency, age, fairness, fits = self._raw(p)
        fit = self.w_fit if fits else 0.0
        boost = boost_of(self._boosts(), p.jid, p.user, p.account) if self.boosts else 0.0
        return (w.declared * declared, w.deadline * urgency, w.age * age, w.fairness * fairness, fit, boost)

    def _boost(self, job_id: str, user: str, account: str) -> float:
        return boost_of(self._boosts(), job_id, user, account) if self.boosts else 0.0

    def _weighted(self, f: Weights5) -> float:
        """The adaptive derived score of factors ``f``: their weighted mean, in [0, 1] (0 in
        ``fifo``, whose weights are all 0)."""
        ww, wsum = self.ww, self.wsum
        if wsum <= 0:
            return 0.0
        return (ww[0] * f[0] + ww[1] * f[1] + ww[2] * f[2] + ww[3] * f[3] + ww[4] * f[4]) / wsum

    def _derived(self, p: Pend) -> float:
        """``adaptive`` and ``fifo``: the derived score plus the boost, raised to what its
        same-team dependants lend it (``_inherited_derived``)."""
        own = self._weighted(self._raw(p)) + self._boost(p.jid, p.user, p.account)
        got = self.deps.get(p.jid) if self.deps else None
        if not got:
            return own
        lent = self._inherited_derived(p, got)
        return lent if lent > own else own

    def _inherited_derived(self, p: Pend, got: DependantList) -> float:
        """The best of each dependant's score as if pending now (its declared priority, its
        deadline with ``p``'s remaining work taken from its slack, no age, its user's fairness,
        ``p``'s fit, its boost), times ``INHERIT`` -- or whole when ``p``'s remaining work is
        under ``short_prerequisite`` x the dependant's work: then ``p`` goes first.  Read here
        dependant by dependant (the reference), or from their merged groups (``merged``:
        ``_inherited_grouped``, the same maximum)."""
        ahead = max(0.0, p.work - p.done_work)
        fit = 1.0 if p.gpus <= self.max_free else 0.0
        if self.merged and self.short >= 0 and len(got) >= self.merge_from:  # the fast walks: merged groups
            return self._inherited_grouped(p, ahead, fit)
        users = self.user_gpus
        best = -math.inf
        for d in got:
            running = users.gpus[users.id_of(d.account, d.user)]
            f = (declared_factor(d.priority), _urgency(d.deadline, self.t, ahead + d.work), 0.0,
                 1.0 / (1.0 + running / 8.0), fit)
            score = self._weighted(f) + self._boost(d.id, d.user, d.account)
            lent = score if ahead < self.short * d.work else INHERIT * score
            if lent > best:
                best = lent
        return best

    def _inherited_grouped(self, p: Pend, ahead: float, fit: float) -> float:
        """``_inherited_derived`` from ``p``'s dependants merged (``DerivedParts``): a group's
        dependants score alike, so it lends its score whole if its longest one is long enough
        and ``INHERIT`` x it if its shortest one is not (the same floats, so the same maximum)."""
        index = self._boosts() if self.boosts else None
        c = self.facts.derived(p.jid, self.deps, self.boosts, index)
        gpus, short = self.user_gpus.gpus, self.short
        best = -math.inf
        for who, priority, boost, most, least in c.groups:
            f = (declared_factor(priority), 0.0, 0.0, 1.0 / (1.0 + gpus[who] / 8.0), fit)
            score = self._weighted(f) + boost
            if ahead < short * most and score > best:
                best = score
            if not ahead < short * least:
                lent = INHERIT * score
                if lent > best:
                    best = lent
        for d in c.dated:
            f = (declared_factor(d.priority), _urgency(d.deadline, self.t, ahead + d.work), 0.0,
                 1.0 / (1.0 + gpus[d.who] / 8.0), fit)
            score = self._weighted(f) + self._boost(d.jid, d.user, d.account)
            lent = score if ahead < short * d.work else INHERIT * score
            if lent > best:
                best = lent
        return best

    def key(self, p: Pend) -> tuple[float, float, str]:
        """The order of the pass: best score first, ties by eligibility, then job id (so no two
        jobs' keys are equal)."""
        return (-self.total(p), p.eligible, p.jid)

    def best(self, cands: Iterable[Pend], k: int) -> list[Pend]:
        """The ``k`` best of ``cands`` by ``key``, best first (the same order as ``rank`` over
        all of them, cut at ``k``): a boosted or urgent job is offered wherever its declared
        priority and age put it in its queue."""
        return heapq.nsmallest(k, cands, key=self.key)

    def rank(self, cands: list[Pend]) -> list[Pend]:
        """``cands`` in ``key`` order: the keys sorted as plain tuples (no key function called
        per comparison pass), each with the job's place in ``cands`` after it (never compared:
        the keys end in distinct ids), so no dict of the jobs by id is needed."""
        return cands if len(cands) < 2 else self.ranked(cands)[1]

    def ranked(self, cands: list[Pend]) -> tuple[list[tuple[float, float, str]], list[Pend]]:
        """``rank(cands)`` and, in the same order, each job's ``key`` (what a kept order puts a
        job scored again back in place by: ``core.candidates``): a long queue scored over arrays
        (``core.within_team_arrays``, the same keys to the bit) where they pay -- interpreted
        only (``arrays_pay``) -- a short one, or any under mypyc, by ``ranked_by_key``.  The
        arrays' module (and numpy) is imported only for a long queue: a function-level import
        is a module lookup on every call (about 28 million instructions in a 3-day ``ai2`` run,
        which ranks short queues only), and the first imports numpy."""
        if len(cands) >= ARRAYS_FROM:
            from allotment.core.within_team_arrays import arrays_pay, ranked_arrays

            if arrays_pay():
                return ranked_arrays(self, cands)
        if len(cands) <= INSERT_UPTO:
            return self.ranked_by_insertion(cands)
        return self.ranked_by_key(cands)

    def ranked_by_insertion(self, cands: list[Pend]) -> tuple[list[tuple[float, float, str]], list[Pend]]:
        """``ranked_by_key`` for a short queue (the candidate orders' rebuilds: 6 jobs on
        average in ``ai2``): each job's key made once and put in place among those before it,
        compared field by field on unboxed floats, where the reference makes a 4-tuple per job,
        sorts them by generic tuple comparisons and makes each key again.  The keys end in
        distinct ids, so without a NaN they are a total order and any sort gives the one
        order; a NaN (score or eligibility) has no place in it, and then the reference's sort
        decides, as it always did."""
        keys: list[tuple[float, float, str]] = []
        jobs: list[Pend] = []
        for p in cands:
            s = -self.total(p)
            e = p.eligible
            if s != s or e != e:  # NaN: no total order
                return self.ranked_by_key(cands)
            jid = p.jid
            i = len(keys)
            while i > 0:
                k0, k1, k2 = keys[i - 1]
                if k0 < s or (k0 == s and (k1 < e or (k1 == e and k2 <= jid))):  # equal keys: stable
                    break
                i -= 1
            keys.insert(i, (s, e, jid))
            jobs.insert(i, p)
        return keys, jobs

    def ranked_by_key(self, cands: list[Pend]) -> tuple[list[tuple[float, float, str]], list[Pend]]:
        """``ranked`` by its definition, one ``key`` per job: the plain reference."""
        keys = [(-self.total(p), p.eligible, p.jid, i) for i, p in enumerate(cands)]
        keys.sort()
        return [(k[0], k[1], k[2]) for k in keys], [cands[k[3]] for k in keys]
