from __future__ import annotations

from pathlib import Path

from allotment.backends.slurm.render import render_slurm
from tests.backends.configs import tree_config
from tests.conftest import assert_golden

GOLDEN = Path(__file__).parent / "golden"


def test_render_slurm_matches_the_reviewed_golden_file(regen_golden: bool) -> None:
    assert_golden(GOLDEN / "render_slurm.sh", render_slurm(tree_config(), "gpulab"), regen_golden)


def test_render_is_deterministic_and_parents_come_before_children() -> None:
    text = render_slurm(tree_config(), "gpulab")
    assert text == render_slurm(tree_config(), "gpulab")
    lines = text.splitlines()
    pos = {w.split()[4]: i for i, w in enumerate(lines) if w.startswith("sacctmgr -i add account")}
    assert pos["org"] < pos["proga"] < pos["teama1"]
    assert all(line.startswith("sacctmgr -i ") for line in lines if line.startswith("sacctmgr"))
    assert lines.index(next(x for x in lines if "add qos unallocated" in x)) < lines.index(
        next(x for x in lines if "add qos alloc-" in x)
    )


def test_max_gpus_becomes_a_gpu_limit_on_the_account_association() -> None:
    text = render_slurm(tree_config(max_gpus={"teamb": 12, "proga": 20}), "gpulab")
    adds = {w.split()[4]: w for w in text.splitlines() if w.startswith("sacctmgr -i add account")}
    assert adds["teamb"].endswith(" GrpTRES=gres/gpu=12")
    assert adds["proga"].endswith(" GrpTRES=gres/gpu=20")
    assert "GrpTRES" not in adds["teama1"] and "GrpTRES" not in adds["org"]
