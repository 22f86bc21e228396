"""What an import found, accumulated while streaming, and how it is shown to a person.

``ImportStats`` keeps only aggregates (per account, per user-in-account, per GPU type, a heap of
running jobs for peak demand) so its memory grows with the number of accounts and concurrent
jobs, never with the file.  ``--repo-out`` sizes shares and the cluster from it.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from allotment.core.jobs import JobSpec
from allotment.traces.importers.base import NodeGroupShape


@dataclass(slots=True)
class ImportStats:
    jobs: int = 0
    gpu_seconds: float = 0.0
    last_submit: float = 0.0
    last_end: float = 0.0
    max_job_gpus: int = 0
    max_gpus_per_node: int = 0
    peak_demand_gpus: int = 0
    account_gpu_seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    account_jobs: Counter[str] = field(default_factory=Counter)
    user_account_gpu_seconds: defaultdict[tuple[str, str], float] = field(
        default_factory=lambda: defaultdict(float)
    )
    gpu_type_gpu_seconds: defaultdict[str, float] = field(
        default_factory=lambda: defaultdict(float)
    )
    gpu_type_max_job_gpus: Counter[str] = field(default_factory=Counter)
    gpu_type_max_gpus_per_node: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    unallocated: int = 0
    _running: list[tuple[float, int]] = field(default_factory=list)
    _demand: int = 0

    def add(self, job: JobSpec) -> None:
        """Account for one job; jobs must arrive in submit order (they do: the trace is sorted)."""
        self.jobs += 1
        gs = job.gpus * job.work
        self.gpu_seconds += gs
        self.last_submit = job.submit
        end = job.submit + job.work
        self.last_end = max(self.last_end, end)
        self.max_job_gpus = max(self.max_job_gpus, job.gpus)
        if job.gpus_per_node:
            self.max_gpus_per_node = max(self.max_gpus_per_node, job.gpus_per_node)
        self.account_gpu_seconds[job.account] += gs
        self.account_jobs[job.account] += 1
        if job.user:
            self.user_account_gpu_seconds[(job.user, job.account)] += gs
        if job.gpu_type:
            self.gpu_type_gpu_seconds[job.gpu_type] += gs
            t = job.gpu_type
            self.gpu_type_max_job_gpus[t] = max(self.gpu_type_max_job_gpus[t], job.gpus)
            if job.gpus_per_node:
                self.gpu_type_max_gpus_per_node[t] = max(
                    self.gpu_type_max_gpus_per_node[t], job.gpus_per_node
                )
        self.kinds[job.kind] += 1
        if job.min_runtime == 0:
            self.unallocated += 1
        # offered load if nobody ever waited: the demand the trace itself implies
        while self._running and self._running[0][0] <= job.submit:
            self._demand -= heapq.heappop(self._running)[1]
        heapq.heappush(self._running, (end, job.gpus))
        self._demand += job.gpus
        self.peak_demand_gpus = max(self.peak_demand_gpus, self._demand)

    @property
    def users(self) -> int:
        return len({u for u, _ in self.user_account_gpu_seconds})


@dataclass(frozen=True, slots=True)
class ImportResult:
    format: str
    source: str
    output: str
    records: int
    stats: ImportStats
    skipped: dict[str, int]
    notes: dict[str, int]
    cluster: tuple[NodeGroupShape, ...]
    cluster_source: str
    start_iso: str | None
    renamed_accounts: dict[str, str]

    @property
    def imported(self) -> int:
        return self.stats.jobs


def _days(seconds: float) -> str:
    return f"{seconds / 86400:.1f} days"


def render_summary(r: ImportResult) -> str:
    """The lines ``allot trace import`` prints (stable order, thousands separators)."""
    s = r.stats
    out = [
        f"imported {r.imported:,} of {r.records:,} records from {r.source} ({r.format}) into {r.output}"
    ]
    for reason, n in sorted(r.skipped.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"  skipped {n:>9,}  {reason}")
    for what, n in sorted(r.notes.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"  kept    {n:>9,}  {what}")
    start = f", starting {r.start_iso}" if r.start_iso else ""
    out.append(
        f"span: {_days(s.last_end)} (last submit at {_days(s.last_submit)}){start}; "
        f"{len(s.account_gpu_seconds):,} accounts, {s.users:,} users"
    )
    kinds = ", ".join(f"{k} {n:,}" for k, n in sorted(s.kinds.items())) or "none"
    out.append(f"kinds: {kinds}; unallocated (min_runtime 0): {s.unallocated:,}")
    out.append(
        f"GPUs: largest job {s.max_job_gpus:,}, peak demand {s.peak_demand_gpus:,}, "
        f"{s.gpu_seconds / 3600:,.0f} GPU-hours"
    )
    if r.cluster:
        gpus = sum(g.gpus_per_node * g.count for g in r.cluster)
        nodes = sum(g.count for g in r.cluster)
        out.append(f"cluster: {gpus:,} GPUs on {nodes:,} nodes ({r.cluster_source})")
    for raw, name in sorted(r.renamed_accounts.items()):
        out.append(f"  account {raw!r} written as {name!r}")
    return "\n".join(out) + "\n"
