"""Nodes reserved for interactive sessions, lent to preemptible work while idle (issue 29, the
pool mode; docs/design/interactive.md, "The dedicated pool").

Ai2's next step for its sessions is "a dedicated pool ... lent to preemptible work when idle".
``interactive.pool: N`` reserves the last ``N`` nodes of a cluster by name (the end best fit
reaches last: ``NodePool.find`` takes the lowest node of a bucket first);
``interactive.pool: [names or hostlists]`` reserves those nodes.  One rule, read by
every start of the pass (``core.starting``, ``core.scheduler``), so the simulator, the
reconciler's ``decide()`` and ``allot explain`` carry it out alike:

1. **A session prefers the pool.**  It starts on free pool GPUs if any node there fits, else
   where any job would.
2. **Other work may borrow idle pool GPUs, and then holds them as lent work.**  It starts there
   only when no node outside the pool fits, and only if the policy may stop it (not
   ``non_resumable: run_to_completion`` work that cannot be resumed; such work borrows only if
   it could never fit outside the pool, and is then not lent: sessions wait for it).  A job the
   policy may stop that runs on a pool node and is not a session is *lent*: it has no protection (``lent``, applied where a run is
   recorded: ``ClusterState.add_running`` and ``Starting.launch``), so the contract's "never
   inside its minimum runtime" holds for it as it holds for unallocated work.
3. **Other work never reaches the pool by preemption, a reservation or consolidation.**  Its
   victim searches, its reservation plans and consolidation's holes keep off the pool's nodes
   (``off``): the pool is reserved, so no session there is stopped to make room for other work,
   and no gang drains it.
4. **A waiting session takes lent GPUs back at once** (rule ``session-pool``): a blocked
   single-node allocated session, in a mode that preempts, evicts lent jobs on the one pool
   node where that costs fewest GPUs (ties: the lower node), youngest run first (least work
   thrown away), until it fits (``reclaim``).  A gang session (more than one node) is not served
   by this rule: a pool is sized for sessions on one node.

The fast walk bounds rule 4 by ``room``: the most GPUs one healthy pool node has free or lent;
a queue none of whose candidates could fit in that is skipped (``core.walk``).
"""

from __future__ import annotations

from typing import Final

from allotment.compile.interactive import InteractiveClass
from allotment.core.jobs import JobSpec
from allotment.core.placement import NodeFilter, NodePool
from allotment.core.reservation import Unreserved
from allotment.core.snapshot import RunningJob
from allotment.core.state import Run

RULE = "session-pool"

# the node filters ``SessionPool.off`` keeps, one per set of reserved nodes: the sets a pass
# meets are the few of its holds (one per combination, at most ``2 ** reservations``), but a
# long run meets a new one every hundred jobs or so: kept for ever, they were the memory of
# ``simulate --trace`` that still grew with the trace (issue 32 item 5: about 9,000 filters,
# 12 MiB of the peak at 1M jobs, docs/benchmarks.md "Stop 41")
OFF_KEPT: Final = 256


def pool_nodes(names: list[str], cls: InteractiveClass) -> frozenset[int]:
    """The pool, by index into ``names`` (sorted, as ``NodePool`` keeps them): the nodes the class
    lists that the cluster has, or else its last ``pool_nodes``."""
    if cls.pool_names:
        listed = set(cls.pool_names)
        return frozenset(i for i, n in enumerate(names) if n in listed)
    n, count = len(names), cls.pool_nodes
    return frozenset(range(max(0, n - count), n)) if count > 0 else frozenset()


def lent_runs(cls: InteractiveClass, names: list[str], keep_nonresumable: bool,
              running: tuple[RunningJob, ...]) -> frozenset[str]:
    """Rule 2 read from outside a pass, by node names: the ids of the running jobs that hold
    lent pool GPUs.  The reconciler's last guard asks it, so that it lets the core take lent
    GPUs back inside the borrower's minimum runtime, as the pass that decided it did."""
    if not cls.reserves_pool:
        return frozenset()
    ordered = sorted(names)
    index = {n: i for i, n in enumerate(ordered)}
    sessions = SessionPool(cls, ordered, keep_nonresumable)
    return frozenset(r.spec.id for r in running
                     if sessions.lent(r.spec, tuple((index[n], g) for n, g in r.placement if n in index)))


class OnlyPool:
    """A node filter admitting the pool's nodes that ``base`` admits (None: any)."""

    __slots__ = ("base", "nodes")

    def __init__(self, nodes: frozenset[int], base: NodeFilter | None) -> None:
        self.nodes, self.base = nodes, base

    def __call__(self, node: int) -> bool:
        return node in self.nodes and (self.base is None or self.base(node))


class Lent:
    """What ``reclaim`` chose: the pool node a session starts on and the lent jobs it evicts."""

    __slots__ = ("jobs", "node")

    def __init__(self, node: int, jobs: list[str]) -> None:
        self.node, self.jobs = node, jobs


class SessionPool:
    """The pool of one cluster's scheduler: its nodes and the class that says who is a session.
    Empty (``nodes`` empty) when the policy reserves none, and then no rule here runs."""

    def __init__(self, cls: InteractiveClass, names: list[str], keep_nonresumable: bool) -> None:
        self.cls = cls
        self.nodes = pool_nodes(names, cls)
        self._keep_nonresumable = keep_nonresumable
        self._off: dict[frozenset[int] | None, Unreserved] = {}  # by the nodes the base keeps off
        self._room, self._room_at = 0, -1
        self._node_part: dict[int, int] = {}  # per pool node, its part of ``room`` ...
        self._node_seen: dict[int, int] = {}  # ... computed at this ``NodePool.changed_at``

    def session(self, spec: JobSpec) -> bool:
        """Is the job a session, by the class's one recognition rule?"""
        return self.cls.recognises(spec.kind, partition=spec.partition, gpus=spec.gpus, time_limit_s=spec.time_limit)

    def stoppable(self, spec: JobSpec) -> bool:
        """May the policy stop this job at once (not work kept to completion)?"""
        return not (self._keep_nonresumable and not spec.resumable)

    def may_borrow(self, spec: JobSpec, n: int, per: int, pool: NodePool) -> bool:
        """May this job, not a session, start on idle pool GPUs (rule 2)?  If the policy may
        stop it (then as lent work); or, work kept to completion, if it could never fit on the
        nodes outside the pool (then as ordinary work a session waits for: else it waits for
        ever)."""
        if self.stoppable(spec):
            return True
        t = spec.gpu_type
        outside = sum(1 for i in range(len(pool.total))
                      if i not in self.nodes and pool.total[i] >= per and (t is None or pool.gpu_type[i] == t))
        return outside < n

    def lent(self, spec: JobSpec, placement: tuple[tuple[int, int], ...]) -> bool:
        """Does a run of ``spec`` on ``placement`` hold lent pool GPUs (so it has no protection)?
        Only work the policy may stop, and not a session."""
        if not self.nodes or self.session(spec) or not self.stoppable(spec):
            return False
        return any(i in self.nodes for i, _ in placement)

    def off(self, allow: NodeFilter | None) -> NodeFilter:
        """``allow`` with the pool's nodes closed too (rule 3).  Always an ``Unreserved``, so
        the failed-search memos key a search by the nodes it kept off (``held_nodes``)."""
        if allow is not None and not isinstance(allow, Unreserved):  # pragma: no cover - allow_for makes only these
            raise TypeError(f"unexpected node filter {allow!r}")
        held = None if allow is None else allow.nodes
        got = self._off.get(held)
        if got is None:
            if len(self._off) >= OFF_KEPT:  # a value, not a fact: made again alike when asked again
                self._off = {}
            got = self._off[held] = Unreserved(self.nodes if held is None else held | self.nodes)
        return got

    def room(self, pool: NodePool, running: dict[str, Run]) -> int:
        """The most GPUs one healthy pool node has free or lent: no session needing more per
        node can start by rule 4 (the fast walk's bound).  Kept until the pool changes, and
        then each node's part (``node_room``) kept until that node changes
        (``NodePool.changed_at``: its free GPUs, its jobs and its health are all the part
        reads, and a run's ``lent`` never changes while it runs), so a change of one node
        reads one node, not the whole pool.  ``fresh_room`` is the plain definition."""
        if self._room_at == pool.version:
            return self._room
        seen, parts, at = self._node_seen, self._node_part, pool.changed_at
        best = 0
        for i in self.nodes:
            got = parts.get(i, 0)
            if seen.get(i, -1) != at[i]:
                got = parts[i] = self.node_room(pool, running, i)
                seen[i] = at[i]
            if got > best:
                best = got
        self._room, self._room_at = best, pool.version
        return best

    def node_room(self, pool: NodePool, running: dict[str, Run], i: int) -> int:
        """What pool node ``i`` has free or lent (0 when unhealthy)."""
        if not pool.healthy[i]:
            return 0
        got = pool.free[i]
        for jid, g in pool.jobs[i].items():
            if running[jid].lent:
                got += g
        return got

    def fresh_room(self, pool: NodePool, running: dict[str, Run]) -> int:
        """``room`` by its definition, keeping nothing: the reference the kept one is tested against."""
        best = 0
        for i in self.nodes:
            if pool.healthy[i]:
                got = pool.free[i] + sum(g for jid, g in pool.jobs[i].items() if running[jid].lent)
                best = max(best, got)
        return best

    def reclaim(self, pool: NodePool, running: dict[str, Run], spec: JobSpec, per: int,
                allow: NodeFilter | None) -> Lent | None:
        """Rule 4 for a session needing ``per`` GPUs on one node: the pool node (``allow``
        admits it, of the session's GPU type) where evicting lent jobs lets it fit at the fewest
        GPUs evicted, ties by node; the jobs youngest run first, then by id.  None: no pool
        node can hold it even with every lent job gone."""
        best: Lent | None = None
        cost = 0
        for i in sorted(self.nodes):
            if not pool.healthy[i] or pool.total[i] < per or (allow is not None and not allow(i)):
                continue
            if spec.gpu_type is not None and pool.gpu_type[i] != spec.gpu_type:
                continue
            free = pool.free[i]
            if free >= per:  # pragma: no cover - the session fits free GPUs and starts there first
                return Lent(i, [])
            lent = sorted((-running[jid].start, jid, g) for jid, g in pool.jobs[i].items()
                          if running[jid].lent)
            taken: list[str] = []
            freed = 0
            for _, jid, g in lent:
                if free + freed >= per:
                    break
                taken.append(jid)
                freed += g
            if free + freed >= per and (best is None or freed < cost):
                best, cost = Lent(i, taken), freed
        return best
