"""``victims._freeable_hosts`` sums a node's owners only where the free GPUs plus every
preemptible GPU there (``Accounting.pre_on_node``) -- and the GPUs of jobs that yield to a
reservation once more, when the search may take those -- reach the job: against its definition
(every owner's map merged, each node summed), on any state of ``test_narrowed_search``'s kind,
for any owners, with or without the yielding jobs.  The named case fails if the bound forgets
that the definition counts a yielding job twice (tried: the property finds it too, slowly)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.core.preemption import victims
from allotment.core.preemption.view import VictimView
from tests.core.test_narrowed_search import N_NODES, Job, Search, _state, _views, job, search


def _merged(v: VictimView, per: int, gpu_type: str | None, owners: set[str], more: dict[int, int]) -> list[int]:
    """``_freeable_hosts`` by its definition: every owner's map merged, each node summed."""
    total: dict[int, int] = {}
    for o in owners:
        for i, g in v.acct.owner_nodes.get(o, {}).items():
            total[i] = total.get(i, 0) + g
    for i, g in more.items():
        total[i] = total.get(i, 0) + g
    ok = v.pool.host_flags(per, gpu_type)
    return sorted(i for i in range(N_NODES) if ok[i] and v.pool.free[i] + total.get(i, 0) >= per)


def _both(running: list[Job], searches: list[Search], owners: set[str], yields: bool) -> list[list[int]]:
    s = _state(running, searches)
    fast, _ = _views(s, 0, False)
    more = fast.acct.yield_nodes if yields else {}
    out = []
    for k in range(len(searches)):
        p = s.state.pending[f"p{k}"]
        for per in (1, 2, 4, 8):
            got = victims._freeable_hosts(fast, p, per, owners, more)
            assert got == _merged(fast, per, p.gpu_type, owners, more), (k, per)
            out.append(got)
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(job, min_size=3, max_size=18), st.lists(search, min_size=1, max_size=2),
       st.sets(st.sampled_from(["", "a", "b", "c"])), st.booleans())
def test_the_bounded_sum_lists_the_merged_maps_nodes(running: list[Job], searches: list[Search], owners: set[str],
                                                     yields: bool) -> None:
    _both(running, searches, owners, yields)


def test_a_yielding_donor_job_counts_twice_as_in_the_definition() -> None:
    """Node 0 holds c's 4-GPU job that yields to a reservation and b's protected one: c's map
    and the yielding jobs' both count its 4 GPUs, so by the definition node 0 reaches 8 --
    though only 4 GPUs there are preemptible.  (An upper bound: no option is made of it.)"""
    running: list[Job] = [("c", 4, 0, 1, True, 0, -1.0, False, 10.0, True),
                          ("b", 4, 0, 1, True, 0, 1e9, False, 10.0, False)]
    for n in range(1, N_NODES):
        running.append(("b", 8, n, 1, True, 0, 1e9, False, 10.0, False))
    got = _both(running, [(8, 1, 0, "a", "reserve", False)], {"", "c"}, True)
    assert got[3] == [0]  # per 8
