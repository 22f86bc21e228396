"""Where jobs go: free GPUs per node kept in buckets by free count, so best fit is a short scan.

Rules: a job that fits one node goes on one node, best fit (the healthy node with the fewest free
GPUs that still fits, ties by node order); a gang (multi-node job) takes ``n`` nodes with at least
``per_node`` free each, all or nothing, preferring nodes it fills completely.  Unhealthy nodes are
out of the buckets and take no new work.
"""

from __future__ import annotations

from collections.abc import Callable

from allotment.core.jobs import JobSpec
from allotment.core.snapshot import NodeState

NodeFilter = Callable[[int], bool]


class NodePool:
    def __init__(self, nodes: tuple[NodeState, ...]) -> None:
        ordered = sorted(nodes, key=lambda n: n.name)
        self.names: list[str] = [n.name for n in ordered]
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}
        self.total: list[int] = [n.gpus for n in ordered]
        self.free: list[int] = [n.gpus for n in ordered]
        self.healthy: list[bool] = [n.healthy for n in ordered]
        self.gpu_type: list[str | None] = [n.gpu_type for n in ordered]
        self.jobs: list[dict[str, int]] = [{} for _ in ordered]
        self.max_gpus = max(self.total, default=0)
        self.buckets: list[dict[int, None]] = [{} for _ in range(self.max_gpus + 1)]
        self.homogeneous = len({(n.gpus, n.gpu_type) for n in ordered}) <= 1
        self.healthy_total = sum(n.gpus for n in ordered if n.healthy)
        self.free_healthy = self.healthy_total
        self.soft: list[int] = [0 for _ in ordered]  # GPUs held by unallocated (preemptible) work
        self.version = 0
        # per node, the ``version`` at which its free GPUs, jobs or health last changed: what a
        # per-node answer kept across versions compares (``SessionPool.room``)
        self.changed_at: list[int] = [0 for _ in ordered]
        self._mf, self._mf_version = 0, -1
        self._shapes: dict[tuple[int, int | None, str | None], tuple[int, int]] = {}
        self._hosts: dict[str | None, list[list[int] | None]] = {}  # by type, then by GPUs per node
        self._host_flags: dict[str | None, list[list[bool] | None]] = {}
        # healthy nodes counted by GPUs free-or-held-by-unallocated-work ("soft free")
        self.soft_count: list[int] = [0] * (self.max_gpus + 1)
        self.soft_whole = 0  # healthy nodes holding nothing but unallocated work
        for i in range(len(ordered)):
            if self.healthy[i]:
                self._soft_add(i, 1)
        for i in range(len(ordered)):
            if self.healthy[i]:
                self.buckets[self.free[i]][i] = None

    # -- bookkeeping -------------------------------------------------------------------------
    def free_gpus(self) -> int:
        """Free GPUs on healthy nodes."""
        return self.free_healthy

    def _soft_add(self, i: int, sign: int) -> None:
        f = self.free[i] + self.soft[i]
        self.soft_count[f] += sign
        if f == self.total[i]:
            self.soft_whole += sign

    def _rebucket(self, i: int, new_free: int) -> None:
        if self.healthy[i]:
            del self.buckets[self.free[i]][i]
            self.buckets[new_free][i] = None
            self.free_healthy += new_free - self.free[i]
        self.free[i] = new_free

    def allocate(self, job_id: str, placement: tuple[tuple[int, int], ...], soft: bool = False) -> None:
        self.version += 1
        for i, g in placement:
            if g > self.free[i]:
                raise ValueError(f"node {self.names[i]} oversubscribed by {job_id}")
            h = self.healthy[i]
            if h:
                self._soft_add(i, -1)
            self._rebucket(i, self.free[i] - g)
            self.jobs[i][job_id] = g
            self.changed_at[i] = self.version
            if soft:
                self.soft[i] += g
            if h:
                self._soft_add(i, 1)

    def release(self, job_id: str, placement: tuple[tuple[int, int], ...], soft: bool = False) -> None:
        self.version += 1
        for i, g in placement:
            h = self.healthy[i]
            if h:
                self._soft_add(i, -1)
            del self.jobs[i][job_id]
            self._rebucket(i, self.free[i] + g)
            self.changed_at[i] = self.version
            if soft:
                self.soft[i] -= g
            if h:
                self._soft_add(i, 1)

    def set_health(self, i: int, healthy: bool) -> None:
        if healthy == self.healthy[i]:
            return
        self.version += 1
        self.changed_at[i] = self.version
        self._hosts.clear()
        self._host_flags.clear()
        if healthy:
            self.buckets[self.free[i]][i] = None
            self.healthy_total += self.total[i]
            self.free_healthy += self.free[i]
            self.healthy[i] = True
            self._soft_add(i, 1)
        else:
            self._soft_add(i, -1)
            del self.buckets[self.free[i]][i]
            self.healthy_total -= self.total[i]
            self.free_healthy -= self.free[i]
            self.healthy[i] = False

    # -- queries -----------------------------------------------------------------------------
    def shape(self, spec: JobSpec) -> tuple[int, int]:
        """(nodes, GPUs per node) of a job on this pool; (0, 0) if it can never fit."""
        key = (spec.gpus, spec.gpus_per_node, spec.gpu_type)
        got = self._shapes.get(key)
        if got is None:
            got = self._shapes[key] = self._shape(spec)
        return got

    def _shape(self, spec: JobSpec) -> tuple[int, int]:
        cap = (
            self.max_gpus
            if spec.gpu_type is None
            else max(
                (t for t, g in zip(self.total, self.gpu_type, strict=True) if g == spec.gpu_type),
                default=0,
            )
        )
        if cap == 0 or spec.gpus <= 0:
            return (0, 0)
        per = spec.gpus_per_node
        if per is None:
            per = spec.gpus if spec.gpus <= cap else cap
        if per > cap:
            return (0, 0)
        n = -(-spec.gpus // per)
        if n > len(self.names):
            return (0, 0)
        return (n, per)

    def hosts(self, per: int, gpu_type: str | None) -> list[int]:
        """Healthy nodes with at least ``per`` GPUs of ``gpu_type`` (any type if None), busy or
        not: where a job of that shape could ever be placed right now.  Cached until a node's
        health changes, per type by ``per`` (a list index, not a tuple key hashed per call);
        callers must not modify the list."""
        if per > self.max_gpus:
            return []
        per = max(per, 0)  # every node has at least 0 GPUs
        by = self._hosts.get(gpu_type)
        if by is None:
            by = self._hosts[gpu_type] = [None] * (self.max_gpus + 1)
        got = by[per]
        if got is None:
            total, healthy, types = self.total, self.healthy, self.gpu_type
            got = by[per] = [
                i
                for i in range(len(total))
                if healthy[i] and total[i] >= per and (gpu_type is None or types[i] == gpu_type)
            ]
        return got

    def host_flags(self, per: int, gpu_type: str | None) -> list[bool]:
        """Per node: is it one of ``hosts(per, gpu_type)``?  Cached like ``hosts``."""
        if per > self.max_gpus:
            return [False] * len(self.names)
        per = max(per, 0)
        by = self._host_flags.get(gpu_type)
        if by is None:
            by = self._host_flags[gpu_type] = [None] * (self.max_gpus + 1)
        got = by[per]
        if got is None:
            got = by[per] = [False] * len(self.names)
            for i in self.hosts(per, gpu_type):
                got[i] = True
        return got

    def free_at_least(self, per: int) -> list[int]:
        """Healthy nodes with at least ``per`` free GPUs, in no particular order."""
        return [i for k in range(max(per, 0), self.max_gpus + 1) for i in self.buckets[k]]

    def find(
        self, spec: JobSpec, n: int, per: int, allow: NodeFilter | None = None
    ) -> tuple[tuple[int, int], ...] | None:
        """Best-fit placement of ``n`` x ``per`` GPUs (the last node may take fewer), or None."""
        chosen: list[int] = []
        last = spec.gpus - per * (n - 1)
        gpu_type = spec.gpu_type  # read once: JobSpec is interpreted, a generic attribute lookup
        types = self.gpu_type
        for k in range(per, self.max_gpus + 1):
            b = self.buckets[k]
            if not b:
                continue
            cands = (
                sorted(b)
                if n > 1
                else [min(b)]
                if allow is None and self.homogeneous
                else sorted(b)
            )
            for i in cands:
                if (allow is None or allow(i)) and (gpu_type is None or types[i] == gpu_type):
                    chosen.append(i)
                    if len(chosen) == n:
                        break
            if len(chosen) == n:
                break
        if len(chosen) < n:
            return None
        chosen.sort()
        return tuple((i, per if j < n - 1 else last) for j, i in enumerate(chosen))

    def soft_reaching(self, per: int) -> int:
        """How many healthy nodes have at least ``per`` GPUs free or held by unallocated work
        (``soft_count``'s tail: one read per value from ``per`` to the largest node): more than a
        search that may take only unallocated work could ever free to ``per``, for a gang as for
        one node (``victims.find_victims``'s first bounds)."""
        counts = self.soft_count
        k = 0
        for g in range(max(per, 0), len(counts)):
            k += counts[g]
        return k

    def max_free_outside(self, nodes: frozenset[int]) -> int:
        """The most free GPUs on one healthy node not in ``nodes`` (a reservation's)."""
        for k in range(self.max_gpus, 0, -1):
            for i in self.buckets[k]:
                if i not in nodes:
                    return k
        return 0

    def max_free(self) -> int:
        """The most free GPUs on one healthy node (cached until the pool changes)."""
        if self._mf_version == self.version:
            return self._mf
        mf = 0
        for k in range(self.max_gpus, 0, -1):
            if self.buckets[k]:
                mf = k
                break
        self._mf, self._mf_version = mf, self.version
        return mf
