"""Compiling the bundled example: shape of the JSON contract, determinism, hash stability."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

from allotment.compile.compiler import compile_config, compile_repo
from allotment.compile.graph import build_graph
from allotment.compile.render import to_json, to_table
from allotment.config.files import read_repo_files
from allotment.config.loader import inputs_sha256, load_config

AT = dt.date(2026, 11, 29)


def test_json_has_the_documented_shape(repo_root: Path) -> None:
    data = json.loads(to_json(compile_repo(repo_root, AT, revision="abc123")))
    assert data["revision"] == "abc123"
    assert len(data["inputs_sha256"]) == 64
    assert data["clusters"]["h100"]["gpus"] == 1024
    assert data["clusters"]["b200"]["gpus"] == 88
    # 1024 GPUs x weight 1.0 x 168 h; 88 x 2.0 x 168 h
    assert data["clusters"]["h100"]["reference_gpu_hours_per_window"] == 1024 * 168
    assert data["clusters"]["b200"]["reference_gpu_hours_per_window"] == 88 * 2 * 168
    names = {n["name"] for n in data["nodes"]}
    for node in data["nodes"]:
        assert node["parent"] is None or node["parent"] in names
        for key in (
            "path",
            "owners",
            "leaf",
            "share",
            "absolute",
            "entitlement_gpus",
            "entitlement_gpu_hours",
        ):
            assert key in node


def test_json_is_byte_identical_across_runs(repo_root: Path) -> None:
    assert to_json(compile_repo(repo_root, AT)) == to_json(compile_repo(repo_root, AT))


def test_hash_depends_on_files_not_on_how_they_were_read(repo_root: Path) -> None:
    files = read_repo_files(repo_root)
    reordered = dict(reversed(list(files.items())))
    assert inputs_sha256(files) == inputs_sha256(reordered)
    changed = dict(files)
    changed["budgets/ai2/budget.yaml"] += b"\n"
    assert inputs_sha256(changed) != inputs_sha256(files)


def test_restricted_leaf_gets_nothing_elsewhere_and_its_part_goes_to_siblings(
    repo_root: Path,
) -> None:
    config = compile_repo(repo_root, AT)
    molmo = config.node("molmo")
    vision = config.node("vision")
    embodied = config.node("embodied")
    assert molmo.absolute["b200"] == 0.0
    assert vision.absolute["b200"] == 0.0
    assert molmo.absolute["h100"] > 0.0
    # vision is prior's only child restricted to h100, so on b200 embodied holds all of prior's part
    assert math.isclose(embodied.absolute["b200"], config.node("prior").absolute["b200"])
    assert math.isclose(embodied.absolute["h100"], config.node("prior").absolute["h100"] / 2)


def test_budget_past_its_end_date_is_inactive_and_warned(repo_root: Path) -> None:
    loaded = load_config(read_repo_files(repo_root))
    later = compile_config(loaded, dt.date(2027, 4, 1))
    chem = later.node("chem-llm")
    assert not chem.active
    assert chem.absolute == {"b200": 0.0, "h100": 0.0}
    assert any("chem-llm" in w.message and w.severity == "warning" for w in later.warnings)
    for c in later.clusters:
        total = sum(n.absolute[c] for n in later.leaves())
        assert math.isclose(total, 1.0)


def test_graph_mirrors_the_tree(repo_root: Path) -> None:
    config = compile_repo(repo_root, AT)
    g = build_graph(config)
    assert g.number_of_nodes() == len(config.nodes)
    assert g.number_of_edges() == len(config.nodes) - 1
    assert g.in_degree(config.root) == 0
    assert {n for n in g.nodes if g.out_degree(n) == 0} == {n.name for n in config.leaves()}


def test_table_shows_every_node_indented(repo_root: Path) -> None:
    config = compile_repo(repo_root, AT)
    table = to_table(config)
    for n in config.nodes:
        depth = n.path.count("/")
        assert any(line.startswith("  " * depth + n.name + " ") for line in table.splitlines())


def test_max_gpus_caps_the_compiled_entitlement_to_what_the_scheduler_owes(repo_root: Path) -> None:
    """One owner of the cap (compile/caps.py): red-team's 5.25% of h100 is 53.76 GPUs, but its
    max_gpus is 32, so compile, the plan and the scheduler all say 32 (issue 26)."""
    from allotment.core.context import build_context

    compiled = compile_repo(repo_root, AT)
    red = compiled.node("red-team")
    assert red.max_gpus == 32
    assert red.absolute["h100"] * 1024 > 32  # the share alone would give more
    assert red.entitlement_gpus["h100"] == 32.0
    assert red.entitlement_gpu_hours["h100"] == 32.0 * 168  # weight 1.0, a 7-day window
    assert red.entitlement_gpus["b200"] == red.absolute["b200"] * 88  # the cap does not bind there
    ctx = build_context(compiled, "h100")
    for leaf in ctx.leaves:
        assert ctx.entitlement_gpus[leaf] == compiled.node(leaf).entitlement_gpus["h100"]
