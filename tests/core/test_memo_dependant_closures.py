"""What ``DependantFactsCache`` (``core.inherited``) keeps for the whole run -- each job's
dependants merged (``closure``, for ``fixed``; ``derived``, for ``adaptive`` and ``fifo``) -- is
made again when what it was made from changes: the dependants map (the driver hands a new one as
``run`` is called: a run continued after a pause), the policy's weights (a run switched to
another config).  One cache is asked through a sequence of maps and weights, and every
prerequisite's inherited score must be the reference's, which reads each dependant each time.
Each step scores new pending records (as ``decide`` does every tick), so that only the cache
carries anything over: what a job keeps on its own record (``Pend.inherit``) is checked by
``tests/core/test_memo_scores.py``.  ``tests/core/test_inherited.py`` checks the merge itself,
on one map and one policy."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy, PriorityWeights
from allotment.core.context import build_context
from allotment.core.ids import UserGpus
from allotment.core.inherited import DependantFactsCache
from allotment.core.jobs import JobSpec
from allotment.core.priority import Scorer, active_boosts, dependants
from allotment.core.state import Pend
from allotment.core.weights import ScoreWeights
from tests.core.builders import make_config
from tests.core.test_inherited import _graphs

MODES = st.sampled_from(["fixed", "fixed", "adaptive"])
WEIGHTS = st.sampled_from([PriorityWeights(), PriorityWeights(declared=3.0), PriorityWeights(declared=0.25, fit=2.0)])


@settings(max_examples=100, deadline=None)
@given(_graphs(), st.lists(st.tuples(st.integers(1, 24), WEIGHTS), min_size=2, max_size=5), MODES)
def test_one_cache_through_new_maps_and_weights_scores_as_reading_every_dependant(
    specs: list[JobSpec], steps: list[tuple[int, PriorityWeights]], mode: str
) -> None:
    users = UserGpus()
    facts = DependantFactsCache(users)  # one for the whole run, as the scheduler keeps it
    for step, (known, pw) in enumerate(steps):
        pends = [Pend(s, 0.0, 0.0, 0.0, s.priority, None, s.account) for s in specs]
        pw = PriorityWeights(mode=mode, declared=pw.declared, fit=pw.fit)  # type: ignore[arg-type]
        ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(priority_weights=pw)), "c1")
        waiting = dependants(specs[:known])  # the jobs known so far
        w = ScoreWeights(pw)
        t = 100.0 + 300.0 * step
        args = (ctx, t, 1.0, 4, users, active_boosts(ctx, t), waiting)
        kept = Scorer(*args, memo=mode == "fixed", merged=True, facts=facts, weights=w)  # type: ignore[arg-type]
        kept.merge_from = 0  # adaptive: every prerequisite read from its merged groups, not only long lists
        ref = Scorer(*args, weights=w)  # type: ignore[arg-type]
        assert [repr(kept.total(p)) for p in pends] == [repr(ref.total(p)) for p in pends]


def test_a_prerequisite_whose_dependants_changed_is_merged_again() -> None:
    pre = JobSpec(id="p", submit=0.0, account="a", gpus=1, work=600.0, user="u0", priority=0)
    low = JobSpec(id="d1", submit=0.0, account="a", gpus=1, work=600.0, user="u1", priority=1, depends_on=("p",))
    high = JobSpec(id="d2", submit=0.0, account="a", gpus=1, work=600.0, user="u2", priority=5, depends_on=("p",))
    ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2), "c1")
    users = UserGpus()
    facts = DependantFactsCache(users)
    got = []
    for specs in ([pre, low], [pre, low, high]):
        p = Pend(pre, 0.0, 0.0, 0.0, 0, None, "a")
        args = (ctx, 100.0, 1.0, 4, users, {}, dependants(specs))
        kept = Scorer(*args, memo=True, facts=facts)  # type: ignore[arg-type]
        assert kept.total(p) == Scorer(*args).total(p)  # type: ignore[arg-type]
        got.append(kept.total(p))
    assert got[1] > got[0]


def test_a_prerequisite_scored_under_other_weights_is_merged_again() -> None:
    pre = JobSpec(id="p", submit=0.0, account="a", gpus=1, work=600.0, user="u0", priority=0)
    dep = JobSpec(id="d", submit=0.0, account="a", gpus=1, work=600.0, user="u1", priority=2, depends_on=("p",))
    users = UserGpus()
    facts = DependantFactsCache(users)
    waiting = dependants([pre, dep])  # one map for both
    p = Pend(pre, 0.0, 0.0, 0.0, 0, None, "a")
    for declared in (1.0, 4.0):
        pw = PriorityWeights(declared=declared)
        ctx = build_context(make_config({"a": 1, "b": 1}, nodes=2, policy=Policy(priority_weights=pw)), "c1")
        args = (ctx, 100.0, 1.0, 4, users, {}, waiting)
        kept = Scorer(*args, memo=True, facts=facts)  # type: ignore[arg-type]
        assert kept.total(p) == Scorer(*args).total(p)  # type: ignore[arg-type]
