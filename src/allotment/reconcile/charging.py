"""What goes into the usage ledger: allocated runs, weighted by their node's GPU type.

Two sources, both idempotent (the ledger keeps the largest value per job, run and bucket):
live observations (every running allocated job up to the backend's "now") and the backend's
history of finished runs since the last observation (``Backend.history``, ``sacct`` on Slurm),
which charges what ended between two ticks or while the reconciler was down, up to its real
end.  Unallocated work (minimum runtime 0) is never charged.
"""

from __future__ import annotations

from collections.abc import Iterable

from allotment.backends.protocol import FinishedRun, Observation
from allotment.compile.model import CompiledConfig
from allotment.reconcile.active import node_types
from allotment.reconcile.ledger import RunObs


def _weight(config: CompiledConfig, types: dict[str, str], nodes: tuple[str, ...]) -> float:
    gpu_type = types.get(nodes[0]) if nodes else None
    gt = config.gpu_types.get(gpu_type) if gpu_type else None
    return gt.billing_weight if gt else 1.0


def observed_runs(obs: Observation, config: CompiledConfig, cluster: str) -> list[RunObs]:
    types = node_types(config, cluster)
    return [
        RunObs(j.id, j.account, j.start, obs.at, j.gpus, _weight(config, types, j.nodes))
        for j in obs.running()
        if j.start is not None and j.min_runtime_s != 0
    ]


def finished_runs(
    runs: Iterable[FinishedRun], config: CompiledConfig, cluster: str
) -> list[RunObs]:
    types = node_types(config, cluster)
    return [
        RunObs(r.id, r.account, r.start, r.end, r.gpus, _weight(config, types, r.nodes))
        for r in runs
        if r.min_runtime_s != 0 and r.gpus > 0
    ]
