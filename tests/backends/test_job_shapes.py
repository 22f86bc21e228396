"""Every GPU request ``sbatch`` accepts is read as the GPUs the job really asks for or holds:
real ``squeue --json`` records of each shape (captured on tests/slurm/up.sh's 4 x gpu:8 cluster,
one pending and one running), not hand-written JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from allotment.backends.slurm.parse import parse_squeue_json
from allotment.backends.slurm.shape import requested_gpus

FIXTURE = Path(__file__).parent / "fixtures" / "squeue_shapes.json"
RECORDS: list[dict[str, Any]] = json.loads(FIXTURE.read_text())["records"]

# sbatch options -> (total GPUs, per-node shape the core is told, GPUs per node while running)
EXPECT: dict[str, tuple[int, int | None, tuple[int, ...]]] = {
    "--gres=gpu:2": (2, 2, (2,)),
    "-N 2 --gres=gpu:8": (16, 8, (8, 8)),
    "--gpus=3": (3, None, (3,)),
    "-N 2 --gpus=12": (12, 6, (8, 4)),
    "-N 2 --gpus-per-node=4": (8, 4, (4, 4)),
    "-n 4 --gpus-per-task=2": (8, None, (8,)),
    "-N 2 --ntasks-per-node=2 --gpus-per-task=1": (4, 2, (2, 2)),
    "--gres=gpu:2 --gpus-per-node=2": (2, 2, (2,)),
}


def _case(rec: dict[str, Any]) -> str:
    return f"{rec['job']['job_state'].lower()}: {rec['sbatch'].split(' -t ')[0]}"


@pytest.mark.parametrize("rec", RECORDS, ids=_case)
def test_job_shape_is_read_as_slurm_counts_it(rec: dict[str, Any]) -> None:
    (job,) = parse_squeue_json(json.dumps({"jobs": [rec["job"]]}), {})
    gpus, per_node, on_nodes = EXPECT[rec["sbatch"].split(" -t ")[0]]
    assert job.gpus == gpus
    assert job.gpus_per_node == per_node
    assert job.time_limit_s == 7 * 60  # -t 7: the core's work bound
    if job.state == "running":
        assert job.node_gpus == on_nodes and len(job.nodes) == len(on_nodes)
        assert sum(job.node_gpus) == job.gpus
    else:
        assert job.node_gpus == () and job.nodes == ()


def test_fixture_holds_every_shape_pending_and_running() -> None:
    seen = {(_case(r).split(":")[0], r["sbatch"].split(" -t ")[0]) for r in RECORDS}
    assert seen == {(s, o) for s in ("pending", "running") for o in EXPECT}


def test_multi_node_pending_job_counts_every_node() -> None:
    rec = next(
        r for r in RECORDS
        if r["sbatch"].startswith("-N 2 --gres=gpu:8") and r["job"]["job_state"] == "PENDING"
    )
    assert rec["job"]["tres_per_node"] == "gres:gpu:8"  # what was read before: 8
    (job,) = parse_squeue_json(json.dumps({"jobs": [rec["job"]]}), {})
    assert job.gpus == 16


def test_without_tres_strings_the_options_are_multiplied_out() -> None:
    base = {"job_id": 1, "job_state": "PENDING", "tres_req_str": "", "tres_alloc_str": ""}
    cases = [
        ({"tres_per_node": "gres:gpu:8", "node_count": 2}, 16),
        ({"tres_per_job": "gres:gpu:12", "node_count": 2}, 12),
        ({"tres_per_task": "gres:gpu:2", "tasks": 4}, 8),
        ({"tres_per_node": "gres:gpu:h100:4", "node_count": 3}, 12),
    ]
    for extra, want in cases:
        (job,) = parse_squeue_json(json.dumps({"jobs": [{**base, **extra}]}), {})
        assert job.gpus == want, extra


def test_a_request_named_twice_counts_once() -> None:
    assert requested_gpus("gres:gpu:2,gres:gpu:2") == 2
