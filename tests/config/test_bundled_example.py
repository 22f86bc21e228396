"""The bundled example organisation is valid and as rich as the issue asks."""

from __future__ import annotations

from pathlib import Path

from allotment.config.files import read_repo_files
from allotment.config.loader import load_config


def test_bundled_example_loads_without_errors_or_warnings(repo_root: Path) -> None:
    loaded = load_config(read_repo_files(repo_root))
    assert loaded.warnings == ()
    assert loaded.root == "ai2"


def test_bundled_example_has_the_promised_shape(repo_root: Path) -> None:
    loaded = load_config(read_repo_files(repo_root))
    leaves = [n for n in loaded.nodes if n.leaf]
    programs = [n for n in loaded.nodes if n.parent == loaded.root]
    assert len(leaves) == 15
    assert len(programs) == 4
    assert 140 <= len(loaded.users) <= 160
    assert all(n.owners for n in loaded.nodes)
    gpus = {
        name: sum(len(g.node_names) * g.gpus_per_node for g in c.groups)
        for name, c in loaded.clusters.items()
    }
    assert gpus == {"h100": 1024, "b200": 88}
    restricted = [n for n in leaves if n.clusters != ("b200", "h100")]
    assert restricted, "some leaves are restricted to one cluster"
    assert any(n.terms is not None and n.terms.end is not None for n in loaded.nodes)
    assert any(n.terms is not None and n.terms.max_gpus is not None for n in loaded.nodes)
    multi = [u for u in loaded.users.values() if len(u.accounts) > 1]
    assert len(multi) >= 2


def test_users_in_several_leaves_get_the_declared_default(repo_root: Path) -> None:
    loaded = load_config(read_repo_files(repo_root))
    for user in loaded.users.values():
        if len(user.accounts) > 1:
            leaf = next(n for n in loaded.nodes if n.name == user.default_account)
            assert user.name in leaf.default_for
