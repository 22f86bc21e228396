"""A short queue ranked by insertion (``Scorer.ranked_by_insertion``, what ``Scorer.ranked``
runs up to ``INSERT_UPTO`` jobs) gives the keys and the order of the reference
(``Scorer.ranked_by_key``: every key made, sorted), bit for bit: ties in the score broken by
eligibility and then id, prerequisites scored by what their dependants lend, a NaN left to the
reference's sort, equal keys (duplicate ids) kept in their given order."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.jobs import JobSpec
from allotment.core.priority import INSERT_UPTO, Scorer, dependants
from allotment.core.state import Pend
from tests.core.builders import make_config

CTX = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy()), "c1")
T = 100_000.0

# (user, GPUs, eligible, declared priority, depends on the job before, deadline)
job = st.tuples(st.sampled_from(["u", "v"]), st.sampled_from([1, 2, 8]),
                st.sampled_from([0.0, 0.0, 50_000.0, math.nan]), st.integers(-1, 1), st.booleans(),
                st.sampled_from([None, None, 150_000.0]))


def _queue(specs: list[tuple[str, int, float, int, bool, float | None]], ids: list[str] | None = None
           ) -> tuple[list[Pend], UserGpus, dict[str, object]]:
    made = [JobSpec(id=ids[i] if ids else f"j{i:02d}", submit=0.0, account="a", gpus=g, work=600.0, user=u,
                    priority=pr, deadline=dl, depends_on=(f"j{i - 1:02d}",) if dep and i and not ids else ())
            for i, (u, g, _, pr, dep, dl) in enumerate(specs)]
    users = UserGpus()
    users.set("a", "u", 3)
    users.set("a", "v", 0)
    queue = []
    for s, x in zip(made, specs, strict=True):
        p = Pend(s, x[2], x[2], 0.0, s.priority, None, "a")
        p.uid = users.id_of("a", s.user)
        queue.append(p)
    return queue, users, dependants(made)  # type: ignore[return-value]


def _same(specs: list[tuple[str, int, float, int, bool, float | None]], ids: list[str] | None = None) -> None:
    queue, users, deps = _queue(specs, ids)
    fast = Scorer(CTX, T, 1.5, 2, users, {}, deps, memo=True)  # type: ignore[arg-type]
    ref = Scorer(CTX, T, 1.5, 2, users, {}, deps)  # type: ignore[arg-type]
    keys, jobs = fast.ranked_by_insertion(queue)
    want_keys, want = ref.ranked_by_key(queue)
    assert [repr(k) for k in keys] == [repr(k) for k in want_keys]
    assert all(p is q for p, q in zip(jobs, want, strict=True))
    if len(queue) <= INSERT_UPTO:
        got_keys, got = fast.ranked(queue)
        assert [repr(k) for k in got_keys] == [repr(k) for k in want_keys] and got == jobs


@settings(max_examples=400, deadline=None)
@given(st.lists(job, max_size=INSERT_UPTO + 2))
def test_ranked_by_insertion_is_the_reference_sort(specs: list[tuple[str, int, float, int, bool, float | None]]) -> None:
    _same(specs)


def test_ties_break_by_eligibility_then_id() -> None:
    """Same user, size and priority: the two eligible at 0 score alike and their ids decide;
    the one eligible later is younger; v's job differs by its user's fairness."""
    _same([("u", 1, 50_000.0, 0, False, None), ("u", 1, 0.0, 0, False, None), ("u", 1, 0.0, 0, False, None),
           ("v", 1, 0.0, 0, False, None)])


def test_a_nan_eligibility_is_left_to_the_reference_sort() -> None:
    """Equal scores, eligibility 0, NaN, 1: the sort keeps them as given, an insertion that
    compared the NaN would put it first."""
    _same([("u", 1, 0.0, 0, False, None), ("u", 1, math.nan, 0, False, None), ("u", 1, 1.0, 0, False, None)])


def test_equal_keys_keep_their_given_order() -> None:
    """Two records of one id (never in a scheduler's queue, but ``ranked`` promises the
    reference's order whatever it is given): the first given stays first."""
    _same([("u", 1, 0.0, 0, False, None), ("u", 1, 0.0, 0, False, None)], ids=["x", "x"])
