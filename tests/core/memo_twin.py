"""One state under the fast walk and under the reference, changed in step: what the targeted
memo tests (``tests/core/test_memo_*.py``) drive.  Each test asks a memoised question of the
fast scheduler and the same question of the reference (which keeps nothing) after every change,
so a memo that answers from a stale entry -- a guard dropped -- shows as a disagreement.

A change is one of the state changes a memo's guards must see: a job starts (on one node, or a
two-node gang) or stops, time passes (protections end; a new epoch), a node's health flips, the
window usage is another mapping (as a new epoch's is), or a job is queued (possibly in a queue
new to the scheduler, which re-deals the queue names).  Every change is applied to both
schedulers the same way, through the same public mutations the simulator uses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import strategies as st

from allotment.compile.model import CompiledConfig, Policy
from allotment.core.candidates import CandidateOrders
from allotment.core.context import Context, build_context
from allotment.core.decide import build_scheduler
from allotment.core.fast_walk import Kept
from allotment.core.jobs import JobSpec
from allotment.core.preemption.retry import FailedSearches
from allotment.core.scheduler import Scheduler
from allotment.core.snapshot import NodeState, Snapshot
from allotment.core.walk import FAST, REFERENCE, WalkPolicy
from tests.core.builders import make_config

N_NODES = 4
ACCOUNTS = ("a", "b", "c", "d")
T0 = 1000.0
PERIOD = 300  # the fair-share period: ticks below it stay in the epoch, longer ones leave it
# window usages, each one mapping object for the whole run (the pass-inputs memo compares the
# mapping by identity, as the simulator hands one view per epoch)
USAGES: tuple[Mapping[str, float], ...] = (
    {"a": 0.0, "b": 400.0, "c": 150.0, "d": 50.0},
    {"a": 300.0, "b": 0.0, "c": 150.0, "d": 50.0},
    {"a": 0.0, "b": 0.0, "c": 0.0, "d": 0.0},
    {"a": 100.0, "b": 100.0, "c": 600.0, "d": 0.0},
)


def config(max_gpus: Mapping[str, int] | None = None, **policy: object) -> CompiledConfig:
    return make_config({"a": 1, "b": 1, "c": 1, "d": 1}, nodes=N_NODES,
                       policy=Policy(fairshare_period_s=PERIOD, **policy),  # type: ignore[arg-type]
                       max_gpus=max_gpus)


CTX = build_context(config(), "c1")
NODES = tuple(NodeState(f"n{i}", 8) for i in range(N_NODES))

# a job: (account, GPUs per node, first node, nodes, allocated, declared priority, protected for)
Job = tuple[str, int, int, int, bool, int, float]
job = st.tuples(st.sampled_from(ACCOUNTS), st.sampled_from([1, 2, 4, 4, 8]), st.integers(0, N_NODES - 1),
                st.sampled_from([1, 1, 1, 2]), st.sampled_from([True, True, False]), st.integers(0, 2),
                st.sampled_from([-1.0, 30.0, 200.0, 1e9]))
Change = tuple[str, object]
change = st.one_of(
    st.tuples(st.just("start"), job),
    st.tuples(st.just("stop"), st.integers(0, 40)),
    st.tuples(st.just("tick"), st.sampled_from([1, 40, 250, PERIOD, 2 * PERIOD])),
    st.tuples(st.just("health"), st.integers(0, N_NODES - 1)),
    st.tuples(st.just("usage"), st.integers(0, len(USAGES) - 1)),
    st.tuples(st.just("queue"), job),
)


class Twin:
    """The same state under ``FAST`` (``fast``) and ``REFERENCE`` (``ref``)."""

    def __init__(self, running: Sequence[Job] = (), pending: Sequence[Job] = (), ctx: Context = CTX) -> None:
        self.now = T0
        self.usage = USAGES[0]
        self.fast = _scheduler(ctx, FAST)
        self.ref = _scheduler(ctx, REFERENCE)
        self.n = 0  # jobs made so far (their ids)
        for j in running:
            self.start(j)
        for s in self.both:
            s.state.expire_protections(self.now)
        for j in pending:
            self.queue(j)

    @property
    def both(self) -> tuple[Scheduler, Scheduler]:
        return (self.fast, self.ref)

    def _spec(self, j: Job) -> JobSpec:
        account, per, _, nodes, allocated, declared, _ = j
        self.n += 1
        return JobSpec(id=f"j{self.n:03d}", submit=0.0, account=account, gpus=per * nodes, work=3600.0,
                       user=f"u{declared}", min_runtime=600.0 if allocated else 0.0, priority=declared,
                       gpus_per_node=per if nodes > 1 else None)

    def start(self, j: Job) -> None:
        """Start ``j`` now on its nodes if it fits them (else leave it out)."""
        _, per, first, nodes, allocated, _, protect = j
        idx = [(first + m) % N_NODES for m in range(nodes)]
        pool = self.fast.state.pool
        if any(pool.free[i] < per or not pool.healthy[i] for i in idx):
            return
        spec = self._spec(j)
        for s in self.both:
            s.state.add_running(spec, self.now - 10.0, tuple((s.state.pool.names[i], per) for i in idx), allocated=allocated,
                          protected_until=self.now + protect if allocated else self.now)

    def queue(self, j: Job) -> None:
        spec = self._spec(j)
        for s in self.both:
            s.state.add_pending(spec, self.now, self.now)

    def run(self, jid: str, account: str, gpus: int, node: int, declared: int, work: float,
            protect: float = -1.0, checkpoint: float | None = None) -> None:
        """Start an allocated job of ``work`` seconds (ends at ``now - 10 + work``) on one node:
        what the named cases whose jobs must end at different times, or lose work when taken,
        build (``Job``s all run an hour and checkpoint continuously).  ``protect`` < 0: past its
        protection at once; ``checkpoint``: its checkpoint interval (None: continuously)."""
        spec = JobSpec(id=jid, submit=0.0, account=account, gpus=gpus, work=work, user=f"u{declared}",
                       min_runtime=600.0, priority=declared, checkpoint_interval=checkpoint)
        for s in self.both:
            s.state.add_running(spec, self.now - 10.0, ((s.state.pool.names[node], gpus),), allocated=True,
                                protected_until=self.now + protect)
            s.state.expire_protections(self.now)

    def wait(self, jid: str, account: str, gpus: int, declared: int, work: float) -> None:
        """Queue an allocated one-node job of ``work`` seconds (minimum runtime 600 s: a debug job
        under the default threshold)."""
        spec = JobSpec(id=jid, submit=0.0, account=account, gpus=gpus, work=work, user=f"u{declared}",
                       min_runtime=600.0, priority=declared)
        for s in self.both:
            s.state.add_pending(spec, self.now, self.now)

    def search(self, jid: str, reserve: bool = False) -> object:
        """The same victim search for ``jid`` on both walks, which must agree: its victims as
        (job, rule) pairs, or None when nothing was found."""
        got = []
        for s in self.both:
            pi = s.inputs(self.now, self.usage)
            p = s.state.pending[jid]
            found = s.starting.victims_for(p, s.starting.queue_key(p.queue, pi), pi, None, False, reserve)
            got.append(None if found is None else [(v.job_id, v.rule) for v in found])
        assert got[0] == got[1], (jid, reserve, got)
        return got[0]

    def replay(self, changes: Sequence[Change]) -> None:
        """Every pending job's searches (with and without a reservation) on both walks, which
        must agree, on the state as it is and after each of ``changes``."""
        for c in [None, *changes]:
            if c is not None:
                self.change(c)
            for jid in sorted(self.fast.state.pending):
                for reserve in (False, True):
                    self.search(jid, reserve)

    def change(self, c: Change) -> None:
        kind, arg = c
        if kind == "start":
            self.start(arg)  # type: ignore[arg-type]
        elif kind == "queue":
            self.queue(arg)  # type: ignore[arg-type]
        elif kind == "usage":
            self.usage = USAGES[arg]  # type: ignore[call-overload]
        else:
            if kind == "tick":
                self.now += arg  # type: ignore[operator]
            for s in self.both:
                if kind == "stop" and s.state.running:
                    s.state.finish(sorted(s.state.running)[arg % len(s.state.running)])  # type: ignore[operator]
                elif kind == "tick":
                    s.state.expire_protections(self.now)
                elif kind == "health":
                    i = arg
                    s.state.set_health(s.state.pool.names[i], not s.state.pool.healthy[i], self.now)  # type: ignore[call-overload]


def _scheduler(ctx: Context, walk: WalkPolicy) -> Scheduler:
    return build_scheduler(Snapshot(NODES, ()), ctx, T0, frozenset(), walk=walk)


def kept(s: Scheduler) -> Kept:
    """The fast walk's memos of ``s`` (``core.fast_walk``)."""
    assert isinstance(s.memo, Kept)
    return s.memo


def failed(s: Scheduler) -> FailedSearches:
    """The fast walk's table of failed victim searches (``core.preemption.retry``)."""
    got = s.memo.failed
    assert got is not None
    return got


def orders(s: Scheduler) -> CandidateOrders:
    """The fast walk's kept candidate orders (``core.candidates``)."""
    got = s.memo.orders
    assert got is not None
    return got
