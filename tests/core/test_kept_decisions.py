"""The fast walk's kept reserving-only ``Decisions`` (``Scheduler._reserving_only``), against the
plain one: a pass that decides nothing but report its reservations returns the record it
returned last while the reported reservations are the same object, and that record must equal
the one the reference walk makes afresh, pass after pass, whatever changed in between."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.core.context import build_context
from allotment.core.decisions import Decisions
from allotment.core.jobs import JobSpec
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from allotment.core.walk import FAST, REFERENCE
from tests.core.builders import make_config

NODES = tuple(NodeState(f"n{i:03d}", 8) for i in range(4))

job = st.tuples(
    st.sampled_from(["a", "b"]),
    st.sampled_from([1, 4, 8, 16, 24]),  # 16 and 24: gangs, which hold a reservation when blocked
    st.sampled_from([0.0, 600.0]),  # minimum runtime (0: unallocated-eligible)
    st.sampled_from([600.0, 3600.0, 7200.0]),  # work
    st.sampled_from([0.0, 60.0, 700.0]),  # gap after the previous arrival
)


@settings(max_examples=80, deadline=None)
@given(jobs=st.lists(job, min_size=1, max_size=16))
def test_the_kept_reserving_only_decisions_equal_the_references(
    jobs: list[tuple[str, int, float, float, float]],
) -> None:
    ctx = build_context(make_config({"a": 2, "b": 1}, nodes=4), "c1")
    fast, ref = Scheduler(ctx, NODES, walk=FAST), Scheduler(ctx, NODES, walk=REFERENCE)
    now = 0.0
    ends: dict[str, float] = {}
    for k, (a, g, mr, w, gap) in enumerate(jobs):
        now += gap
        for jid in sorted(j for j, e in ends.items() if e <= now):
            if jid in fast.running:  # not preempted since
                fast.finish(jid)
                ref.finish(jid)
            del ends[jid]
        spec = JobSpec(id=f"j{k:02d}", submit=now, account=a, gpus=g, work=w, min_runtime=mr, user=f"u{k % 3}")
        fast.add_pending(spec, now, now)
        ref.add_pending(spec, now, now)
        for _ in range(2):  # and again at the same time: a pass that finds nothing new to decide
            before = fast._decisions_kept
            d, r = fast.run_pass(now, {}), ref.run_pass(now, {})
            assert d == r
            if d.reservations and not (d.starts or d.preemptions or d.nodes or d.notices):
                assert d == Decisions(reservations=d.reservations)
                if before is not None and before.reservations is d.reservations:
                    assert d is before  # the kept record, handed back
            for s in d.starts:
                ends[s.job_id] = now + fast.running[s.job_id].spec.work


def test_a_pass_that_only_reports_the_same_hold_returns_the_same_record() -> None:
    ctx = build_context(make_config({"a": 1}, nodes=4), "c1")
    s = Scheduler(ctx, NODES, walk=FAST)
    s.add_pending(JobSpec(id="fill", submit=0.0, account="a", gpus=24, work=3600.0, min_runtime=600.0, user="u"),
                  0.0, 0.0)
    assert s.run_pass(0.0, {}).starts
    s.add_pending(JobSpec(id="gang", submit=0.0, account="a", gpus=16, work=600.0, min_runtime=600.0, user="u"),
                  0.0, 0.0)
    first = s.run_pass(1.0, {})
    assert [r.job_id for r in first.reservations] == ["gang"] and not first.starts
    assert s.run_pass(2.0, {}) is first
    s.finish("fill")  # the hold's nodes free: the gang starts, and nothing is reserved
    d = s.run_pass(3.0, {})
    assert d is not first and [x.job_id for x in d.starts] == ["gang"] and not d.reservations
