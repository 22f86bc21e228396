"""``inventory/gpu_types.yaml`` and ``inventory/clusters/<cluster>.yaml``: the hardware."""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from allotment.config.models.common import Name, Strict, Text


class GpuTypeEntry(Strict):
    billing_weight: float = Field(
        gt=0, description="Reference GPU-hours charged for one hour of this GPU type."
    )
    description: Text | None = None


class GpuTypesFile(Strict):
    gpu_types: dict[Name, GpuTypeEntry] = Field(min_length=1)


class NodeGroupEntry(Strict):
    """Nodes of one kind.  Names come from ``prefix`` + zero-padded index (``count`` of them,
    from ``first_index``, ``digits`` wide), or from a Slurm hostlist in ``nodes`` (``n[1-4]``)."""

    name: Name
    gpu_type: Name
    gpus_per_node: int = Field(gt=0, le=64)
    count: int | None = Field(default=None, gt=0, le=100_000)
    prefix: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9-]{0,30}$")
    digits: int = Field(default=3, ge=1, le=8)
    first_index: int = Field(default=1, ge=0)
    nodes: str | None = Field(default=None, max_length=1000, description="Slurm hostlist.")


class MaintenanceEntry(Strict):
    nodes: list[str] = Field(min_length=1, description="Node names or hostlists.")
    start: AwareDatetime
    end: AwareDatetime
    reason: Text


class ClusterFile(Strict):
    """One cluster; the file name is the cluster's name."""

    description: Text | None = None
    node_groups: list[NodeGroupEntry] = Field(min_length=1)
    maintenance: list[MaintenanceEntry] = Field(default_factory=list)
    health_file: str | None = Field(default=None, max_length=1000)
    health_command: str | None = Field(default=None, max_length=1000)
