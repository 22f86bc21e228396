"""A long queue's merged order (core.fairness_merge) is exactly the sort by the whole score,
ties included, through starts, arrivals, users getting busier and the fit moving."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy
from allotment.core.candidates import CandidateOrders
from allotment.core.context import build_context
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


def _queue_key(p: Pend) -> tuple[float, float, str]:
    return p.key


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
