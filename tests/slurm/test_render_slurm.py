"""`allot compile --target slurm` prints what the reconciler would make: run the printed script
on a clean cluster and the reconciler then finds nothing to change."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from allotment.backends.diff import diff_policy
from allotment.backends.policy import desired_policy
from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.render import render_slurm
from allotment.backends.slurm.runner import Runner
from tests.backends.configs import tree_config

pytestmark = pytest.mark.slurm


def test_the_rendered_script_builds_exactly_the_desired_policy(
    clean_cluster: Path, tmp_path: Path
) -> None:
    config = tree_config()
    script = tmp_path / "policy.sh"
    script.write_text(render_slurm(config, "gpulab", (20, 600)))
    subprocess.run(
        ["sh", str(script)], check=True, capture_output=True, timeout=120, stdin=subprocess.DEVNULL
    )
    backend = SlurmBackend(runner=Runner(env={"SLURM_CONF": str(clean_cluster)}))
    plan = diff_policy(
        desired_policy(config, "gpulab", (20, 600)), backend.observe_policy(), prune=False
    )
    assert plan.actions == ()
