"""A chain's dependants share its tail (``core.dependant_list``): memory one slot a job, not the
chain's length squared, and the same jobs in the same order as the plain search gives."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.jobs import JobSpec
from allotment.core.priority import dependants, dependants_by_search


def _chain(n: int, account: str = "a") -> list[JobSpec]:
    """Run i waits for run i - 1: job ``r{i}``'s dependants are every later run."""
    return [JobSpec(id=f"r{i:05d}", submit=float(i), account=account, gpus=1, work=60.0,
                    depends_on=(f"r{i - 1:05d}",) if i else ()) for i in range(n)]


def test_a_long_chains_dependants_take_memory_linear_in_its_length() -> None:
    chain = _chain(3000)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        got = dependants(chain)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(got) == 2999 and len(got["r00000"]) == 2999
    # one shared node a job (~100 bytes with the map's entry); as tuples it was 3000^2/2 slots (36 MB)
    assert held < 3000 * 400, held


def test_a_shared_list_reads_as_the_tuple_of_its_jobs() -> None:
    chain = _chain(50)
    got = dependants(chain)
    for i, spec in enumerate(chain[:-1]):
        want = tuple(chain[i + 1:])
        lst = got[spec.id]
        assert lst == want and tuple(lst) == want and len(lst) == len(want) and bool(lst)
        assert lst.first_id() == want[0].id


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.lists(st.integers(0, 30), max_size=3), st.sampled_from("ab")),
                min_size=1, max_size=31))
def test_shared_lists_hold_what_the_search_finds(rows: list[tuple[int, list[int], str]]) -> None:
    """Chains, joins, forks and cycles across two accounts: the joined lists (shared where a job
    has one dependant) iterate as the plain search's sorted tuples."""
    specs = {}
    for k, deps, account in rows:
        specs[f"j{k:02d}"] = JobSpec(id=f"j{k:02d}", submit=0.0, account=account, gpus=1, work=1.0,
                                     depends_on=tuple(f"j{d:02d}" for d in deps if d != k))
    fast, plain = dependants(specs.values()), dependants_by_search(specs.values())
    assert fast.keys() == plain.keys()
    for k in plain:
        assert tuple(fast[k]) == tuple(plain[k]) and len(fast[k]) == len(plain[k])
