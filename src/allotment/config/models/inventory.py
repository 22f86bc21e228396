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
    gpu_types: dict[Name, GpuTypeEntry] = Field(min_length=1, description="GPU types by name.")


class NodeGroupEntry(Strict):
    """Nodes of one kind.  Names come from ``prefix`` + zero-padded index (``count`` of them,
    from ``first_index``, ``digits`` wide), or from a Slurm hostlist in ``nodes`` (``n[1-4]``)."""

    name: Name = Field(description="Unique within the cluster.")
    gpu_type: Name = Field(description="A key of inventory/gpu_types.yaml.")
    gpus_per_node: int = Field(gt=0, le=64)
    count: int | None = Field(default=None, gt=0, le=100_000, description="Number of nodes.")
    prefix: str | None = Field(
        default=None, pattern=r"^[a-z][a-z0-9-]{0,30}$", description="Node name prefix."
    )
    digits: int = Field(default=3, ge=1, le=8, description="Zero-padded index width.")
    first_index: int = Field(default=1, ge=0, description="Index of the first node.")
    nodes: str | None = Field(default=None, max_length=1000, description="Slurm hostlist.")


class MaintenanceEntry(Strict):
    nodes: list[str] = Field(min_length=1, description="Node names or hostlists.")
    start: AwareDatetime = Field(description="Out of service from (with zone).")
    end: AwareDatetime = Field(description="Back in service at (with zone).")
    reason: Text = Field(description="Shown in status and drain reasons.")


class ClusterFile(Strict):
    """One cluster; the file name is the cluster's name."""

    description: Text | None = None
    node_groups: list[NodeGroupEntry] = Field(min_length=1, description="The cluster's nodes.")
    maintenance: list[MaintenanceEntry] = Field(
        default_factory=list, description="Planned maintenance windows."
    )
    health_file: str | None = Field(
        default=None, max_length=1000, description="File of 'node state' lines for the reconciler."
    )
    health_command: str | None = Field(
        default=None,
        max_length=1000,
        description="Command printing the same; run only by the platform team's reconciler.",
    )
