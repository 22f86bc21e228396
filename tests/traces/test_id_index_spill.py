"""``IdIndex`` spills its ids a run at a time (issue 32, item 5) and finds the same duplicates,
repeated digests and unknown dependencies as a plain dictionary of every id."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.traces.idcheck import IdIndex, id_digest

_ids = st.lists(st.sampled_from([f"j{i}" for i in range(12)]), max_size=50)
_deps = st.lists(st.sampled_from([f"j{i}" for i in range(16)]), max_size=6)


@settings(max_examples=200, deadline=None)
@given(ids=_ids, deps=_deps, run=st.integers(1, 9))
def test_a_spilled_index_finds_what_a_dict_of_every_id_finds(ids: list[str], deps: list[str], run: int) -> None:
    index = IdIndex(run=run)
    first: dict[str, int] = {}
    duplicates = []
    for line, job in enumerate(ids, start=2):
        index.add(job, line)
        if job in first:
            duplicates.append((line, first[job]))
        else:
            first[job] = line
    for k, name in enumerate(deps):
        index.depend("x", name, 100 + k, 3)
    assert index.duplicates() == sorted(duplicates)
    assert index.repeated_digests() == {id_digest(j) for j in set(ids) if ids.count(j) > 1}
    assert index.unknown_dependencies() == [(n, 100 + k, 3) for k, n in enumerate(deps) if n not in first]


def test_full_runs_leave_memory_for_the_spill() -> None:
    index = IdIndex(run=4)
    for line in range(2, 12):
        index.add(f"j{line}", line)
    assert (len(index.runs), len(index.digests)) == (2, 2)
    index.add("j3", 12)
    assert index.duplicates() == [(12, 3)]
