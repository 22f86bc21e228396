"""``fairness_merge.changes``, what a kept long queue's order reads of the queue since it last
saw it (``AgedOrder.update``), against the plain answer by identity: the jobs of the queue now
not in the list last seen, and the reverse.  Lists far longer than the block the walk skips
(``_BLOCK``), changed by removals, arrivals and requeues under the same key (a new ``Pend``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.fairness_merge import _BLOCK, changes
from allotment.core.jobs import JobSpec
from allotment.core.state import Pend


def _pend(k: int) -> Pend:
    spec = JobSpec(id=f"j{k:05d}", submit=0.0, account="a", gpus=1, work=60.0, user="u")
    return Pend(spec, float(k), float(k), 0.0, 0, None, "a")


def _ids(ps: list[Pend]) -> list[int]:
    return sorted(id(p) for p in ps)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5 * _BLOCK), st.lists(st.tuples(st.sampled_from(["gone", "new", "again"]),
                                                       st.integers(0, 10**6)), max_size=12))
def test_the_changes_are_the_jobs_of_one_list_not_in_the_other(size: int, edits: list[tuple[str, int]]) -> None:
    last = [_pend(2 * k) for k in range(size)]
    now = list(last)
    fresh = 2 * size + 1  # odd keys: arrivals between the others
    for kind, at in edits:
        if kind == "new":
            now.append(_pend(fresh + 2 * (at % (size + 3))))
        elif now:
            k = at % len(now)
            old = now.pop(k)
            if kind == "again":  # requeued: the same key, another job
                now.append(Pend(old.spec, old.eligible, old.queued_since, 0.0, 0, None, "a"))
    now.sort(key=lambda p: p.key)
    added, gone = changes(last, now)
    mine = {id(p) for p in last}
    here = {id(p) for p in now}
    assert _ids(added) == _ids([p for p in now if id(p) not in mine])
    assert _ids(gone) == _ids([p for p in last if id(p) not in here])


def test_a_long_queue_with_one_job_gone_in_its_middle() -> None:
    last = [_pend(k) for k in range(4 * _BLOCK)]
    now = last[:70] + last[71:]
    assert changes(last, now) == ([], [last[70]])
