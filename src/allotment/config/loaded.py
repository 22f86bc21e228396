"""What ``load_config`` returns: every file validated and cross-checked, not yet compiled.

Positions (``Where``) travel with the values the compiler may still warn about, so its warnings
land on the right line too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from allotment.config.models.budget import ChildEntry
from allotment.config.models.inventory import ClusterFile, GpuTypeEntry, MaintenanceEntry
from allotment.config.models.policy import BoostsFile, SchedulerFile
from allotment.config.sourcemap import DocPath, SourceMap
from allotment.errors import Diagnostic


@dataclass(frozen=True, slots=True)
class Where:
    file: str
    line: int
    col: int

    def diagnostic(self, message: str, severity: str = "error") -> Diagnostic:
        return Diagnostic(
            self.file, self.line, self.col, message, "warning" if severity == "warning" else "error"
        )


@dataclass(frozen=True, slots=True)
class Located:
    """A place in a document whose line and column are looked up only when asked for, so a
    valid config never pays for building positions (see ``SourceMap``)."""

    smap: SourceMap
    path: DocPath
    at_key: bool = False

    def where(self) -> Where:
        line, col = self.smap.key(self.path) if self.at_key else self.smap.value(self.path)
        return Where(self.smap.file, line, col)

    def diagnostic(self, message: str, severity: str = "error") -> Diagnostic:
        return self.where().diagnostic(message, severity)


@dataclass(frozen=True, slots=True)
class LoadedNode:
    """One budget node.  ``terms`` (share, clusters, dates, cap) come from the parent's file and
    ``terms_at`` points at them there; the root has no terms."""

    name: str
    path: str  # "ai2/nlp/olmo", the folder under budgets/
    parent: str | None
    source: str  # this node's own budget.yaml
    owners: tuple[str, ...]
    description: str | None
    children: tuple[str, ...]  # sorted by name
    members: tuple[str, ...]
    default_for: tuple[str, ...]
    terms: ChildEntry | None
    terms_at: Located | None
    clusters: tuple[str, ...]  # effective: own restriction intersected with the parent's

    @property
    def leaf(self) -> bool:
        return not self.children


@dataclass(frozen=True, slots=True)
class LoadedGroup:
    name: str
    gpu_type: str
    gpus_per_node: int
    node_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LoadedMaintenance:
    entry: MaintenanceEntry
    nodes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LoadedCluster:
    name: str
    source: str
    model: ClusterFile
    groups: tuple[LoadedGroup, ...]
    maintenance: tuple[LoadedMaintenance, ...]


@dataclass(frozen=True, slots=True)
class LoadedUser:
    name: str
    accounts: tuple[str, ...]  # leaf names, sorted
    default_account: str


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    inputs_sha256: str
    root: str
    nodes: tuple[LoadedNode, ...]  # pre-order, siblings by name
    gpu_types: Mapping[str, GpuTypeEntry]
    clusters: Mapping[str, LoadedCluster]  # by name, sorted
    users: Mapping[str, LoadedUser]  # by name, sorted
    scheduler: SchedulerFile
    scheduler_source: str | None
    boosts: BoostsFile
    boosts_at: tuple[Located, ...]  # each boost's place, same order
    warnings: tuple[Diagnostic, ...]
