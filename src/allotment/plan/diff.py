"""Structural diff of two compiled configurations: what a budget pull request changes.

The diff works on compiled trees, not on YAML text, so a reformatted file is no change and a
moved file that defines the same node is no change either; what reviewers see is the budget
meaning: nodes added, removed, moved (new parent), renamed (same place, same owners, new name),
owners, raw shares, caps, cluster eligibility, members and validity dates, plus each cluster's
capacity.  Every other field of every file (inventory, policies, free text) comes from
``filediff``, which is derived from the models, so nothing a PR changes can go unseen.
Every list comes out sorted, so the same pair of configs always gives the same diff.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from allotment.compile.model import BudgetNode, CompiledConfig
from allotment.plan.filediff import FieldChange, file_changes

NodeChangeKind = Literal[
    "added", "removed", "moved", "renamed", "owners", "share", "cap", "clusters", "members", "dates"
]


@dataclass(frozen=True, slots=True, order=True)
class NodeChange:
    """One change to one node.  ``node`` is the head-side name (base-side for removals);
    ``before``/``after`` are short human strings, already formatted for a table."""

    node: str
    kind: NodeChangeKind
    before: str
    after: str
    parent_before: str | None
    parent_after: str | None

    @property
    def describe(self) -> str:
        """The change in words, for approval reasons and headlines."""
        words = {
            "added": f"{self.node} added",
            "removed": f"{self.node} removed",
            "moved": f"{self.node} moved from {self.before} to {self.after}",
            "renamed": f"{self.before} renamed to {self.after}",
        }
        return words.get(self.kind, f"{self.kind} of {self.node}")


@dataclass(frozen=True, slots=True, order=True)
class ClusterChange:
    """A cluster's capacity, compiled: what the headline of an inventory PR says."""

    cluster: str
    field: str  # "added", "removed", "gpus"
    before: str
    after: str


# node changes that move entitlement or scheduling (the others change who, not how much)
SCHEDULING_KINDS = frozenset({"added", "removed", "moved", "share", "cap", "clusters", "dates"})


@dataclass(frozen=True, slots=True)
class StructuralDiff:
    nodes: tuple[NodeChange, ...]
    clusters: tuple[ClusterChange, ...]
    renamed: tuple[tuple[str, str], ...] = ()  # (base name, head name)
    fields: tuple[FieldChange, ...] = ()  # every file field that differs (filediff)

    @property
    def platform_fields(self) -> tuple[FieldChange, ...]:
        return tuple(f for f in self.fields if f.platform)

    @property
    def empty(self) -> bool:
        return not (self.nodes or self.clusters or self.fields)

    @property
    def changes_scheduling(self) -> bool:
        """A share, cap, date, inventory or policy change: only then is simulating worth it."""
        return bool(
            self.clusters
            or self.platform_fields
            or any(c.kind in SCHEDULING_KINDS for c in self.nodes)
        )


def diff_configs(base: CompiledConfig, head: CompiledConfig) -> StructuralDiff:
    """The budget-tree and capacity diff of two compiled configs."""
    renamed: dict[str, str] = {}
    nodes = _node_changes(base, head, renamed)
    return StructuralDiff(
        nodes=tuple(sorted(nodes)),
        clusters=tuple(sorted(_cluster_changes(base, head))),
        renamed=tuple(sorted(renamed.items())),
    )


def diff_revisions(
    base: CompiledConfig,
    head: CompiledConfig,
    base_files: Mapping[str, bytes],
    head_files: Mapping[str, bytes],
) -> StructuralDiff:
    """``diff_configs`` plus every field of every file (what ``plan`` and ``audit`` use)."""
    return replace(diff_configs(base, head), fields=file_changes(base_files, head_files))


def _fmt_list(items: Iterable[str]) -> str:
    values = sorted(items)
    return ", ".join(values) if values else "(none)"


def _fmt_num(x: float | int | None) -> str:
    if x is None:
        return "(none)"
    if isinstance(x, float) and not x.is_integer():
        return f"{x:g}"
    return str(int(x))


def _renames(
    removed: list[BudgetNode], added: list[BudgetNode], rename_of: dict[str, str]
) -> dict[str, str]:
    """Pair removed and added nodes that are the same node under a new name.

    Same parent (after applying renames of ancestors), same leaf-ness, same owners and members:
    a reviewer would call that a rename.  Ambiguous candidates are left as remove + add.
    """
    pairs: dict[str, str] = {}
    taken: set[str] = set()

    def key(n: BudgetNode, parent: str | None) -> tuple[object, ...]:
        return (parent, n.leaf, tuple(sorted(n.owners)), tuple(sorted(n.members)))

    added_keys: dict[tuple[object, ...], list[BudgetNode]] = {}
    for a in added:
        added_keys.setdefault(key(a, a.parent), []).append(a)
    for r in sorted(removed, key=lambda n: n.path):
        parent = rename_of.get(r.parent, r.parent) if r.parent else None
        candidates = [a for a in added_keys.get(key(r, parent), []) if a.name not in taken]
        if len(candidates) == 1:
            pairs[r.name] = candidates[0].name
            rename_of[r.name] = candidates[0].name
            taken.add(candidates[0].name)
    return pairs


def _node_changes(
    base: CompiledConfig, head: CompiledConfig, renamed_out: dict[str, str]
) -> list[NodeChange]:
    b = {n.name: n for n in base.nodes}
    h = {n.name: n for n in head.nodes}
    removed = [b[x] for x in b if x not in h]
    added = [h[x] for x in h if x not in b]
    rename_of: dict[str, str] = {}
    renamed = _renames(removed, added, rename_of)
    renamed_out.update(renamed)
    back = {new: old for old, new in renamed.items()}
    out: list[NodeChange] = []
    for old, new in renamed.items():
        out.append(NodeChange(new, "renamed", old, new, b[old].parent, h[new].parent))
    for n in removed:
        if n.name not in renamed:
            out.append(NodeChange(n.name, "removed", n.path, "", n.parent, None))
    for n in added:
        if n.name not in back:
            out.append(NodeChange(n.name, "added", "", n.path, None, n.parent))
    pairs = [(b[x], h[x]) for x in b if x in h] + [(b[o], h[n]) for o, n in renamed.items()]
    for before, after in pairs:
        out.extend(_compare(before, after, rename_of))
    return out


def _compare(old: BudgetNode, new: BudgetNode, rename_of: dict[str, str]) -> list[NodeChange]:
    out: list[NodeChange] = []
    pb, pa = old.parent, new.parent

    def add(kind: NodeChangeKind, before: str, after: str) -> None:
        out.append(NodeChange(new.name, kind, before, after, pb, pa))

    if (rename_of.get(pb, pb) if pb else None) != pa:
        add("moved", pb or "(root)", pa or "(root)")
    if sorted(old.owners) != sorted(new.owners):
        add("owners", _fmt_list(old.owners), _fmt_list(new.owners))
    if old.weight != new.weight or abs(old.share - new.share) > 1e-12:
        add(
            "share",
            f"{_fmt_num(old.weight)} ({old.share:.1%})",
            f"{_fmt_num(new.weight)} ({new.share:.1%})",
        )
    if old.max_gpus != new.max_gpus:
        add("cap", _fmt_num(old.max_gpus), _fmt_num(new.max_gpus))
    if sorted(old.clusters) != sorted(new.clusters):
        add("clusters", _fmt_list(old.clusters), _fmt_list(new.clusters))
    if sorted(old.members) != sorted(new.members):
        add("members", _fmt_list(old.members), _fmt_list(new.members))
    if (old.start, old.end, old.active) != (new.start, new.end, new.active):
        add("dates", _fmt_dates(old), _fmt_dates(new))
    return out


def _fmt_dates(n: BudgetNode) -> str:
    span = f"{n.start or '…'} to {n.end or '…'}"
    return span if n.active else f"{span} (inactive)"


def _cluster_changes(base: CompiledConfig, head: CompiledConfig) -> list[ClusterChange]:
    out: list[ClusterChange] = []
    for name in sorted(set(base.clusters) | set(head.clusters)):
        old, new = base.clusters.get(name), head.clusters.get(name)
        if old is None and new is not None:
            out.append(ClusterChange(name, "added", "", f"{new.gpus} GPUs"))
        elif new is None and old is not None:
            out.append(ClusterChange(name, "removed", f"{old.gpus} GPUs", ""))
        elif old is not None and new is not None and old.gpus != new.gpus:
            out.append(ClusterChange(name, "gpus", str(old.gpus), str(new.gpus)))
    return out
