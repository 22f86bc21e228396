"""The pass-inputs memo (``Scheduler.inputs``: what each account is owed, the Fair Tree ranks and
their index, the reclaim measures, kept by the fast walk for the same epoch, the same usage
mapping and the same healthy capacity) against the reference, which computes them every pass:
after any sequence of starts, stops, ticks within and across epochs, health changes and new
usage mappings, both give equal inputs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.pass_inputs import PassInputs
from tests.core.memo_twin import Change, Twin, change, job


def _fields(pi: PassInputs) -> tuple[object, ...]:
    ranks = [(r.leaf, r.rank, r.level_fair_share) for r in pi.ranks]  # a LeafRank compares by identity
    return (pi.now, pi.t, pi.owed, ranks, pi.rank_index, pi.measure, dict(pi.boosts), pi.load)


def _agree(twin: Twin) -> None:
    fast, ref = (_fields(s.inputs(twin.now, twin.usage)) for s in twin.both)
    assert fast == ref


@settings(max_examples=150, deadline=None)
@given(st.lists(job, max_size=8), st.lists(change, max_size=14))
def test_the_kept_inputs_are_the_recomputed_ones_after_any_changes(running: list[tuple], changes: list[Change]) -> None:  # type: ignore[type-arg]
    twin = Twin(running)
    _agree(twin)
    for c in changes:
        twin.change(c)
        _agree(twin)


def test_a_new_usage_mapping_in_the_same_epoch_is_ranked_again() -> None:
    twin = Twin()
    _agree(twin)
    twin.change(("usage", 1))  # b, not a, is now the least served: the ranks turn
    _agree(twin)


def test_a_node_going_unhealthy_scales_what_each_account_is_owed() -> None:
    twin = Twin()
    _agree(twin)
    twin.change(("health", 2))  # same epoch, same usage mapping, less capacity
    _agree(twin)
