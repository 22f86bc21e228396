"""A small budget repository written as real YAML (and committed to git), for reconciler tests.

org (proga 60: teama1 40, teama2 20; teamb 40); cluster ``gpulab`` = n[1-4] x 8 GPUs; user
``root`` in every leaf (Slurm integration tests submit as root).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import git

DEFAULT_SHARES: dict[str, float] = {"proga": 60, "teamb": 40, "teama1": 40, "teama2": 20}
ACTOR = git.Actor("Test", "test@example.com")


def write_repo(
    root: Path,
    shares: Mapping[str, float] = DEFAULT_SHARES,
    *,
    drift: str = "correct",
    prune: bool = False,
    health_file: str | None = None,
    extra_leaf: str | None = None,
    min_runtime_cap: str = "8h",
    default_min_runtime: str = "2h",
    fairshare_period: str | None = None,
    extra_policy: str = "",
) -> None:
    files: dict[str, str] = {
        "inventory/gpu_types.yaml": "gpu_types:\n  gpu:\n    billing_weight: 1.0\n",
        "inventory/clusters/gpulab.yaml": (
            "node_groups:\n  - name: main\n    gpu_type: gpu\n    gpus_per_node: 8\n    nodes: n[1-4]\n"
            + (f"health_file: {health_file}\n" if health_file else "")
        ),
        "policies/scheduler.yaml": (
            f"drift: {drift}\nprune: {'true' if prune else 'false'}\n"
            f"min_runtime_cap: {min_runtime_cap}\ndefault_min_runtime: {default_min_runtime}\n"
            + (f"fairshare_period: {fairshare_period}\n" if fairshare_period else "")
            + extra_policy
        ),
        "budgets/org/budget.yaml": _node({"proga": shares["proga"], "teamb": shares["teamb"]}),
        "budgets/org/proga/budget.yaml": _node(
            {"teama1": shares["teama1"], "teama2": shares["teama2"]}
            | ({extra_leaf: 10} if extra_leaf else {})
        ),
        "budgets/org/proga/teama1/budget.yaml": _leaf(default=True),
        "budgets/org/proga/teama2/budget.yaml": _leaf(),
        "budgets/org/teamb/budget.yaml": _leaf(),
    }
    if extra_leaf:
        files[f"budgets/org/proga/{extra_leaf}/budget.yaml"] = _leaf()
    for d in ("budgets", "inventory", "policies"):
        for old in sorted((root / d).rglob("*.yaml")) if (root / d).exists() else []:
            old.unlink()
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def _node(children: Mapping[str, float]) -> str:
    lines = ["owners:\n  - lead@example.com\n", "children:\n"]
    for name, share in children.items():
        lines.append(f"  {name}:\n    share: {share:g}\n")
    return "".join(lines)


def _leaf(*, default: bool = False) -> str:
    text = "owners:\n  - lead@example.com\nmembers:\n  - root\n"
    return text + ("default_for:\n  - root\n" if default else "")


def commit_all(root: Path, message: str) -> str:
    """Commit everything in ``root`` (a git repository); the Repo is closed again at once so
    GitPython's helper processes never outlive the call (pytest treats the leak as an error)."""
    with git.Repo(root) as repo:
        repo.git.add("-A")
        return repo.index.commit(message, author=ACTOR, committer=ACTOR).hexsha


def head(root: Path) -> str:
    with git.Repo(root) as repo:
        return repo.head.commit.hexsha


def make_repo(root: Path, **kw: object) -> str:
    root.mkdir(parents=True, exist_ok=True)
    write_repo(root, **kw)  # type: ignore[arg-type]
    with git.Repo.init(root, initial_branch="main"):
        pass
    return commit_all(root, "initial budgets")
