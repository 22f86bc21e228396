"""``allot reconcile`` as a new user meets it: an unknown cluster and a bad source URL are one
whole line each (exit 2 / Stalled with git's full message), the simulated cluster is the
inventory's, and logs are timestamped, levelled, printed on change, and JSON on request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allotment.cli.main import main
from tests.reconcile.repo import commit_all


def _argv(source: str, state: Path, *extra: str) -> list[str]:
    return ["reconcile", "--backend", "sim", "--source", source, "--state", str(state), *extra]


def test_an_unknown_cluster_is_one_line_naming_the_known_ones_and_exit_2(
    config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _argv(str(config_repo), tmp_path / "st", "--once", "--cluster", "nosuch")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == "allot reconcile: --cluster nosuch: not in the inventory (clusters: gpulab)\n"


def test_a_bad_source_url_gives_gits_whole_message_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "file:///nonexistent/budgets.git"
    assert main(_argv(url, tmp_path / "st", "--once")) == 3
    out = capsys.readouterr().out.strip()
    assert out.startswith("revision -: no actions; error: cannot fetch file:///nonexistent")
    assert "does not appear to be a git repository" in out  # not cut at git's first line
    assert "\n" not in out


def test_the_simulated_cluster_is_the_inventorys_unless_told(
    config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_argv(str(config_repo), tmp_path / "st", "--once")) == 0
    nodes = json.loads((tmp_path / "st" / "sim.json").read_text())["nodes"]
    assert sorted(nodes) == ["n1", "n2", "n3", "n4"]  # the inventory's n[1-4] x 8
    assert main(_argv(str(config_repo), tmp_path / "st2", "--once", "--sim-nodes", "x[1-2]:4")) == 0
    assert sorted(json.loads((tmp_path / "st2" / "sim.json").read_text())["nodes"]) == ["x1", "x2"]


def test_logs_are_timestamped_levelled_and_json_on_request(
    config_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_argv(str(config_repo), tmp_path / "st", "--once")) == 0
    (config_repo / "inventory/gpu_types.yaml").write_text("gpu_types: {}\n")
    commit_all(config_repo, "break the inventory")
    capsys.readouterr()
    assert main(_argv(str(config_repo), tmp_path / "st", "--once", "--log-format", "json")) == 1
    lines = [json.loads(ln) for ln in capsys.readouterr().err.splitlines()]
    assert lines and all(set(e) == {"time", "level", "logger", "msg"} for e in lines)
    assert lines[0]["level"] == "warning" and lines[0]["time"].endswith("Z")
    assert "does not validate" in lines[0]["msg"]
    assert main(_argv(str(config_repo), tmp_path / "st", "--once")) == 1
    assert capsys.readouterr().err == ""  # a known bad commit is not complained about again
    (config_repo / "inventory/gpu_types.yaml").write_text("gpu_types: []\n")
    commit_all(config_repo, "break it another way")
    assert main(_argv(str(config_repo), tmp_path / "st", "--once")) == 1
    text = capsys.readouterr().err.splitlines()
    assert len(text) == 1 and text[0][:4].isdigit() and text[0][10] == "T"
    assert " WARNING allotment.reconcile.revisions: revision " in text[0]


def test_reconcile_help_tells_the_clusters_default_and_names_no_internal_module(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import re

    with pytest.raises(SystemExit):
        main(["reconcile", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "the one with the most GPUs, named in a warning" in text  # what _cluster does
    modules = re.findall(r"\b(?:allotment|reconcile|backends|core|legible|cli)\.[a-z_]+\b", text)
    assert modules == []
