"""A long queue's merged order (core.fairness_merge) is exactly the sort by the whole score,
ties included, through starts, arrivals, users getting busier and the fit moving."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy, PriorityWeights
from allotment.core.candidates import CandidateOrders, _gpus_range
from allotment.core.context import build_context
from allotment.core.fairness_merge import AgedOrder
from allotment.core.ids import UserGpus
from allotment.core.jobs import JobSpec
from allotment.core.priority import Scorer, dependants
from allotment.core.state import Pend
from tests.core.builders import make_config

CTX = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy()), "c1")
USERS = ["u", "v", "w"]
DAY = 86400.0

# (priority, eligible, gpus, user, deadline): few values of each, so that many jobs tie bit for
# bit (capped ages, equal priorities) and many nearly tie (ages a second apart)
job = st.tuples(st.integers(-1, 1), st.sampled_from([0.0, 1.0, 2.0, 3.0, 50_000.0, 50_001.0, 90_000.0]),
                st.sampled_from([1, 1, 1, 2, 8]), st.sampled_from(USERS), st.sampled_from([None, None, None, 200_000.0]))
# (max free GPUs, load, user, its running GPUs, tried ids, job to start (<0: none), arrivals)
step = st.tuples(st.sampled_from([0, 1, 2, 8]), st.sampled_from([0.5, 1.5, 3.5]), st.sampled_from(USERS),
                 st.sampled_from([0, 1, 3, 8, 24]), st.sets(st.integers(0, 60), max_size=6), st.integers(-3, 40),
                 st.lists(job, max_size=3))
boosts = st.sampled_from([{}, {"user:v": 0.25}, {"job:j3": 1.0, "account:a": 0.5}])


@settings(max_examples=200, deadline=None)
@given(st.lists(job, min_size=1, max_size=40), st.lists(step, min_size=1, max_size=10), st.booleans(),
       st.sampled_from([100_000.0, 100_000.0, 200_000.0]), boosts, st.booleans())
def test_the_merged_order_is_the_sort_by_the_whole_score(
    specs: list[tuple[int, float, int, str, float | None]],
    changes: list[tuple[int, float, str, int, set[int], int, list[tuple[int, float, int, str, float | None]]]],
    with_deps: bool, t: float, active: dict[str, float], in_key_order: bool,
) -> None:
    # the scheduler hands the queue in its key order (``Queue.jobs``); any other order must do too
    made: list[JobSpec] = []

    def new(pr: int, e: float, g: int, u: str, d: float | None) -> Pend:
        i = len(made)
        prereq = with_deps and i % 5 == 4
        s = JobSpec(id=f"j{i}", submit=0.0, account="a", gpus=g, work=600.0, user=u, deadline=d,
                    priority=pr + 2 if prereq else pr, depends_on=(f"j{i - 1}",) if prereq else ())
        made.append(s)
        return Pend(s, e, e, 0.0, s.priority, None, "a")

    queue = [new(*s) for s in specs]
    deps = dependants(made)  # the whole run's jobs are known up front, as in the scheduler
    for s in changes:
        for a in s[6]:
            new(*a)
    deps = dependants(made)
    later = [Pend(s, 5.0, 5.0, 0.0, s.priority, None, "a") for s in made[len(queue):]]
    users = UserGpus()
    for u in USERS:
        users.set("a", u, 0)
    orders = CandidateOrders(small=0)
    version = queued = 0
    for max_free, load, user, running, tried_idx, starts, arrivals in changes:
        if 0 <= starts < len(queue):
            queue.pop(starts)  # a job started
            queued += 1
        for _ in arrivals:
            queue.append(later.pop(0))
            queued += 1
        if users.running("a", user) != running:
            users.set("a", user, running)
            version += 1
        tried = {f"j{i}" for i in tried_idx}
        scorer = Scorer(CTX, t, load, max_free, users, active, deps, memo=True)
        if in_key_order:
            queue.sort(key=_queue_key)
        got = orders.best("a", lambda: list(queue), lambda s=scorer: s, t, load, deps, max_free, version, queued,
                          tried, 4)
        whole = Scorer(CTX, t, load, max_free, users, active, deps)  # the reference: no memo
        keys, want = whole.ranked(list(queue))
        assert [p.jid for p in got] == [p.jid for p in want if p.jid not in tried][:4]
        assert [p.jid for p in orders.jobs("a")] == [p.jid for p in want]
        assert len(set(keys)) == len(keys)
        _same_gpus_range(orders, queue)


def _queue_key(p: Pend) -> tuple[float, float, str]:
    return p.key


def _same_gpus_range(orders: CandidateOrders, queue: list[Pend]) -> None:
    """The merge's GPU range, kept by counts through its adds and drops, is the queue's."""
    m = orders._by["a"].merged
    if m is not None:
        assert m.gpus_range() == _gpus_range(queue)


def test_jobs_that_tie_bit_for_bit_come_out_by_eligibility_then_id_after_their_user_gets_busier() -> None:
    t = 10 * DAY  # every age capped: one user's equal jobs all score the same
    specs = [JobSpec(id=f"s{i:04d}", submit=0.0, account="a", gpus=1, work=600.0, user="u" if i % 3 else "v")
             for i in range(300)]
    queue = [Pend(s, float(i % 7), float(i % 7), 0.0, 0, None, "a") for i, s in enumerate(specs)]
    users = UserGpus()
    users.set("a", "u", 0)
    users.set("a", "v", 0)
    orders = CandidateOrders(small=0)
    for version, running in enumerate([0, 4, 40]):
        users.set("a", "u", running)
        scorer = Scorer(CTX, t, 1.0, 1, users, {}, {}, memo=True)
        orders.best("a", lambda: list(queue), lambda s=scorer: s, t, 1.0, {}, 1, version, 0, set(), 8)
        want = Scorer(CTX, t, 1.0, 1, users, {}, {}).rank(list(queue))
        assert orders.jobs("a") == want


# -- kept across epochs (``AgedOrder``) ------------------------------------------------------------

def _ctx(age: float, cap: int, declared: float, dependencies: bool) -> object:
    pw = PriorityWeights(age=age, age_cap_s=cap, declared=declared, dependencies=dependencies)
    return build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(priority_weights=pw)), "c1")


CTXS = [_ctx(1.0, 86400, 1.0, True), _ctx(0.37, 1000, 0.3, True), _ctx(3.0, 7, 1.0, False), _ctx(0.0, 100, 1.0, True),
        _ctx(-1.0, 1000, 1.0, True)]  # a negative age weight: a config refuses it, the model does not
# (priority, eligible, gpus, user, deadline): eligible times a hair apart (heads that round alike
# or not), equal ones, and ones that reach a short age cap at some epochs and not at others
aged_job = st.tuples(st.integers(-1, 1), st.sampled_from([0.0, 0.1, 0.3, 1.0, 1.0, 3.0, 900.0, 990.0, 1e-9, 40_000.0]),
                     st.sampled_from([1, 1, 2, 8]), st.sampled_from(USERS), st.sampled_from([None, None, None, None, 5_000.0]))
# (epoch step, max free GPUs, load, user, its running GPUs, tried ids, job to start (<0: none), arrivals, boosts on)
aged_step = st.tuples(st.sampled_from([0.0, 0.0, 0.1, 1.0, 300.0, 995.0, 90_000.0]), st.sampled_from([0, 1, 2, 8]),
                      st.sampled_from([0.5, 1.5, 3.5]), st.sampled_from(USERS), st.sampled_from([0, 1, 3, 8, 24]),
                      st.sets(st.integers(0, 60), max_size=6), st.integers(-3, 40), st.lists(aged_job, max_size=3),
                      st.sampled_from([False, False, False, True]))


@settings(max_examples=300, deadline=None)
@given(st.lists(aged_job, min_size=1, max_size=40), st.lists(aged_step, min_size=1, max_size=12), st.booleans(),
       st.sampled_from(range(len(CTXS))), st.sampled_from([0.0, 0.5, 1000.0]))
def test_an_order_kept_across_epochs_is_the_sort_by_the_whole_score(
    specs: list[tuple[int, float, int, str, float | None]],
    changes: list[tuple[float, int, float, str, int, set[int], int, list[tuple[int, float, int, str, float | None]], bool]],
    with_deps: bool, which: int, t0: float,
) -> None:
    ctx = CTXS[which]
    made: list[JobSpec] = []

    def new(pr: int, e: float, g: int, u: str, d: float | None) -> Pend:
        i = len(made)
        prereq = with_deps and i % 7 == 6
        s = JobSpec(id=f"j{i}", submit=0.0, account="a", gpus=g, work=600.0, user=u, deadline=d,
                    priority=pr + 2 if prereq else pr, depends_on=(f"j{i - 1}",) if prereq else ())
        made.append(s)
        return Pend(s, e, e, 0.0, s.priority + (1 if i % 4 == 3 else 0), None, "a")  # propagated: above its own

    queue = [new(*s) for s in specs]
    for s in changes:
        for a in s[7]:
            new(*a)
    deps = dependants(made)
    later = [Pend(s, 5.0, 5.0, 0.0, s.priority, None, "a") for s in made[len(queue):]]
    users = UserGpus()
    for u in USERS:
        users.set("a", u, 0)
    orders = CandidateOrders(small=0)
    version = queued = 0
    t = t0
    active: dict[str, float] = {}
    for dt, max_free, load, user, running, tried_idx, starts, arrivals, boosted in changes:
        t += dt
        if 0 <= starts < len(queue):
            queue.pop(starts)
            queued += 1
        for _ in arrivals:
            queue.append(later.pop(0))
            queued += 1
        if users.running("a", user) != running:
            users.set("a", user, running)
            version += 1
        if dt > 0:  # boosts are read at the epoch (``active_boosts(ctx, t)``): they change only with it
            active = {"user:v": 0.25} if boosted else {}
        tried = {f"j{i}" for i in tried_idx}
        scorer = Scorer(ctx, t, load, max_free, users, active, deps, memo=True)
        queue.sort(key=_queue_key)
        got = orders.best("a", lambda: list(queue), lambda s=scorer: s, t, load, deps, max_free, version, queued,
                          tried, 4)
        whole = Scorer(ctx, t, load, max_free, users, active, deps)  # the reference: no memo
        _, want = whole.ranked(list(queue))
        assert [p.jid for p in got] == [p.jid for p in want if p.jid not in tried][:4]
        assert [p.jid for p in orders.jobs("a")] == [p.jid for p in want]
        _same_gpus_range(orders, queue)


def test_a_new_epoch_scores_the_runs_a_visit_reads_not_the_whole_queue() -> None:
    # a sweep: 2,000 one-GPU jobs of one user, none capped yet; each epoch moves every head, and
    # the order was grouped anew each time (every job's static part: 2,000 computations an epoch).
    # Counted by the parts kept on the jobs for the epoch (``Scorer._static`` with ``memo`` keeps
    # each it computes): no subclass of the scorer, which is compiled in a mypyc build
    specs = [JobSpec(id=f"s{i:04d}", submit=0.0, account="a", gpus=1, work=600.0, user="u") for i in range(2000)]
    queue = [Pend(s, float(i // 3), float(i // 3), 0.0, 0, None, "a") for i, s in enumerate(specs)]
    users = UserGpus()
    users.set("a", "u", 0)
    orders = CandidateOrders()
    for t in (1000.0, 1300.0, 1600.0):
        scorer = Scorer(CTX, t, 1.0, 1, users, {}, {}, memo=True)  # type: ignore[arg-type]
        got = orders.best("a", lambda: list(queue), lambda s=scorer: s, t, 1.0, {}, 1, 0, 0, set(), 8)
        assert [p.jid for p in got] == [p.jid for p in Scorer(CTX, t, 1.0, 1, users, {}, {}).rank(list(queue))[:8]]
        computed = sum(1 for p in queue if p.static is not None and p.static.t == t)
        assert 0 < computed < 100, computed  # the seq's ends, its first runs, a galloping search


def test_without_dependencies_a_job_is_ordered_by_its_own_priority_not_the_one_it_inherited() -> None:
    # every age capped, one user, one size: the heads are the priorities the scorer reads, here
    # the jobs' own (``dependencies: false``), though each was queued with an inherited 1
    ctx = CTXS[2]
    specs = [JobSpec(id=f"j{i}", submit=0.0, account="a", gpus=1, work=600.0, user="u", priority=pr)
             for i, pr in enumerate([0, -1, 1])]
    queue = [Pend(s, float(i), float(i), 0.0, 1, None, "a") for i, s in enumerate(specs)]
    users = UserGpus()
    users.set("a", "u", 0)
    scorer = Scorer(ctx, 100.0, 1.0, 1, users, {}, {}, memo=True)  # type: ignore[arg-type]
    got = CandidateOrders(small=0).best("a", lambda: list(queue), lambda: scorer, 100.0, 1.0, {}, 1, 0, 0, set(), 3)
    assert [p.jid for p in got] == ["j2", "j0", "j1"]


def test_a_job_boost_that_starts_later_ends_the_order_kept_by_age() -> None:
    # kept by age while no boost was active (``AgedOrder``); a boost on one job at a later epoch
    # breaks the proof (one seq's heads no longer fall along it): the order must follow the boost
    ctx = CTXS[0]
    specs = [JobSpec(id=f"j{i:02d}", submit=0.0, account="a", gpus=1, work=600.0, user="u") for i in range(30)]
    queue = [Pend(s, float(i), float(i), 0.0, 0, None, "a") for i, s in enumerate(specs)]
    users = UserGpus()
    users.set("a", "u", 0)
    orders = CandidateOrders(small=0)
    for t, active in ((100.0, {}), (400.0, {"job:j29": 1.0}), (700.0, {})):
        scorer = Scorer(ctx, t, 1.0, 1, users, active, {}, memo=True)  # type: ignore[arg-type]
        got = orders.best("a", lambda: list(queue), lambda s=scorer: s, t, 1.0, {}, 1, 0, 0, set(), 3)
        _, want = Scorer(ctx, t, 1.0, 1, users, active, {}).ranked(list(queue))  # type: ignore[arg-type]
        assert [p.jid for p in got] == [p.jid for p in want][:3]
        assert (got[0].jid == "j29") == bool(active)


def test_an_order_kept_by_age_is_not_served_to_other_weights() -> None:
    # grouped for one set of weights (``AgedOrder.w``), which read each job's own priority; the
    # next epoch's weights read the inherited one, and let it outweigh the age: seqs grouped by
    # the own priority are not monotone in what the new weights score
    specs = [JobSpec(id=f"j{i:02d}", submit=0.0, account="a", gpus=1, work=600.0, user="u", priority=i % 3 - 1)
             for i in range(30)]
    # queued with an inherited priority (``Pend.declared``) above their own on every fourth job:
    # read only where ``dependencies`` is on
    queue = [Pend(s, float(i * 50), float(i * 50), 0.0, s.priority + (2 if i % 4 == 3 else 0), None, "a")
             for i, s in enumerate(specs)]
    users = UserGpus()
    users.set("a", "u", 0)
    orders = CandidateOrders(small=0)
    for t, ctx in ((2000.0, _ctx(1.0, 86400, 0.0, False)), (2300.0, _ctx(0.001, 86400, 5.0, True))):
        scorer = Scorer(ctx, t, 1.0, 1, users, {}, {}, memo=True)  # type: ignore[arg-type]
        got = orders.best("a", lambda: list(queue), lambda s=scorer: s, t, 1.0, {}, 1, 0, 0, set(), 5)
        _, want = Scorer(ctx, t, 1.0, 1, users, {}, {}).ranked(list(queue))  # type: ignore[arg-type]
        assert [p.jid for p in got] == [p.jid for p in want][:5]


def test_a_merge_kept_across_epochs_forgets_the_gpus_of_a_loose_job_that_left() -> None:
    """The only 8-GPU job has a deadline (loose, ``AgedOrder``): once it starts, the range the fit
    is bounded by is the 1-GPU jobs' alone (``gpus_range`` counts loose jobs one by one)."""
    ctx = CTXS[0]
    specs = [JobSpec(id="a", submit=0.0, account="a", gpus=1, work=600.0, user="u"),
             JobSpec(id="b", submit=0.0, account="a", gpus=1, work=600.0, user="v"),
             JobSpec(id="c", submit=0.0, account="a", gpus=8, work=600.0, user="u", deadline=5_000.0)]
    queue = [Pend(s, 0.0, 0.0, 0.0, 0, None, "a") for s in specs]
    users = UserGpus()
    for u in USERS:
        users.set("a", u, 0)
    scorer = Scorer(ctx, 100.0, 1.0, 1, users, {}, {}, memo=True)
    m = AgedOrder(scorer, list(queue))
    assert m.holds(scorer) and m.gpus_range() == (1, 8)
    m.update(queue[:2], scorer)
    assert m.gpus_range() == _gpus_range(queue[:2]) == (1, 1)
