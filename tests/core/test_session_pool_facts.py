"""What the session pool's rules read of a job is recorded on its record once: ``Pend.session``
when it is queued and ``Run.lent`` when its run is recorded (``core.session_pool``).  Both are
read millions of times a run (every candidate of every visit; every job on a pool node when the
pool's bound is recomputed), and recognising a session is an interpreted call each time
(docs/benchmarks.md, "Stop 42").  The spec and the placement they are read from never change,
so the recorded fact must equal the rule's answer asked afresh, through starts, preemptions,
requeues and delayed launches; and the pool's bound (``SessionPool.room``) must be what its
definition gives over the running jobs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.interactive import InteractiveClass
from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from allotment.core.walk import FAST, REFERENCE
from tests.core.builders import make_config

NODES = tuple(NodeState(f"n{i:03d}", 8) for i in range(4))


def _lent_by_definition(s: Scheduler, jid: str) -> bool:
    """Rule 2 asked afresh of the run's spec and placement."""
    r = s.state.running[jid]
    return s.state.sessions.lent(r.spec, r.placement)


def _room_by_definition(s: Scheduler) -> int:
    """The most GPUs one healthy pool node has free or lent, each job recognised afresh."""
    sp, pool = s.state.sessions, s.state.pool
    best = 0
    for i in sp.nodes:
        if pool.healthy[i]:
            lent = sum(g for jid, g in pool.jobs[i].items()
                       if not sp.session(s.state.running[jid].spec) and sp.stoppable(s.state.running[jid].spec))
            best = max(best, pool.free[i] + lent)
    return best


def _check(s: Scheduler) -> None:
    for p in s.state.pending.values():
        assert p.session == s.state.sessions.session(p.spec), p.jid
    for jid, r in s.state.running.items():
        assert r.lent == _lent_by_definition(s, jid), jid
    if s.state.sessions.nodes:
        assert s.state.sessions.room(s.state.pool, s.state.running) == _room_by_definition(s)


job = st.tuples(
    st.sampled_from(["a", "b"]),
    st.sampled_from([1, 2, 4, 8, 16]),
    st.sampled_from(["batch", "interactive", "train"]),
    st.booleans(),  # resumable
    st.sampled_from([0.0, 600.0]),  # minimum runtime (0: unallocated-eligible)
    st.sampled_from([600.0, 3600.0, 7200.0]),  # work
)


@settings(max_examples=60, deadline=None)
@given(
    jobs=st.lists(job, min_size=1, max_size=14),
    pool=st.sampled_from([1, 2]),
    keep=st.booleans(),
    fast=st.booleans(),
    delays=st.lists(st.booleans(), min_size=14, max_size=14),
)
def test_recorded_session_and_lent_facts_equal_the_rule_asked_afresh(
    jobs: list[tuple[str, int, str, bool, float, float]], pool: int, keep: bool, fast: bool, delays: list[bool],
) -> None:
    policy = Policy(interactive=InteractiveClass(pool_nodes=pool),
                    non_resumable="run_to_completion" if keep else "requeue")
    ctx = build_context(make_config({"a": 2, "b": 1}, nodes=4, policy=policy), "c1")
    s = Scheduler(ctx, NODES, walk=FAST if fast else REFERENCE)
    assert s.state.sessions.nodes
    specs = [JobSpec(id=f"j{k:02d}", submit=300.0 * k, account=a, gpus=g, work=w, min_runtime=mr, user="u",
                     resumable=res, kind=kind, checkpoint_interval=600.0 if res else None)
             for k, (a, g, kind, res, mr, w) in enumerate(jobs)]
    ends: dict[str, float] = {}
    for k, spec in enumerate(specs):
        now = spec.submit
        for jid in [j for j, e in ends.items() if e <= now and j in s.state.running]:
            s.state.finish(jid)
            del ends[jid]
        s.state.add_pending(spec, now, now)
        _check(s)
        d = s.run_pass(now, {})
        for st_ in d.starts:
            if delays[k]:  # a launch delay: the run is recorded again from its launch
                s.state.launched(st_.job_id, now + 60.0)
            ends[st_.job_id] = now + s.state.running[st_.job_id].spec.work
        _check(s)


def test_a_delayed_launch_keeps_a_lent_run_lent() -> None:
    policy = Policy(interactive=InteractiveClass(pool_nodes=1))
    ctx = build_context(make_config({"a": 1}, nodes=4, policy=policy), "c1")
    s = Scheduler(ctx, NODES)
    for k in range(4):
        s.state.add_pending(JobSpec(id=f"w{k}", submit=0.0, account="a", gpus=8, work=3600.0, min_runtime=600.0, user="u",
                              checkpoint_interval=600.0), 0.0, 0.0)
    s.run_pass(0.0, {})
    lent = [jid for jid, r in s.state.running.items() if r.lent]
    assert len(lent) == 1 and s.state.running[lent[0]].placement == ((3, 8),)  # the pool node, borrowed last
    s.state.launched(lent[0], 60.0)
    assert s.state.running[lent[0]].lent
    assert s.state.sessions.room(s.state.pool, s.state.running) == 8
