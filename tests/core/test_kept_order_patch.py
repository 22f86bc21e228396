"""A kept order rebuilt from the last one (``core.candidates._patched``) against scoring the
whole queue: after jobs leave, arrive or come back as new records, users' GPUs move, the fit,
the load, the epoch or the dependants change, the rebuilt order's keys and jobs are exactly
``Scorer.ranked`` over the queue by a scorer made afresh (the reference's, ``memo=False``)."""

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

step = st.tuples(
    st.sampled_from(["arrive", "arrive", "leave", "requeue", "user", "user", "fit", "load", "epoch", "deps", "none"]),
    st.integers(0, 40),  # which job / user / value
    st.integers(1, 8),  # GPUs of an arriving job, or a user's running GPUs
)


@settings(max_examples=200, deadline=None)
@given(st.lists(step, min_size=1, max_size=30), st.booleans())
def test_a_rebuilt_kept_order_is_the_whole_queue_ranked_afresh(steps: list[tuple[str, int, int]], with_deps: bool) -> None:
    specs: list[JobSpec] = []
    queue: list[Pend] = []
    users = UserGpus()
    orders = CandidateOrders()
    t, load, max_free, queued, version = 0.0, 1.5, 4, 0, 0
    deps = dependants(specs)
    for kind, x, g in steps:
        if kind == "arrive":
            k = len(specs)
            dep = with_deps and specs and x % 3 == 0
            spec = JobSpec(id=f"j{k:02d}", submit=t, account="a", gpus=g, work=600.0 + 100 * x, user=USERS[x % 3],
                           priority=x % 4, deadline=9000.0 if x % 5 == 0 else None,
                           depends_on=(specs[x % len(specs)].id,) if dep else ())
            specs.append(spec)
            queue.append(Pend(spec, t - 10.0 * x, t - 10.0 * x, 0.0, spec.priority, None, "a"))
            queued += 1
        elif kind == "leave" and queue:
            queue.pop(x % len(queue))
            queued += 1
        elif kind == "requeue" and queue:  # evicted and queued again: a new record, same id
            old = queue.pop(x % len(queue))
            queue.append(Pend(old.spec, old.eligible + 50.0, old.queued_since, 100.0, old.declared, None, "a"))
            queued += 1
        elif kind == "user":
            users.set("a", USERS[x % 3], g * (x % 3))
            version += 1
        elif kind == "fit":
            max_free = x % 9
        elif kind == "load":
            load = 0.5 + (x % 8) * 0.5
        elif kind == "epoch":
            t += 3600.0
        elif kind == "deps":  # a new map: of every job so far, or of the queued ones only (one waited for loses it)
            deps = dependants(specs if x % 2 else [p.spec for p in queue])
        if not queue:
            continue
        scorer = Scorer(CTX, t, load, max_free, users, {}, deps, memo=True)
        orders.best("a", lambda: list(queue), lambda s=scorer: s, t, load, deps, max_free, version, queued, set(), 1)
        want_keys, want_jobs = Scorer(CTX, t, load, max_free, users, {}, deps).ranked(list(queue))
        kept = orders._by["a"]
        assert kept.keys == want_keys
        assert [p is q for p, q in zip(kept.jobs, want_jobs, strict=True)] == [True] * len(queue)
        # what the next rebuild keeps a key by: the GPUs each job's user ran, -1 if others wait for it
        assert kept.runs == [-1 if deps.get(p.jid) else users.running("a", p.user) for p in kept.jobs]


def test_a_start_of_one_user_keeps_the_other_users_keys_and_scores_that_users_jobs_again() -> None:
    specs = [JobSpec(id=f"j{k}", submit=0.0, account="a", gpus=1 + k % 2, work=600.0, user=USERS[k % 2]) for k in range(4)]
    queue = [Pend(s, 0.0, 0.0, 0.0, 0, None, "a") for s in specs]
    users = UserGpus()
    orders = CandidateOrders()
    deps = dependants(specs)  # none: the same map for both rebuilds

    def rebuild(version: int, queued: int) -> list[tuple[float, float, str]]:
        scorer = Scorer(CTX, 0.0, 1.0, 8, users, {}, deps, memo=True)
        orders.rebuild("a", list(queue), scorer, 0.0, 1.0, deps, 8, version, queued)
        return orders._by["a"].keys

    keys = rebuild(0, 0)
    before = {k[2]: k for k in keys}
    i = [k[2] for k in keys].index("j1")
    marked = (keys[i][0] - 1e-9, keys[i][1], "j1")  # a mark in j1's key (the order stays): seen again only if kept
    keys[i] = marked
    users.set("a", "u", 8)  # u's job started elsewhere in the account
    queue.pop(3)  # and j3 (v's) started here
    after = {k[2]: k for k in rebuild(1, 1)}
    assert after["j1"] == marked  # v's other job: its key kept, not scored again
    assert after["j0"] != before["j0"] and after["j2"] != before["j2"]  # u's: scored again, lower
    assert list(after) == ["j1", "j0", "j2"]


def test_an_order_scored_with_other_weights_is_scored_again() -> None:
    from allotment.compile.model import PriorityWeights

    other = build_context(make_config({"a": 1, "b": 1}, nodes=2,
                                      policy=Policy(priority_weights=PriorityWeights(fairness=5.0))), "c1")
    specs = [JobSpec(id=f"j{k}", submit=0.0, account="a", gpus=1, work=600.0, user=USERS[k % 2], priority=k % 2)
             for k in range(4)]
    queue = [Pend(s, 0.0, 0.0, 0.0, s.priority, None, "a") for s in specs]
    users = UserGpus()
    users.set("a", "v", 8)
    orders = CandidateOrders()
    deps = dependants(specs)
    for ctx in (CTX, other):
        orders.rebuild("a", list(queue), Scorer(ctx, 0.0, 1.0, 8, users, {}, deps, memo=True), 0.0, 1.0, deps, 8, 0, 0)
        assert orders._by["a"].keys == Scorer(ctx, 0.0, 1.0, 8, users, {}, deps).ranked(list(queue))[0]


def test_a_job_that_comes_to_be_waited_for_or_stops_being_is_scored_again() -> None:
    a = JobSpec(id="a", submit=0.0, account="a", gpus=1, work=600.0, user="u")
    b = JobSpec(id="b", submit=0.0, account="a", gpus=1, work=600.0, user="v", priority=9, depends_on=("a",))
    c = JobSpec(id="c", submit=0.0, account="a", gpus=1, work=600.0, user="w", priority=2)
    pa, pb, pc = (Pend(s, 0.0, 0.0, 0.0, s.priority, None, "a") for s in (a, b, c))
    users = UserGpus()
    orders = CandidateOrders()

    def check(queue: list[Pend], deps: object, t: float, queued: int) -> None:
        scorer = Scorer(CTX, t, 1.0, 8, users, {}, deps, memo=True)  # type: ignore[arg-type]
        orders.rebuild("q", list(queue), scorer, t, 1.0, deps, 8, 0, queued)  # type: ignore[arg-type]
        want = Scorer(CTX, t, 1.0, 8, users, {}, deps).ranked(list(queue))  # type: ignore[arg-type]
        assert orders._by["q"].keys == want[0]

    check([pa, pc], dependants([a, c]), 0.0, 0)  # nobody waits for a: it scores alone, below c
    check([pa, pb, pc], dependants([a, b, c]), 0.0, 1)  # b (urgent) arrives waiting for a: a inherits, scored again
    check([pa, pb, pc], dependants([a, b, c]), 3600.0, 1)  # a new epoch: the whole queue scored
    check([pa, pc], dependants([a, c]), 3600.0, 2)  # b leaves, and with it what a inherited: scored again
