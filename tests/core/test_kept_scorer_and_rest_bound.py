"""Two reuses of the fast walk (docs/benchmarks.md, "Stop 43"), each against its plain definition.

``Scheduler._scorer``: the fast walk keeps the pass's ``Scorer`` while the pass inputs (the
object), the best node's free GPUs and the dependants map are the same; every key it gives must
be the one a scorer made afresh gives (``_fresh_scorer``), whatever changed in between.

``WalkPolicy.rest_may_take``: the fast walk skips ``_free_work_for_the_rest`` of a queue when
the free GPUs and every GPU of unallocated work are fewer than the fewest GPUs of an allocated
placeable job of the queue (``Shapes.least_alloc_gpus``).  The skip rests on that bound being
below every such job's GPUs, so that ``Starting.victims_for``'s first bound turns each of them
away: checked here against the queue's jobs themselves, and the reference never skips."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.interactive import InteractiveClass
from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.core.priority import dependants
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState
from allotment.core.walk import FAST, REFERENCE
from tests.core.builders import make_config

NODES = tuple(NodeState(f"n{i:03d}", 8) for i in range(4))

job = st.tuples(
    st.sampled_from(["a", "b"]),
    st.sampled_from([1, 2, 4, 8, 16]),
    st.sampled_from([0.0, 600.0]),  # minimum runtime (0: unallocated-eligible)
    st.sampled_from([600.0, 3600.0, 7200.0]),  # work
    st.sampled_from([0.0, 60.0, 4000.0]),  # gap after the previous arrival (4000: a new epoch)
    st.booleans(),  # depends on the job before it (and, declared urgent, lends it its score)
    st.sampled_from(["none", "health", "deps", "inputs"]),  # what else changes before the check
)


def _check_rest_bound(s: Scheduler) -> None:
    free, unalloc = s.state.pool.free_gpus(), s.state.acct.unalloc_gpus
    for q in s.state.queues.queues:
        assert REFERENCE.rest_may_take(q.shapes, s.state.pool, s.state.acct)
        if not FAST.rest_may_take(q.shapes, s.state.pool, s.state.acct):
            for p in q.jobs:
                if p.n > 0 and p.mr > 0:  # an allocated placeable job: it could not search
                    assert p.gpus > free + unalloc, (q.name, p.jid)


@settings(max_examples=80, deadline=None)
@given(jobs=st.lists(job, min_size=1, max_size=16), pool=st.sampled_from([0, 1]))
def test_the_kept_scorer_scores_as_a_fresh_one_and_the_rest_bound_holds(
    jobs: list[tuple[str, int, float, float, float, bool, str]], pool: int,
) -> None:
    policy = Policy(interactive=InteractiveClass(pool_nodes=pool), fairshare_period_s=3600)
    ctx = build_context(make_config({"a": 2, "b": 1}, nodes=4, policy=policy), "c1")
    s = Scheduler(ctx, NODES, walk=FAST)
    now = 0.0
    specs: list[JobSpec] = []
    ends: dict[str, float] = {}
    pi = s.inputs(now, {})
    for k, (a, g, mr, w, gap, dep, change) in enumerate(jobs):
        s._scorer(pi)  # kept now: the changes below come between it and the check
        now += gap
        for jid in [j for j, e in ends.items() if e <= now and j in s.state.running]:
            s.state.finish(jid)
            del ends[jid]
        spec = JobSpec(id=f"j{k:02d}", submit=now, account=a, gpus=g, work=w, min_runtime=mr, user=f"u{k % 3}",
                       depends_on=(specs[-1].id,) if dep and specs else (), priority=9 if dep else 0)
        specs.append(spec)
        s.state.add_pending(spec, now, now)
        if change == "health":
            name = NODES[k % len(NODES)].name
            s.state.set_health(name, not s.state.pool.healthy[s.state.pool.index[name]], now)
        elif change == "deps":
            s.state.dependants = dependants(specs)
        elif change == "inputs":
            pi = s.inputs(now, {})
        kept = s._scorer(pi)
        fresh = s._fresh_scorer(pi)
        for p in s.state.pending.values():
            assert kept.key(p) == fresh.key(p), p.jid
        _check_rest_bound(s)
        d = s.run_pass(now, {})
        for st_ in d.starts:
            ends[st_.job_id] = now + s.state.running[st_.job_id].spec.work
        _check_rest_bound(s)


def test_a_queue_whose_allocated_jobs_all_need_more_than_the_bound_is_skipped() -> None:
    ctx = build_context(make_config({"a": 1}, nodes=4), "c1")
    s = Scheduler(ctx, NODES, walk=FAST)
    s.state.add_pending(JobSpec(id="big", submit=0.0, account="a", gpus=40, work=600.0, min_runtime=600.0, user="u"),
                  0.0, 0.0)
    q = s.state.queues.by_name["a"]
    assert q.shapes.least_alloc_gpus() == 0  # 40 GPUs never fit 4 x 8: not placeable
    s.state.add_pending(JobSpec(id="gang", submit=0.0, account="a", gpus=16, work=600.0, min_runtime=600.0, user="u"),
                  0.0, 0.0)
    assert FAST.rest_may_take(q.shapes, s.state.pool, s.state.acct)  # 32 free GPUs >= 16
    s.state.add_pending(JobSpec(id="fill", submit=0.0, account="a", gpus=24, work=600.0, min_runtime=600.0, user="v"),
                  0.0, 0.0)
    s.run_pass(0.0, {})
    assert s.state.pool.free_gpus() + s.state.acct.unalloc_gpus < 16 <= q.shapes.least_alloc_gpus()
    assert not FAST.rest_may_take(q.shapes, s.state.pool, s.state.acct) and REFERENCE.rest_may_take(q.shapes, s.state.pool, s.state.acct)
