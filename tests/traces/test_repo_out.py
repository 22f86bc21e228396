"""--repo-out: the written repository loads, compiles, matches the trace and simulates."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import replace
from pathlib import Path

import pytest

from allotment.compile.compiler import compile_repo
from allotment.errors import UsageError
from allotment.traces.canonical import read_trace
from allotment.traces.fill_rules import FillRules, rules_for
from allotment.traces.importers import CsvImporter, SacctImporter, SwfImporter, parse_map
from allotment.traces.pipeline import import_trace
from allotment.traces.repo_out import RepoOutOptions, render_repo, write_repo
from allotment.traces.summary import ImportResult

from .conftest import SACCT

AT = dt.date(2026, 1, 1)


def _synthetic(tmp_path: Path, n: int = 200, seed: int = 3) -> tuple[ImportResult, Path]:
    rng = random.Random(seed)
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "jobs.csv"
    rows = ["id,t,w,g,a,u"]
    for i in range(n):
        rows.append(
            f"j{i},{rng.randrange(86400)},{rng.randrange(60, 7200)},{rng.choice([1, 2, 4, 8, 16])},"
            f"{rng.choice(['Vision', 'nlp', 'rl'])},{rng.choice(['ann', 'bo', 'cy'])}"
        )
    src.write_text("\n".join(rows) + "\n")
    m = parse_map("id=id,submit=t,work=w,gpus=g,account=a,user=u")
    out = tmp_path / "t.jsonl"
    return import_trace(CsvImporter(mapping=m), src, out, fill=FillRules()), out


def test_usage_shares_follow_historical_gpu_hours(tmp_path: Path) -> None:
    result, trace = _synthetic(tmp_path)
    write_repo(tmp_path / "repo", render_repo(result, RepoOutOptions(gpus=64)), at=AT)
    config = compile_repo(tmp_path / "repo", AT)
    jobs = read_trace(trace).jobs
    usage: dict[str, float] = {}
    for j in jobs:
        usage[j.account] = usage.get(j.account, 0.0) + j.gpus * j.work
    total = sum(usage.values())
    leaves = {n.name: n for n in config.leaves()}
    assert set(leaves) == set(usage) == {"vision", "nlp", "rl"}
    for name, node in leaves.items():
        assert node.share == pytest.approx(usage[name] / total, abs=1e-4)
    assert config.clusters["imported"].gpus == 64
    # a user in several accounts gets a default account: the one they used most
    for user, info in config.users.items():
        mine = {
            a: sum(j.gpus * j.work for j in jobs if j.user == user and j.account == a)
            for a in info.accounts
        }
        assert info.default_account == max(mine, key=lambda a: (mine[a], a))


def test_equal_shares_and_peak_demand_sizing(tmp_path: Path) -> None:
    result, _ = _synthetic(tmp_path)
    write_repo(tmp_path / "repo", render_repo(result, RepoOutOptions(shares="equal")), at=AT)
    config = compile_repo(tmp_path / "repo", AT)
    assert {round(n.share, 6) for n in config.leaves()} == {round(1 / 3, 6)}
    peak = result.stats.peak_demand_gpus
    assert config.clusters["imported"].gpus == -(-peak // 8) * 8


def test_typed_jobs_get_one_node_group_per_gpu_type(tmp_path: Path) -> None:
    result = import_trace(SacctImporter(), SACCT, tmp_path / "s.jsonl", fill=FillRules())
    write_repo(tmp_path / "repo", render_repo(result, RepoOutOptions(gpus=64)), at=AT)
    cl = compile_repo(tmp_path / "repo", AT).clusters["imported"]
    assert {g.gpu_type for g in cl.node_groups} == {"a100", "h100"}
    assert cl.gpus == 64


def test_swf_machine_size_comes_from_its_header(swf_path: Path, tmp_path: Path) -> None:
    result = import_trace(SwfImporter(), swf_path, tmp_path / "t.jsonl", fill=rules_for("swf"))
    write_repo(tmp_path / "repo", render_repo(result, RepoOutOptions()), at=AT)
    config = compile_repo(tmp_path / "repo", AT)
    assert config.clusters["imported"].gpus == 128
    assert {n.name for n in config.leaves()} == {"group1", "group2"}


def test_rendering_is_deterministic(tmp_path: Path) -> None:
    a, _ = _synthetic(tmp_path / "a")
    b, _ = _synthetic(tmp_path / "b")
    assert render_repo(a, RepoOutOptions()) == render_repo(b, RepoOutOptions())


def test_a_cluster_too_small_for_the_largest_job_writes_nothing(tmp_path: Path) -> None:
    result, _ = _synthetic(tmp_path)
    with pytest.raises(UsageError, match="16-GPU job but the cluster would have 8 GPUs"):
        write_repo(tmp_path / "repo", render_repo(result, RepoOutOptions(gpus=8)), at=AT)
    assert not (tmp_path / "repo").exists()


def test_refuses_a_non_empty_folder_and_leaves_no_temporary(tmp_path: Path) -> None:
    result, _ = _synthetic(tmp_path)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="exists and is not an empty folder"):
        write_repo(tmp_path / "repo", render_repo(result, RepoOutOptions()), at=AT)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.csv", "repo", "t.jsonl"]


def test_imported_trace_simulates_on_its_repository(tmp_path: Path) -> None:
    from allotment.sim.runner import simulate
    from allotment.traces.scenarios.workload import Workload

    result, trace = _synthetic(tmp_path, n=120)
    write_repo(tmp_path / "repo", render_repo(result, RepoOutOptions(gpus=32)), at=AT)
    config = compile_repo(tmp_path / "repo", AT)
    t = read_trace(trace)
    metrics = simulate(config, Workload.of(t.jobs, t.node_events)).metrics
    jobs = metrics["jobs"]
    assert (jobs["submitted"], jobs["completed"], jobs["rejected"]) == (120, 120, 0)


def test_a_typed_gang_wider_than_its_type_s_nodes_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "jobs.csv"
    src.write_text("t,w,g,gpn,ty,a\n0,100,8,8,p100,x\n1,100,1,1,t4,x\n")
    m = parse_map("submit=t,work=w,gpus=g,gpus_per_node=gpn,gpu_type=ty,account=a")
    result = import_trace(CsvImporter(mapping=m), src, tmp_path / "t.jsonl", fill=FillRules())
    from allotment.traces.importers import NodeGroupShape

    shaped = replace(result, cluster=(NodeGroupShape("p100", 2, 8), NodeGroupShape("t4", 8, 1)))
    with pytest.raises(
        UsageError, match="p100 job needing 8 GPUs on one node but p100 nodes have at most 2"
    ):
        render_repo(shaped, RepoOutOptions())
