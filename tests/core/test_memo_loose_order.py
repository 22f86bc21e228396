"""A merge's loose jobs kept in score order across restarts (``core.loose_order.LooseOrder``)
against scoring them all afresh: after every change a restart meets -- a user's running GPUs
(the job's own user, or a user whose dependant lends it a part), the best node's free GPUs, the
load, the epoch, the boosts, the user table, jobs arriving, leaving or queued again as a new
record -- the kept keys must be exactly the sort of ``Scorer.key`` by the reference scorer (no
memo), bit for bit.  The named cases pin each guard, so that dropping one fails them
(docs/design/memos.md)."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy
from allotment.core.candidates import CandidateOrders
from allotment.core.context import build_context
from allotment.core.dependant_list import DependantList
from allotment.core.ids import UserGpus
from allotment.core.jobs import JobSpec
from allotment.core.loose_order import FRESH, STALE, LooseOrder
from allotment.core.priority import Scorer, dependants
from allotment.core.state import Pend
from tests.core.builders import make_config

CTX = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy()), "c1")
USERS = ("u", "v", "w")
T0 = 100_000.0

# a prerequisite and its dependants: (its user, its GPUs, its eligible time, its declared
# priority, its dependants as (user, declared priority, deadline or None))
prereq = st.tuples(st.sampled_from(USERS), st.sampled_from([1, 2, 4, 8]), st.sampled_from([0.0, 1.0, 50_000.0]),
                   st.integers(-1, 1),
                   st.lists(st.tuples(st.sampled_from(USERS), st.integers(-1, 2),
                                      st.sampled_from([None, None, 150_000.0])), min_size=1, max_size=3))
# a change: a user's GPUs, the best node's free GPUs, the load, the epoch, a job leaving, a job
# queued again as a new record, a job arriving (one of the later ones)
change = st.one_of(
    st.tuples(st.just("gpus"), st.tuples(st.sampled_from(USERS), st.sampled_from([0, 1, 3, 8, 24]))),
    st.tuples(st.just("free"), st.sampled_from([0, 1, 2, 4, 8])),
    st.tuples(st.just("load"), st.sampled_from([0.5, 1.5, 3.5])),
    st.tuples(st.just("tick"), st.sampled_from([300.0, 7200.0])),
    st.tuples(st.just("leave"), st.integers(0, 30)),
    st.tuples(st.just("requeue"), st.integers(0, 30)),
    st.tuples(st.just("arrive"), st.just(0)),
)


class World:
    """Loose jobs (prerequisites), their dependants map, a user table and the scorer's inputs,
    with a ``LooseOrder`` kept through changes."""

    def __init__(self, first: list[tuple[str, int, float, int, list[tuple[str, int, float | None]]]],
                 later: list[tuple[str, int, float, int, list[tuple[str, int, float | None]]]]) -> None:
        self.specs: list[JobSpec] = []
        self.users = UserGpus()
        for u in USERS:
            self.users.set("a", u, 0)
        made = [self._made(x) for x in first]
        waiting = [self._made(x) for x in later]
        self.deps: dict[str, DependantList] = dependants(self.specs)  # the run's jobs known up front
        self.loose = [self._pend(s) for s in made]
        self.later = [self._pend(s) for s in waiting]
        self.t, self.free, self.load = T0, 2, 1.5
        self.boosts: dict[str, float] = {}
        self.ctx = CTX
        self.kept = LooseOrder()
        for p in self.loose:
            self.kept.add(p)

    def _made(self, x: tuple[str, int, float, int, list[tuple[str, int, float | None]]]) -> JobSpec:
        user, gpus, _, declared, deps = x
        i = len(self.specs)
        s = JobSpec(id=f"p{i:03d}", submit=0.0, account="a", gpus=gpus, work=600.0, user=user, priority=declared)
        self.specs.append(s)
        for k, (du, dp, dl) in enumerate(deps):
            self.specs.append(JobSpec(id=f"p{i:03d}d{k}", submit=0.0, account="a", gpus=1, work=3600.0, user=du,
                                      priority=dp, deadline=dl, depends_on=(s.id,)))
        return s

    def _pend(self, s: JobSpec, eligible: float | None = None) -> Pend:
        e = float(int(s.id[1:4]) % 3) * 25_000.0 if eligible is None else eligible
        p = Pend(s, e, e, 0.0, s.priority, None, "a")
        p.uid = self.users.id_of(s.account, s.user)
        return p

    def scorer(self, memo: bool = True) -> Scorer:
        return Scorer(self.ctx, self.t, self.load, self.free, self.users, self.boosts, self.deps, memo=memo)

    def want(self) -> list[tuple[float, float, str]]:
        ref = self.scorer(memo=False)
        return sorted(ref.key(p) for p in self.loose)

    def check(self, resolve: int = 0) -> None:
        """``bring``, then: the fresh keys are the reference's keys of their jobs, in order; each
        stale job's bound is at least its reference score; fresh, stale and resolved together
        are exactly the reference's sort.  Then ``resolve`` of the best bounds, as a merge
        reading that far would (a scored job's key exact), the rest left stale for the next."""
        scorer = self.scorer()
        assert self.kept.bring(scorer)
        ref = self.scorer(memo=False)
        fresh = [e.key for e in self.kept.ents if e.state == FRESH]
        assert fresh == sorted(fresh)
        assert fresh == [ref.key(e.p) for e in self.kept.ents if e.state == FRESH]
        stale = [e for e in self.kept.pool if e.state == STALE]
        assert stale == self.kept.pool  # cleaned: only stale entries, each once (``left``)
        assert len({id(e) for e in stale}) == len(stale)
        for e in stale:
            assert e.bound >= ref.total(e.p), (e.p.jid, e.bound, ref.total(e.p))
        assert sorted([*fresh, *(ref.key(e.p) for e in stale)]) == self.want()
        assert all(q is p for q, p in zip(sorted((e.p for e in self.kept.ents), key=_jid),
                                          sorted(self.loose, key=_jid), strict=True))
        assert [e.p.jid for e in self.kept.ents] == [k[2] for k in self.kept.keys]
        for _ in range(resolve):
            j = self.kept.top()
            if j < 0:
                break
            assert self.kept.resolve(j, scorer) == ref.key(self.kept.pool[j].p)

    def change(self, c: tuple[str, object]) -> None:
        kind, arg = c
        if kind == "gpus":
            user, gpus = arg  # type: ignore[misc]
            self.users.set("a", user, gpus)
        elif kind == "free":
            self.free = arg  # type: ignore[assignment]
        elif kind == "load":
            self.load = arg  # type: ignore[assignment]
        elif kind == "tick":
            self.t += arg  # type: ignore[operator]
        elif kind in ("leave", "requeue") and self.loose:
            p = self.loose.pop(arg % len(self.loose))  # type: ignore[operator]
            self.kept.drop(p)
            if kind == "requeue":  # a new record of the same job, with work done
                q = self._pend(p.spec, p.eligible + 1.0)
                q.done_work = 60.0
                self.loose.append(q)
                self.kept.add(q)
        elif kind == "arrive" and self.later:
            p = self.later.pop(0)
            self.loose.append(p)
            self.kept.add(p)


def _jid(p: Pend) -> str:
    return p.jid


@settings(max_examples=400, deadline=None)
@given(st.lists(prereq, min_size=1, max_size=10), st.lists(prereq, max_size=3),
       st.lists(st.tuples(change, st.sampled_from([0, 0, 1, 3])), max_size=12))
def test_the_kept_loose_order_is_the_fresh_sort_after_any_changes(
    first: list[tuple[str, int, float, int, list[tuple[str, int, float | None]]]],
    later: list[tuple[str, int, float, int, list[tuple[str, int, float | None]]]],
    changes: list[tuple[tuple[str, object], int]],
) -> None:
    """Stale jobs stay stale across restarts but for those a merge reads (``resolve``)."""
    w = World(first, later)
    w.check()
    for c, resolve in changes:
        w.change(c)
        w.check(resolve)


@settings(max_examples=200, deadline=None)
@given(st.lists(prereq, min_size=1, max_size=10), st.lists(prereq, max_size=3),
       st.lists(st.tuples(change, st.integers(1, 6), st.booleans()), max_size=10))
def test_a_merged_queue_of_loose_jobs_is_the_sort_by_the_whole_score(
    first: list[tuple[str, int, float, int, list[tuple[str, int, float | None]]]],
    later: list[tuple[str, int, float, int, list[tuple[str, int, float | None]]]],
    changes: list[tuple[tuple[str, object], int, bool]],
) -> None:
    """The same changes through ``CandidateOrders`` (every queue merged): the merge reads the
    kept loose order as one stream among its runs, and scores a stale one when its bound reaches
    what it would emit next.  The queue also holds every dependant, so runs and loose jobs
    interleave; a visit reads the first ``depth``, and only some read the whole order (which
    scores every stale job)."""
    w = World(first, later)
    extra = [w._pend(s) for s in w.specs if s.id not in w.deps and "d" in s.id]
    orders = CandidateOrders(small=0)
    version = queued = 0
    for c, depth, whole in [(None, 4, False), *changes]:
        if c is not None:
            w.change(c)
            queued += 1
            version += 1
        queue = sorted([*w.loose, *extra], key=lambda p: p.key)
        scorer = w.scorer()
        got = orders.best("a", lambda q=queue: list(q), lambda s=scorer: s, w.t, w.load, w.deps, w.free, version,
                          queued, set(), depth)
        _, want = w.scorer(memo=False).ranked(queue)
        assert [p.jid for p in got] == [p.jid for p in want][:depth]
        if whole:
            assert [p.jid for p in orders.jobs("a")] == [p.jid for p in want]


# -- each guard, named -------------------------------------------------------------------------

def _world() -> World:
    """p000 (u, 1 GPU) waited for by a job of v; p002 (w, 8 GPUs) waited for by a job of w;
    p004 (v, 2 GPUs) by one of u.  Equal declared priorities: the fairness and fit decide."""
    return World([("u", 1, 0.0, 0, [("v", 2, None)]), ("w", 8, 0.0, 0, [("w", 0, None)]),
                  ("v", 2, 0.0, 0, [("u", 0, None)])], [("u", 4, 0.0, 0, [("u", 0, None)])])


def test_a_dependants_user_getting_busier_moves_the_part_it_lends() -> None:
    """p000's score is what v's dependant lends it (declared 2): v's GPUs are read through the
    part, not through p000's own user."""
    w = _world()
    w.check()
    w.change(("gpus", ("v", 24)))
    w.check()


def test_the_jobs_own_user_getting_busier_moves_its_score() -> None:
    """p004 is v's, and its dependant (u's) lends less than its own score: v's GPUs are read
    through its own user only."""
    w = _world()
    w.check()
    w.change(("gpus", ("v", 24)))
    w.check()


def test_the_fit_flipping_moves_the_jobs_between_the_old_and_new_free_gpus() -> None:
    w = _world()
    w.check()
    w.change(("free", 8))  # p002 (8 GPUs) fits now
    w.check()
    w.change(("free", 1))
    w.check()


def test_another_load_moves_the_jobs_that_fit() -> None:
    """The fit weight moves with the load, and only a job that fits reads it: with 2 GPUs free,
    p000 (1 GPU) and p004 (2) fit, p002 (8) does not."""
    w = _world()
    w.check()
    w.change(("load", 3.5))  # the fit weight more than doubles
    w.check()
    w.change(("free", 8))
    w.change(("load", 0.5))
    w.check()


def test_a_new_epoch_scores_every_job_again() -> None:
    w = World([("u", 1, 0.0, 0, [("v", 0, 150_000.0)]), ("u", 1, 50_000.0, 1, [("u", 0, None)])], [])
    w.check()
    w.change(("tick", 7200.0))  # the deadline's urgency and the ages move
    w.check()


def test_another_user_table_scores_every_job_again() -> None:
    """Another table numbers the users otherwise (w, u, v): v's 24 GPUs sit at the id that was
    w's, so a comparison of the GPUs by id alone would rescore w's readers, not p000 (whose
    dependant is v's)."""
    w = _world()
    w.check()
    other = UserGpus()
    other.set("a", "w", 0)
    other.set("a", "u", 0)
    other.set("a", "v", 24)
    w.users = other
    w.check()


def test_other_weights_score_every_job_again() -> None:
    """The same fit and fairness weights, another declared weight: only the weights' identity
    tells."""
    w = _world()
    w.check()
    pw = CTX.policy.priority_weights
    other = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(
        priority_weights=dataclasses.replace(pw, declared=pw.declared * 3.0))), "c1")
    assert other.policy.priority_weights.fit == pw.fit and other.policy.priority_weights.fairness == pw.fairness
    scorer = Scorer(other, w.t, w.load, w.free, w.users, w.boosts, w.deps, memo=True)
    assert w.kept.bring(scorer)
    ref = Scorer(other, w.t, w.load, w.free, w.users, w.boosts, w.deps)
    assert w.kept.keys == sorted(ref.key(p) for p in w.loose)
    assert all(e.state == FRESH for e in w.kept.ents)


def test_a_new_dependants_map_scores_every_job_again() -> None:
    """p000 gains a dependant of w with a higher declared priority: another map, another part."""
    w = _world()
    w.check()
    w.specs.append(JobSpec(id="late", submit=0.0, account="a", gpus=1, work=3600.0, user="w", priority=9,
                           depends_on=("p000",)))
    w.deps = dependants(w.specs)
    w.check()


def test_a_job_queued_again_is_scored_as_the_new_record() -> None:
    """The same id, a new ``Pend`` with work done: the kept key of the old record must go."""
    w = World([("u", 1, 0.0, 0, [("u", 0, 150_000.0)]), ("v", 1, 0.0, 0, [("v", 0, None)])], [])
    w.check()
    w.change(("requeue", 0))
    w.check()
    w.change(("gpus", ("u", 24)))  # the old record must not come back with its user's change
    w.check()


def test_a_job_without_a_user_id_is_scored_at_every_restart() -> None:
    w = _world()
    for p in w.loose:
        p.uid = -1  # as ``allot explain`` makes them: looked up by name
    w.change(("gpus", ("w", 24)))
    w.check()
    w.change(("gpus", ("v", 24)))  # p004's own user: its own score, read by name, moves
    w.check()
    w.change(("free", 8))  # p002 comes to fit: scored again, not bounded (no reads listed), ...
    w.change(("gpus", ("w", 0)))  # ... as its own user, read by name, moved too
    w.check()


def test_a_job_bounded_then_scored_again_in_one_restart_leaves_the_stale_pool() -> None:
    """p002 (no user id: scored at every restart) comes to fit: the fit walk bounds it, then the
    same restart scores it again; the pool must not keep it (``left``: the pool is cleaned only
    when an entry left it), where a merge would read a fresh job as stale."""
    w = _world()
    w.loose[1].uid = -1  # p002 only: the others stay tracked, so the restart scores it alone
    w.check()
    w.change(("free", 8))
    w.check()
    assert _stale(w) == [] and w.kept.pool == []


def test_a_nan_eligibility_keeps_nothing() -> None:
    """A NaN has no place in the keys' total order: ``bring`` says no (the merge then puts each
    loose job in its heap on its own), and the next one scores every job again."""
    w = _world()
    w.check()
    p = w.loose[0]
    w.kept.drop(p)
    q = w._pend(p.spec, math.nan)
    w.loose[0] = q
    w.kept.add(q)
    assert not w.kept.bring(w.scorer())
    assert w.kept.keys == []
    assert not w.kept.bring(w.scorer())  # scoring them all afresh meets it too
    w.loose[0] = p
    w.kept.drop(q)
    w.kept.add(p)
    w.check()


# -- stale jobs: bounded, scored again only when a merge reads that far ----------------------------

def _stale(w: World) -> list[str]:
    return sorted(e.p.jid for e in w.kept.pool if e.state == STALE)


def test_a_user_getting_idler_raises_the_bound_not_only_the_kept_score() -> None:
    """v's GPUs fall: p000 (v's dependant lends it a part) and p004 (v's own) score higher than
    their kept keys; their bounds must cover it (a fairness term rose)."""
    w = _world()
    w.change(("gpus", ("v", 24)))
    w.check()
    w.change(("gpus", ("v", 0)))
    w.check()
    assert _stale(w) == ["p000", "p004"]


def test_a_user_getting_busier_keeps_the_kept_score_as_the_bound() -> None:
    """v's GPUs rise: nothing p000 and p004 read rose, so each kept score bounds its score now,
    exactly (no margin: every operation of ``total`` is monotone)."""
    w = _world()
    w.check()
    kept = {e.p.jid: -e.key[0] for e in w.kept.ents}
    w.change(("gpus", ("v", 24)))
    w.check()
    assert {e.p.jid: e.bound for e in w.kept.pool if e.state == STALE} == {"p000": kept["p000"], "p004": kept["p004"]}


def test_a_stale_jobs_bound_reads_the_gpus_it_was_scored_with_across_restarts() -> None:
    """Scored with v at 24 GPUs, stale through 8 and then 0 without a merge reading it: the bound
    must be from 24, not from the 8 of the restart before."""
    w = _world()
    w.change(("gpus", ("v", 24)))
    w.check()
    w.change(("gpus", ("v", 8)))
    w.check()
    w.change(("gpus", ("v", 0)))
    w.check()
    assert "p000" in _stale(w)


def test_a_job_coming_to_fit_raises_its_bound_by_the_fit_term() -> None:
    """p002 (8 GPUs) fits once 8 GPUs are free, and the jobs that fit read the fit weight, which
    the load raises: their bounds must cover the fit term's rise."""
    w = _world()
    w.check()
    w.change(("free", 8))
    w.check()
    assert "p002" in _stale(w)
    w.change(("load", 3.5))
    w.check()
    assert _stale(w) == ["p000", "p002", "p004"]


def test_a_job_a_merge_scored_again_is_put_in_place_at_the_next_restart() -> None:
    """Kept p000, p004, p002; then p002 comes to fit (above p004, which v's 24 GPUs lower): a
    merge scores all three again, and the next restart must hold them in their new order."""
    w = _world()
    w.check()
    w.change(("free", 8))
    w.change(("gpus", ("v", 24)))
    w.check(resolve=3)
    assert _stale(w) == []
    w.check()  # nothing moved: every one fresh, p002 before p004
    assert [e.p.jid for e in w.kept.ents] == ["p000", "p002", "p004"]


def test_a_job_made_stale_again_after_a_merge_scored_it_is_bounded_once() -> None:
    """Scored again by a merge (``resolve``), then its user moves: one stale entry, not two (a
    merge would emit it twice)."""
    w = World([("u", 1, 0.0, 0, [("u", 0, None)])], [])
    w.check()
    w.change(("gpus", ("u", 1)))
    w.check(resolve=1)
    w.change(("gpus", ("u", 0)))
    w.check()
    assert [e.p.jid for e in w.kept.pool] == ["p000"]


def test_a_negative_fairness_weight_scores_the_moved_jobs_again() -> None:
    """A fairness weight below 0 (a config refuses it, the model does not): a user getting busier
    raises its jobs' scores, and no bound of this kind holds."""
    w = _world()
    pw = CTX.policy.priority_weights
    w.ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(
        priority_weights=dataclasses.replace(pw, fairness=-0.5))), "c1")
    w.check()
    w.change(("gpus", ("v", 24)))
    w.check()
    assert _stale(w) == []


def test_magnitudes_that_may_overflow_score_the_moved_jobs_again() -> None:
    """A declared priority of 10**301: a bound's sums might overflow, so none is made."""
    w = World([("u", 1, 0.0, 10**301, [("v", 0, None)]), ("v", 1, 0.0, 0, [("v", 0, None)])], [])
    w.check()
    w.change(("gpus", ("v", 8)))
    w.check()
    assert _stale(w) == []


def test_the_bound_leaves_room_for_the_roundings() -> None:
    """u's GPUs fall from 1 to 0: the kept score plus the fairness term's rise, as computed,
    falls an ulp short of the score now (which adds the term to the head, rounding otherwise):
    the bound's margin must cover it."""
    w = World([("u", 1, 0.0, 0, [("u", 0, None)]), ("u", 1, 0.0, 0, [("u", 0, None)])], [])
    w.change(("gpus", ("u", 1)))
    w.change(("tick", 300.0))
    w.check()
    w.change(("gpus", ("u", 0)))
    w.check()
    assert _stale(w) == ["p000", "p002"]
