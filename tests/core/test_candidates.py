"""A queue's kept score order offers exactly what scoring the whole queue would (core.candidates)."""

from __future__ import annotations

import math
from bisect import bisect_left

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy
from allotment.core.candidates import CandidateOrders, fit_key, fit_weight_key
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.jobs import JobSpec
from allotment.core.priority import Scorer, dependants
from allotment.core.sorted_pairs import key_place
from allotment.core.state import Pend
from tests.core.builders import make_config

CTX = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy()), "c1")

jobs = st.lists(
    st.tuples(st.integers(-1, 1), st.sampled_from([0, 100, 3000]), st.integers(1, 8), st.sampled_from(["u", "v"]),
              st.sampled_from([None, None, 3000, 9000])),
    min_size=1, max_size=12,
)
steps = st.lists(
    st.tuples(st.sampled_from([0, 3, 8, 8, 8]), st.sampled_from([0.5, 1.5, 1.5, 1.5, 3.5]), st.sampled_from(["u", "v"]),
              st.sampled_from([0, 0, 0, 4, 16]), st.sets(st.integers(0, 11), max_size=4),
              st.sampled_from([0.0, 0.0, 0.0, 7200.0]), st.integers(-6, 11)),
    min_size=1, max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(jobs, steps, st.booleans())
def test_the_kept_order_offers_the_candidates_whole_queue_scoring_offers(
    specs: list[tuple[int, int, int, str, int | None]], changes: list[tuple[int, float, str, int, set[int], float, int]],
    with_deps: bool,
) -> None:
    # with dependants, a waiting job outranks its prerequisite, which then scores by it
    made = [JobSpec(id=f"j{i}", submit=0.0, account="a", gpus=g, work=600.0, user=u, deadline=d,
                    priority=pr + 3 if with_deps and i % 3 == 2 else pr,
                    depends_on=(f"j{i - 1}",) if with_deps and i % 3 == 2 else ())
            for i, (pr, _, g, u, d) in enumerate(specs)]
    queue = [Pend(s, float(e), float(e), 0.0, s.priority, None, "a") for s, (_, e, *_) in zip(made, specs, strict=True)]
    deps = dependants(made)
    orders = CandidateOrders()
    users = UserGpus()
    version = queued = 0
    for max_free, load, user, running, tried_idx, t, leaves in changes:
        if 0 <= leaves < len(queue) - 1:
            queue.pop(leaves)  # a job started (what QueueSet.version counts)
            queued += 1
        elif leaves < -2 and queue:  # the first job evicted and requeued: a new Pend, same id
            old = queue.pop(0)
            queue.append(Pend(old.spec, old.eligible + 500.0, 0.0, 100.0, old.declared, None, "a"))
            queued += 1
        if users.running("a", user) != running:
            users.set("a", user, running)
            version += 1  # what Accounting.user_version does on a start or a stop
        tried = {f"j{i}" for i in tried_idx}

        def scorer(mf: int = max_free, ld: float = load, tt: float = t) -> Scorer:
            return Scorer(CTX, tt, ld, mf, users, {}, deps, memo=True)

        got = orders.best("a", lambda: list(queue), scorer, t, load, deps, max_free, version, queued, tried, 8)
        fresh = Scorer(CTX, t, load, max_free, users, {}, deps)
        want = fresh.best([p for p in queue if p.jid not in tried], 8)
        assert [p.jid for p in got] == [p.jid for p in want]


def test_the_fit_key_and_weight_key_keep_only_what_the_score_reads() -> None:
    assert fit_key(8, 2, 4) == fit_key(5, 2, 4) == 4  # everything fits either way
    assert fit_key(0, 2, 4) == fit_key(1, 2, 4) == 1  # nothing fits either way
    assert fit_key(3, 2, 4) == 3
    assert fit_weight_key(1.7, 1, 2) == fit_weight_key(2.9, 1, 2) == -1.0  # no job fits: load unread
    assert fit_weight_key(0.2, 4, 2) == fit_weight_key(1.0, 4, 2) == 1.0
    assert fit_weight_key(2.5, 4, 2) == 2.5


def test_a_prerequisite_is_scored_again_when_only_the_user_of_a_job_waiting_for_it_gets_busier() -> None:
    t = 43_200.0
    spec = {
        "pre": JobSpec(id="pre", submit=0.0, account="a", gpus=1, work=600.0, user="u", priority=0),
        "dep": JobSpec(id="dep", submit=0.0, account="a", gpus=1, work=600.0, user="v", priority=3, depends_on=("pre",)),
        "x": JobSpec(id="x", submit=0.0, account="a", gpus=1, work=600.0, user="w", priority=2),
    }
    queue = [Pend(spec["pre"], t, t, 0.0, 0, None, "a"), Pend(spec["dep"], t, t, 0.0, 3, None, "a"),
             Pend(spec["x"], 0.0, 0.0, 0.0, 2, None, "a")]
    deps = dependants(spec.values())
    users = UserGpus()
    orders = CandidateOrders()

    def offered(version: int) -> list[str]:
        got = orders.best("a", lambda: list(queue), lambda: Scorer(CTX, t, 1.0, 0, users, {}, deps, memo=True),
                          t, 1.0, deps, 0, version, 0, set(), 8)
        assert got == Scorer(CTX, t, 1.0, 0, users, {}, deps).best(queue, 8)
        return [p.jid for p in got]

    assert offered(0) == ["dep", "pre", "x"]  # pre inherits 0.9 x dep's score, above x's
    users.set("a", "v", 16)  # dep's user got busier: dep's score, and so pre's, drop below x's
    assert offered(1) == ["dep", "x", "pre"]


key = st.tuples(st.sampled_from([-2.0, -0.0, 0.0, 1.5, math.nan]), st.sampled_from([0.0, 1.0, math.nan]),
                st.sampled_from(["a", "b", "c"]))
# compiled (mypyc), ``key_place`` takes its key unboxed, as the refit's ``bisect_left(keys, k)``
# it replaces took ``k`` boxed afresh (``Scorer.key`` returns a native tuple): no float of ``k``
# is then an object of ``keys``, which only a NaN's comparison can tell
COMPILED = not hasattr(key_place, "__code__")


def _as_refit_passed(k: tuple[float, float, str]) -> tuple[float, float, str]:
    return (k[0] * 1.0, k[1] * 1.0, k[2]) if COMPILED else k


@settings(max_examples=400, deadline=None)
@given(st.lists(key, max_size=12), key)
def test_a_key_is_placed_where_bisect_places_it(keys: list[tuple[float, float, str]], k: tuple[float, float, str]) -> None:
    """``key_place`` (a refit's search) against ``bisect_left`` on the same list, sorted or not
    (a NaN leaves no list sorted), NaNs the same object as in the list's keys or not."""
    keys.sort()
    assert key_place(keys, k) == bisect_left(keys, _as_refit_passed(k))


def test_a_nan_key_is_placed_as_the_tuple_comparison_places_it() -> None:
    """The same NaN object in both keys: a tuple comparison holds the fields equal (identity
    first), a float comparison would not (interpreted; compiled, the key's floats are new
    objects, as they were for ``bisect_left``)."""
    nan = math.nan
    keys = [(0.0, nan, "a")]
    assert key_place(keys, (0.0, nan, "b")) == bisect_left(keys, _as_refit_passed((0.0, nan, "b")))
    assert COMPILED or key_place(keys, (0.0, nan, "b")) == 1
