"""The within-team order of a long queue computed over arrays: ``Scorer.ranked``'s fast path.

Why: a tick that orders 10,000 pending jobs paid about 7 us of interpreted Python per job in
``Scorer.total`` (issue 28, item 5: the whole derivation <= 20 ms).  Here each factor of every job
is one numpy array and each step of the score one array operation, so the per-job Python left
is reading the jobs' fields once.

It is not a second rule.  ``core.priority.Scorer`` owns the score; this module repeats its
arithmetic step by step -- the same IEEE operations on the same operands, in the same order
(``a + b + c`` as ``(a + b) + c``; numpy never fuses a multiply into an add), so every total is
bit-identical to ``Scorer.total``'s -- and sorts by the same key, best score first, then
eligibility, then job id.  ``Scorer.ranked_by_key`` is the plain reference;
``tests/core/test_within_team_arrays.py`` checks over generated queues (every mode, with and
without dependencies, boosts, deadlines, memo on and off) that both give the same keys, to the
bit, and the same order.  A change to the score in ``Scorer`` that is not made here fails that
test.

What a prerequisite inherits is computed from its dependants one by one (the reference's flat
reading); in ``adaptive`` and ``fifo`` the fast walks (``Scorer.merged``) read instead each prerequisite's
merged groups (``core.inherited.DerivedParts``), which give the same maximum.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from allotment.core.boosts import BoostIndex, boost_of
from allotment.core.ids import UserId
from allotment.core.inherited import DependantFacts, Group
from allotment.core.jobs import JobSpec
from allotment.core.priority import ARRAYS_FROM, INHERIT
from allotment.core.state import Pend

if TYPE_CHECKING:
    from allotment.core.priority import Scorer

Floats = npt.NDArray[np.float64]

__all__ = ["ARRAYS_FROM", "arrays_pay", "ranked_arrays"]

_PAY: list[bool] = []  # arrays_pay's answer, once known


def arrays_pay() -> bool:
    """Do the arrays pay in this build?  Only where ``core.priority`` runs interpreted: under
    mypyc the reference's loop over compiled records ranks the 10,000-job benchmark's queues in
    9.9 ms against the arrays' 13.1 (docs/benchmarks.md, issue 28 item 5, 2026-12-05), and
    interpreted the arrays take about half the loop's time.  Both give the same keys to the bit
    (``tests/core/test_within_team_arrays.py`` calls ``ranked_arrays`` itself, in every build).
    Read from the module's file once it is imported (an extension's is not a ``.py``)."""
    if not _PAY:
        got = getattr(sys.modules.get("allotment.core.priority"), "__file__", None)
        _PAY.append(isinstance(got, str) and got.endswith(".py"))
    return _PAY[0]


def ranked_arrays(scorer: Scorer, cands: list[Pend]) -> tuple[list[tuple[float, float, str]], list[Pend]]:
    """``scorer.ranked_by_key(cands)``: the keys in order, and the jobs in that order."""
    n = len(cands)
    ids = [p.jid for p in cands]
    eligs = [p.eligible for p in cands]
    elig = np.fromiter(eligs, np.float64, n)
    neg = -_totals(scorer, cands, ids, elig)
    order = np.lexsort((elig, neg))  # by -score, then eligibility; stable
    o: list[int] = order.tolist()
    n_s, e_s = neg[order], elig[order]
    tied = np.flatnonzero((n_s[1:] == n_s[:-1]) & (e_s[1:] == e_s[:-1]))
    if tied.size:  # equal score and eligibility: by job id, as the key's last part says
        _by_id_within_ties(o, tied.tolist(), ids)
    negs: list[float] = neg.tolist()
    return [(negs[i], eligs[i], ids[i]) for i in o], [cands[i] for i in o]


def _by_id_within_ties(o: list[int], tied: list[int], ids: list[str]) -> None:
    """Sort each run of tied places of ``o`` (``tied``: each place k whose job ties with k + 1)
    by job id."""
    k = 0
    while k < len(tied):
        lo = tied[k]
        hi = lo + 1
        while k < len(tied) and tied[k] == hi - 1:
            hi += 1
            k += 1
        o[lo:hi] = sorted(o[lo:hi], key=ids.__getitem__)


def _floats(values: list[float] | list[int]) -> Floats:
    return np.fromiter(values, np.float64, len(values))


def _totals(sc: Scorer, cands: list[Pend], ids: list[str], elig: Floats) -> Floats:
    """``sc.total(p)`` of every ``p`` in ``cands`` (whose ids and eligibility times are given), in order."""
    users = sc.user_gpus
    uids = [p.uid for p in cands]
    if min(uids) < 0:  # a job without its id (as explain makes them): by name
        uids = [p.uid if p.uid >= 0 else users.id_of(p.account, p.user) for p in cands]
    gpus = users.gpus
    running = _floats([gpus[u] for u in uids])
    declared = _floats([p.declared for p in cands] if sc.dependencies else [p.spec.priority for p in cands])
    left = _floats([p.work for p in cands]) - _floats([p.done_work for p in cands])
    urgency = _urgency(cands, sc.t, left)
    age = np.minimum(np.maximum(0.0, sc.t - elig), sc.age_cap) / sc.age_div
    fairness = 1.0 / (1.0 + running / 8.0)
    fits = np.fromiter([p.gpus for p in cands], np.int64, len(cands)) <= sc.max_free
    boost = _boosts(sc, cands, uids)
    if sc.mode == "fixed":
        k = sc.k
        head = (k.declared * declared + k.deadline * urgency) + k.age * age
        own = ((head + sc.w_fair * fairness) + np.where(fits, sc.w_fit, 0.0)) + boost
    else:
        factors = (0.5 + 0.5 * declared / (1.0 + np.abs(declared)), urgency, age, fairness, np.where(fits, 1.0, 0.0))
        own = _weighted(sc, factors) + boost
    if sc.deps:
        _inherit(sc, ids, own, np.maximum(0.0, left), fits)
    return own


def _urgency(cands: list[Pend], t: float, left: Floats) -> Floats:
    """``priority._urgency`` of each job: 0 without a deadline, else 1 / (1 + slack / 1 h), 1
    once the slack (deadline - t - work left) is gone."""
    out = np.zeros(len(cands), dtype=np.float64)
    at, deadlines = _dated([p.deadline for p in cands])
    if at:
        ks = np.fromiter(at, np.intp, len(at))
        out[ks] = _from_slack((_floats(deadlines) - t) - left[ks])
    return out


def _dated(deadlines: list[float | None]) -> tuple[list[int], list[float]]:
    """The places of the deadlines that are set, and those deadlines."""
    at: list[int] = []
    got: list[float] = []
    for i, d in enumerate(deadlines):
        if d is not None:
            at.append(i)
            got.append(d)
    return at, got


def _from_slack(slack: Floats) -> Floats:
    late = slack <= 0
    out = np.ones(slack.shape, dtype=np.float64)
    out[~late] = 1.0 / (1.0 + slack[~late] / 3600.0)
    return out


def _weighted(sc: Scorer, f: tuple[Floats, Floats, Floats, Floats, Floats]) -> Floats:
    """``Scorer._weighted``: the factors' weighted mean (0 when the weights sum to 0: ``fifo``)."""
    ww, wsum = sc.ww, sc.wsum
    if wsum <= 0:
        return np.zeros(len(f[0]), dtype=np.float64)
    return ((((ww[0] * f[0] + ww[1] * f[1]) + ww[2] * f[2]) + ww[3] * f[3]) + ww[4] * f[4]) / wsum


def _boosts(sc: Scorer, cands: list[Pend], uids: list[UserId]) -> Floats:
    """``boost_of`` each job: (its own + its user's) + its account's.  Per (account, user) id
    as ``(0.0 + user's) + account's`` -- the very expression for a job without a boost of its
    own -- and each job with one of its own read whole."""
    n = len(cands)
    if not sc.boosts:
        return np.zeros(n, dtype=np.float64)
    index: BoostIndex = sc._boosts()  # the scorer's own index, made once per pass
    names = sc.user_gpus.names
    per: dict[UserId, float] = {}
    for u in set(uids):
        account, user = names[u]
        per[u] = (0.0 + index.users.get(user, 0.0)) + index.accounts.get(account, 0.0)
    out = _floats([per[u] for u in uids])
    if index.jobs:
        for i, p in enumerate(cands):
            if p.jid in index.jobs:
                out[i] = boost_of(index, p.jid, p.user, p.account)
    return out


def _inherit(sc: Scorer, ids: list[str], own: Floats, ahead: Floats, fits: npt.NDArray[np.bool_]) -> None:
    """Raise each prerequisite's score in ``own`` to what its same-team dependants lend it
    (``Scorer._inherited_from`` in ``fixed``, ``_inherited_derived`` in the others)."""
    if sc.mode != "fixed" and sc.merged and sc.short >= 0:
        _inherit_grouped(sc, ids, own, ahead, fits)
        return
    deps = sc.deps
    owner: list[int] = []  # per pair (prerequisite, dependant), the prerequisite's place
    dspecs: list[JobSpec] = []
    with_deps: list[int] = []
    lenders: list[int] = []  # the places with dependants listed, and where their pairs start
    starts: list[int] = []
    for i, jid in enumerate(ids):
        got = deps.get(jid)
        if got is None:
            continue
        with_deps.append(i)
        if got:
            lenders.append(i)
            starts.append(len(dspecs))
            owner.extend([i] * len(got))
            dspecs.extend(got)
    if not with_deps:
        return
    users = sc.user_gpus
    index = sc._boosts() if sc.boosts else None
    at = np.fromiter(owner, np.intp, len(owner))
    facts = [sc.facts.of(d) for d in dspecs]  # each dependant's fields, read once per run (the memo's) or pass
    gpus = users.gpus
    fair = 1.0 / (1.0 + _floats([gpus[f.who] for f in facts]) / 8.0)
    prio = _floats([f.priority for f in facts])
    dwork = _floats([f.work for f in facts])
    boost = (np.zeros(len(facts), dtype=np.float64) if index is None
             else _floats([boost_of(index, f.jid, f.user, f.account) for f in facts]))
    a = ahead[at]
    dated, deadlines = _dated([f.deadline for f in facts])
    fixed = sc.mode == "fixed"
    urgency = np.zeros(len(dspecs), dtype=np.float64)
    if dated:
        ks = np.fromiter(dated, np.intp, len(dated))
        dl = _floats(deadlines)
        # fixed (``inherited.dependant_part``): deadline - t - ahead - work; the others
        # (``_inherited_derived``): deadline - t - (ahead + work)
        slack = ((dl - sc.t) - a[ks]) - dwork[ks] if fixed else (dl - sc.t) - (a[ks] + dwork[ks])
        urgency[ks] = _from_slack(slack)
    if fixed:
        k = sc.k
        head = k.declared * prio + k.deadline * urgency
        best = _best(len(ids), lenders, starts, ((head + sc.w_fair * fair) + np.where(fits[at], sc.w_fit, 0.0)) + boost)
    else:
        f = (0.5 + 0.5 * prio / (1.0 + np.abs(prio)), urgency, np.zeros(len(dspecs), dtype=np.float64), fair,
             np.where(fits[at], 1.0, 0.0))
        score = _weighted(sc, f) + boost
        best = _best(len(ids), lenders, starts, np.where(a < sc.short * dwork, score, INHERIT * score))
    has = np.zeros(len(ids), dtype=np.bool_)
    has[np.array(with_deps, dtype=np.intp)] = True
    none = best == -np.inf  # listed with no dependants (a job on a cycle of its own)
    if fixed:  # ``_inherited_from``: INHERIT x the best, 0.0 of none
        lent = INHERIT * best
        lent[none] = 0.0
    else:  # ``_derived``: a job with none keeps its own
        lent = best
        has &= ~none
    up = has & (lent > own)
    own[up] = lent[up]


def _inherit_grouped(sc: Scorer, ids: list[str], own: Floats, ahead: Floats, fits: npt.NDArray[np.bool_]) -> None:
    """``_inherit`` in ``adaptive`` and ``fifo`` from each prerequisite's merged dependants
    (``core.inherited.DerivedParts``, as ``Scorer._inherited_grouped`` reads them): a group
    lends its score whole where its most work is long enough, ``INHERIT`` x it where its least is
    not.  A dependant with a deadline, and each of a prerequisite with fewer than
    ``Scorer.merge_from``, is read alone (``_lent_one_by_one``); a job's best is the higher of
    the two kinds'."""
    deps, facts = sc.deps, sc.facts
    index = sc._boosts() if sc.boosts else None
    g_owner: list[int] = []  # per group, the prerequisite's place, and the group
    groups: list[Group] = []
    g_lenders: list[int] = []  # the places with groups, and where their groups start
    g_starts: list[int] = []
    owner: list[int] = []  # per dependant read alone, the prerequisite's place, and its facts
    alone: list[DependantFacts] = []
    lenders: list[int] = []
    starts: list[int] = []
    with_deps: list[int] = []
    for i, jid in enumerate(ids):
        got = deps.get(jid)
        if got is None:
            continue
        with_deps.append(i)
        if not got:
            continue
        if len(got) < sc.merge_from:  # a few dependants: no merge to make
            lenders.append(i)
            starts.append(len(alone))
            owner.extend([i] * len(got))
            alone.extend([facts.of(spec) for spec in got.specs()])
            continue
        c = facts.derived(jid, deps, sc.boosts, index)
        if c.groups:
            g_lenders.append(i)
            g_starts.append(len(groups))
            g_owner.extend([i] * len(c.groups))
            groups.extend(c.groups)
        if c.dated:
            lenders.append(i)
            starts.append(len(alone))
            owner.extend([i] * len(c.dated))
            alone.extend(c.dated)
    if not with_deps:
        return
    best = _lent_one_by_one(sc, len(ids), owner, alone, lenders, starts, ahead, fits, index)
    if groups:
        at = np.fromiter(g_owner, np.intp, len(g_owner))
        gpus = sc.user_gpus.gpus
        fair = 1.0 / (1.0 + _floats([gpus[g[0]] for g in groups]) / 8.0)
        pr = _floats([g[1] for g in groups])
        a = ahead[at]
        f = (0.5 + 0.5 * pr / (1.0 + np.abs(pr)), np.zeros(len(groups), dtype=np.float64),
             np.zeros(len(groups), dtype=np.float64), fair, np.where(fits[at], 1.0, 0.0))
        score = _weighted(sc, f) + _floats([g[2] for g in groups])
        whole = np.where(a < sc.short * _floats([g[3] for g in groups]), score, -np.inf)
        part = np.where(a < sc.short * _floats([g[4] for g in groups]), -np.inf, INHERIT * score)
        best = np.maximum(best, _best(len(ids), g_lenders, g_starts, np.maximum(whole, part)))
    has = np.zeros(len(ids), dtype=np.bool_)
    has[np.array(with_deps, dtype=np.intp)] = True
    has &= ~(best == -np.inf)  # ``_derived``: a job with none keeps its own
    up = has & (best > own)
    own[up] = best[up]


def _lent_one_by_one(sc: Scorer, n: int, owner: list[int], facts: list[DependantFacts], lenders: list[int],
                     starts: list[int], ahead: Floats, fits: npt.NDArray[np.bool_], index: BoostIndex | None) -> Floats:
    """Per job, the best its dependants ``facts`` (each of the job at its place in ``owner``)
    lend in ``adaptive`` and ``fifo``, read one by one; -inf for a job that lends nothing."""
    if not facts:
        return np.full(n, -np.inf, dtype=np.float64)
    at = np.fromiter(owner, np.intp, len(owner))
    gpus = sc.user_gpus.gpus
    fair = 1.0 / (1.0 + _floats([gpus[f.who] for f in facts]) / 8.0)
    prio = _floats([f.priority for f in facts])
    dwork = _floats([f.work for f in facts])
    boost = (np.zeros(len(facts), dtype=np.float64) if index is None
             else _floats([boost_of(index, f.jid, f.user, f.account) for f in facts]))
    a = ahead[at]
    urgency = np.zeros(len(facts), dtype=np.float64)
    dated, deadlines = _dated([f.deadline for f in facts])
    if dated:
        ks = np.fromiter(dated, np.intp, len(dated))
        urgency[ks] = _from_slack((_floats(deadlines) - sc.t) - (a[ks] + dwork[ks]))
    f = (0.5 + 0.5 * prio / (1.0 + np.abs(prio)), urgency, np.zeros(len(facts), dtype=np.float64), fair,
         np.where(fits[at], 1.0, 0.0))
    score = _weighted(sc, f) + boost
    return _best(n, lenders, starts, np.where(a < sc.short * dwork, score, INHERIT * score))


def _best(n: int, lenders: list[int], starts: list[int], score: Floats) -> Floats:
    """Per job, the highest ``score`` of its pairs (each lender's pairs are contiguous, from its
    ``starts``); -inf for a job that lends nothing."""
    best = np.full(n, -np.inf, dtype=np.float64)
    if lenders:
        best[np.fromiter(lenders, np.intp, len(lenders))] = np.maximum.reduceat(score, np.fromiter(starts, np.intp, len(starts)))
    return best
