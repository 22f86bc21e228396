"""Assemble the budget tree from the folder layout and check it as a whole.

The folder tree under ``budgets/`` is the budget tree: node N is the folder ``budgets/.../N`` and
its ``budget.yaml``.  A child exists only when both hold: a sub-folder with its own ``budget.yaml``
AND an entry under the parent's ``children`` (its share lives there, in a file the parent's owners
own).  Either half alone is an error, reported where the fix belongs.  Because parents are folders,
a cycle cannot be written down; symbolic links, the only way to fake one, are refused on reading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from allotment.config.loaded import LoadedNode, LoadedUser, Located, Where
from allotment.config.models.budget import BudgetFile
from allotment.config.models.common import EMAIL_PATTERN, NAME_PATTERN
from allotment.config.sourcemap import SourceMap
from allotment.config.target_names import target_name_problem
from allotment.config.users import Memberships
from allotment.errors import Diagnostic

_NAME = re.compile(NAME_PATTERN)
_EMAIL = re.compile(EMAIL_PATTERN)
FILE = "budget.yaml"
MAX_TREE_DEPTH = 16  # levels below the root; org > program > project > team uses 3


def _dir(path: str) -> str:
    return path.rsplit("/", 1)[0]


def _at(smap: SourceMap, *path: str | int, key: bool = False) -> Where:
    line, col = smap.key(path) if key else smap.value(path)
    return Where(smap.file, line, col)


def build_tree(
    budgets: Mapping[str, tuple[BudgetFile, SourceMap]],
    all_budget_files: set[str],
    cluster_names: tuple[str, ...],
) -> tuple[tuple[LoadedNode, ...], str, list[Diagnostic], dict[str, LoadedUser]]:
    """Return (nodes in pre-order, root name, diagnostics incl. warnings, users)."""
    diags: list[Diagnostic] = []
    node_dirs = {_dir(p) for p in all_budget_files}
    roots = sorted(d for d in node_dirs if d.count("/") == 1)
    if not roots:
        return (
            (),
            "",
            [Diagnostic("budgets", 0, 0, "no budget tree: expected budgets/<org>/budget.yaml")],
            {},
        )
    for extra in roots[1:]:
        diags.append(
            Diagnostic(
                f"{extra}/{FILE}",
                1,
                1,
                f"a second organisation root; the tree already has {roots[0]}/",
            )
        )
    root_dir = roots[0]

    # A hostile tree could nest folders deeper than anyone needs (and than recursion allows).
    too_deep = {d for d in node_dirs if d.count("/") - 1 > MAX_TREE_DEPTH}
    for d in sorted(too_deep):
        diags.append(
            Diagnostic(f"{d}/{FILE}", 1, 1, f"budget tree deeper than {MAX_TREE_DEPTH} levels")
        )
    node_dirs -= too_deep
    budgets = {p: v for p, v in budgets.items() if _dir(p) not in too_deep}
    all_budget_files = {p for p in all_budget_files if _dir(p) not in too_deep}

    # Every folder with a budget.yaml must be listed by its parent, and named validly.
    names: dict[str, str] = {}
    for d in sorted(node_dirs):
        name = d.rsplit("/", 1)[1]
        file = f"{d}/{FILE}"
        if not _NAME.match(name):
            diags.append(
                Diagnostic(
                    file,
                    1,
                    1,
                    f"folder name {name!r} is not a valid node name "
                    "(lowercase letters, digits, - and _, starting with a letter)",
                )
            )
        if name in names:
            diags.append(
                Diagnostic(file, 1, 1, f"duplicate node name '{name}' (also {names[name]}/{FILE})")
            )
        else:
            names[name] = d
        if d.count("/") <= 1:
            continue
        parent_dir = _dir(d)
        if parent_dir not in node_dirs:
            diags.append(Diagnostic(file, 1, 1, f"parent folder {parent_dir}/ has no {FILE}"))
            continue
        parent = budgets.get(f"{parent_dir}/{FILE}")
        if parent is not None and name not in parent[0].children:
            diags.append(
                Diagnostic(
                    file,
                    1,
                    1,
                    f"node '{name}' is not listed under 'children' "
                    f"in {parent_dir}/{FILE}; add it there with its share",
                )
            )

    nodes: list[LoadedNode] = []
    members = Memberships()

    def visit(
        d: str,
        parent: LoadedNode | None,
        terms_from: tuple[BudgetFile, SourceMap] | None,
        allowed: tuple[str, ...],
    ) -> None:
        name = d.rsplit("/", 1)[1]
        got = budgets.get(f"{d}/{FILE}")
        if got is None:
            return  # its own errors are already reported
        model, smap = got
        file = smap.file
        terms = terms_at = None
        clusters = allowed
        if terms_from is not None and parent is not None:
            pmodel, psmap = terms_from
            terms = pmodel.children[name]
            terms_at = Located(psmap, ("children", name), at_key=True)
            if terms.clusters is not None:
                for i, c in enumerate(terms.clusters):
                    if c not in cluster_names:
                        diags.append(
                            _at(psmap, "children", name, "clusters", i).diagnostic(
                                f"unknown cluster '{c}' (known: {', '.join(cluster_names)})"
                            )
                        )
                    elif c not in allowed:
                        diags.append(
                            _at(psmap, "children", name, "clusters", i).diagnostic(
                                f"cluster '{c}' is not available to '{parent.name}' "
                                f"(it may use: {', '.join(allowed) or 'none'})"
                            )
                        )
                clusters = tuple(c for c in allowed if c in terms.clusters)
            if terms.start and terms.end and terms.end < terms.start:
                diags.append(
                    _at(psmap, "children", name, "end").diagnostic(
                        f"end {terms.end} is before start {terms.start}"
                    )
                )
        problem = target_name_problem(name)
        if problem is not None:  # at the parent's key (the root: its own file)
            where = terms_at.where() if terms_at is not None else Where(file, 1, 1)
            diags.append(where.diagnostic(f"node name {problem}"))
        _check_owners(model, smap, name, diags)
        children = tuple(sorted(model.children))
        if children and model.members:
            diags.append(
                _at(smap, "members", key=True).diagnostic(
                    f"node '{name}' has children, so it cannot have members; "
                    "members belong to leaves"
                )
            )
        if children and model.default_for:
            diags.append(
                _at(smap, "default_for", key=True).diagnostic("default_for belongs to leaves")
            )
        if not children:
            if not model.members:
                diags.append(Diagnostic(file, 1, 1, f"leaf '{name}' has no members", "warning"))
            members.add_leaf(name, model, smap)
        node = LoadedNode(
            name=name,
            path=d.split("/", 1)[1],
            parent=parent.name if parent else None,
            source=file,
            owners=tuple(model.owners),
            description=model.description,
            children=children,
            members=tuple(model.members),
            default_for=tuple(model.default_for),
            terms=terms,
            terms_at=terms_at,
            clusters=clusters,
        )
        nodes.append(node)
        for child in children:
            child_dir = f"{d}/{child}"
            if child_dir in too_deep:
                continue  # already reported
            if f"{child_dir}/{FILE}" not in all_budget_files:
                diags.append(
                    _at(smap, "children", child, key=True).diagnostic(
                        f"child '{child}' has no file {child_dir}/{FILE}"
                    )
                )
                continue
            visit(child_dir, node, got, clusters)

    visit(root_dir, None, None, cluster_names)
    diags.extend(members.check())
    return tuple(nodes), root_dir.split("/", 1)[1], diags, members.users()


def _check_owners(model: BudgetFile, smap: SourceMap, name: str, diags: list[Diagnostic]) -> None:
    if not model.owners:
        where = (
            _at(smap, "owners", key=True) if ("owners",) in smap.keys else Where(smap.file, 1, 1)
        )
        diags.append(where.diagnostic(f"node '{name}' has no owners; list at least one e-mail"))
    elif not any(_EMAIL.match(o) for o in model.owners):
        diags.append(
            _at(smap, "owners").diagnostic(
                f"node '{name}' needs at least one e-mail owner (approvals are matched by e-mail)"
            )
        )
    seen: set[str] = set()
    for i, o in enumerate(model.owners):
        if o.lower() in seen:
            diags.append(_at(smap, "owners", i).diagnostic(f"owner {o} is listed twice"))
        seen.add(o.lower())
