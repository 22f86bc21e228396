"""``Accounting.lowest_declared``, kept as jobs turn preemptible and stop, against the plain
minimum over the account's preemptible allocated jobs (what ``victims._lowest_declared``
computed per search before stop 45), after every change ``memo_twin`` makes: starts (some
preemptible at once), stops, protections ending, health."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allotment.core.scheduler import Scheduler
from tests.core.memo_twin import ACCOUNTS, Change, Job, Twin, change, job

NONE = 1 << 62


def _plain(s: Scheduler, account: str) -> int:
    ids = s.state.acct.alloc.get(account)
    return min((s.state.running[j].declared for j in ids), default=NONE) if ids else NONE


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(job, max_size=10), st.lists(change, max_size=20))
def test_the_lowest_declared_priority_kept_is_the_plain_minimum(running: list[Job], changes: list[Change]) -> None:
    twin = Twin(running)
    for c in [None, *changes]:
        if c is not None:
            twin.change(c)
        for s in twin.both:
            for a in ACCOUNTS:
                assert s.state.acct.lowest_declared(a, NONE) == _plain(s, a), (a, c)


def test_a_stopped_job_leaves_the_lowest_declared_priority() -> None:
    """a's preemptible jobs of priorities 0 and 2: the lowest is 0 until that job stops."""
    twin = Twin([("a", 4, 0, 1, True, 0, -1.0), ("a", 4, 1, 1, True, 2, -1.0)])
    assert twin.fast.state.acct.lowest_declared("a", NONE) == 0
    twin.fast.state.finish("j001")
    assert twin.fast.state.acct.lowest_declared("a", NONE) == 2
    twin.fast.state.finish("j002")
    assert twin.fast.state.acct.lowest_declared("a", NONE) == NONE


def test_a_redeclared_running_job_moves_the_lowest_declared_priority() -> None:
    """The simulator's dependency pass raises a running job's declared priority when a dependant
    of a higher one is submitted, and lowers it when that one goes (``ClusterState.dependants_changed``):
    the count of the team's preemptible jobs by priority follows, and the state's version moves."""
    twin = Twin([("a", 4, 0, 1, True, 0, -1.0), ("a", 4, 1, 1, True, 2, -1.0)])
    st_ = twin.fast.state
    version = st_.version
    st_.dependants_changed("j001", 5)
    assert st_.running["j001"].declared == 5 and st_.version == version + 1
    assert st_.acct.lowest_declared("a", NONE) == 2 == _plain(twin.fast, "a")
    st_.dependants_changed("j001", 0)
    assert st_.acct.lowest_declared("a", NONE) == 0 == _plain(twin.fast, "a")
    st_.dependants_changed("j001", 0)  # no change: nothing moves
    assert st_.version == version + 2
    st_.finish("j001")
    st_.finish("j002")
    assert st_.acct.lowest_declared("a", NONE) == NONE
