"""Two answers kept until the node pool changes (``NodePool.version``, bumped by every
allocation, release and health change) against computing them afresh: the most free GPUs on one
healthy node (``NodePool.max_free``, read by every visit's fit test and the walk's bounds), and
the most GPUs one healthy session-pool node has free or lent to other work (``SessionPool.room``,
the fast walk's bound ``walk.Room.lent``).  After any sequence of starts and stops of sessions and
other work and of health changes, the kept answers are the definitions'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.interactive import InteractiveClass
from allotment.core.jobs import JobSpec
from allotment.core.placement import NodePool
from allotment.core.session_pool import SessionPool
from allotment.core.snapshot import NodeState
from allotment.core.state import Run

N_NODES = 5
NAMES = [f"n{i}" for i in range(N_NODES)]
CLS = InteractiveClass(pool_nodes=2)  # n3 and n4

# a change: start (node, GPUs, session?, resumable?), stop the k-th running job, flip a node's health
change = st.one_of(
    st.tuples(st.just("start"), st.integers(0, N_NODES - 1), st.integers(1, 8), st.booleans(), st.booleans()),
    st.tuples(st.just("stop"), st.integers(0, 20), st.just(0), st.just(False), st.just(False)),
    st.tuples(st.just("health"), st.integers(0, N_NODES - 1), st.just(0), st.just(False), st.just(False)),
)


def _max_free(pool: NodePool) -> int:
    return max((pool.free[i] for i in range(N_NODES) if pool.healthy[i]), default=0)


def _room(pool: NodePool, running: dict[str, Run], keep: bool) -> int:
    """The definition: the pool's healthy nodes' free GPUs plus those of runs there that are
    not sessions and that the policy may stop."""
    best = 0
    for i in pool_nodes():
        if pool.healthy[i]:
            lent = sum(g for jid, g in pool.jobs[i].items()
                       if not CLS.recognises(running[jid].spec.kind) and not (keep and not running[jid].spec.resumable))
            best = max(best, pool.free[i] + lent)
    return best


def pool_nodes() -> range:
    return range(N_NODES - 2, N_NODES)


@settings(max_examples=200, deadline=None)
@given(st.lists(change, max_size=25), st.booleans())
def test_the_kept_answers_are_the_definitions_after_any_changes(changes: list[tuple[str, int, int, bool, bool]],
                                                                keep: bool) -> None:
    pool = NodePool(tuple(NodeState(n, 8) for n in NAMES))
    sessions = SessionPool(CLS, NAMES, keep)
    running: dict[str, Run] = {}

    def check() -> None:
        for _ in range(2):  # computed, then kept
            assert pool.max_free() == _max_free(pool)
            assert sessions.room(pool, running) == _room(pool, running, keep)

    check()
    for k, (kind, i, gpus, session, resumable) in enumerate(changes):
        if kind == "start" and pool.free[i] >= gpus:
            spec = JobSpec(id=f"j{k:02d}", submit=0.0, account="a", gpus=gpus, work=600.0, user="u",
                           kind="interactive" if session else "batch", resumable=resumable)
            r = running[spec.id] = Run(spec, 0.0, ((i, gpus),), True, 0.0, 0.0, 0, None)
            r.lent = sessions.lent(spec, r.placement)  # recorded at the start, as ``ClusterState.add_running`` does
            pool.allocate(spec.id, ((i, gpus),))
        elif kind == "stop" and running:
            jid = sorted(running)[i % len(running)]
            pool.release(jid, running.pop(jid).placement)
        elif kind == "health":
            pool.set_health(i, not pool.healthy[i])
        check()


def test_a_session_starting_on_an_idle_pool_node_lowers_the_room() -> None:
    pool = NodePool(tuple(NodeState(n, 8) for n in NAMES))
    sessions = SessionPool(CLS, NAMES, False)
    running: dict[str, Run] = {}
    assert sessions.room(pool, running) == 8
    for i in pool_nodes():
        spec = JobSpec(id=f"s{i}", submit=0.0, account="a", gpus=6, work=600.0, user="u", kind="interactive")
        running[spec.id] = Run(spec, 0.0, ((i, 6),), True, 0.0, 0.0, 0, None)
        pool.allocate(spec.id, ((i, 6),))
    assert sessions.room(pool, running) == _room(pool, running, False) == 2


@settings(max_examples=200, deadline=None)
@given(st.lists(change, max_size=25), st.booleans())
def test_a_nodes_changed_at_moves_with_that_node_and_the_kept_parts_are_the_definition(
        changes: list[tuple[str, int, int, bool, bool]], keep: bool) -> None:
    """``SessionPool.room`` keeps each pool node's part until ``NodePool.changed_at`` says the
    node changed: so ``changed_at[i]`` must move at every change of node ``i``'s free GPUs, jobs
    or health (and the bound stay its definition, ``fresh_room``, asked between any two changes)."""
    pool = NodePool(tuple(NodeState(n, 8) for n in NAMES))
    sessions = SessionPool(CLS, NAMES, keep)
    running: dict[str, Run] = {}
    for k, (kind, i, gpus, session, resumable) in enumerate(changes):
        before = [(pool.free[j], dict(pool.jobs[j]), pool.healthy[j], pool.changed_at[j]) for j in range(N_NODES)]
        if kind == "start" and pool.free[i] >= gpus:
            spec = JobSpec(id=f"j{k:02d}", submit=0.0, account="a", gpus=gpus, work=600.0, user="u",
                           kind="interactive" if session else "batch", resumable=resumable)
            r = running[spec.id] = Run(spec, 0.0, ((i, gpus),), True, 0.0, 0.0, 0, None)
            r.lent = sessions.lent(spec, r.placement)
            pool.allocate(spec.id, ((i, gpus),))
        elif kind == "stop" and running:
            jid = sorted(running)[i % len(running)]
            pool.release(jid, running.pop(jid).placement)
        elif kind == "health":
            pool.set_health(i, not pool.healthy[i])
        for j, (free, jobs, healthy, at) in enumerate(before):
            moved = (free, jobs, healthy) != (pool.free[j], pool.jobs[j], pool.healthy[j])
            assert (pool.changed_at[j] != at) == moved, (j, kind)
        if k % 2:  # asked only every other change: a part kept across several changes is checked too
            assert sessions.room(pool, running) == sessions.fresh_room(pool, running) == _room(pool, running, keep)
