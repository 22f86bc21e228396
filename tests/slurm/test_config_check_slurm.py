"""The reconciler's start-up check of ``slurm.conf`` reads the real controller's answer
(``backends/slurm/config_check.py``).  The test cluster runs backfill without the job-submit
plugin (``tests/slurm/up.sh``'s defaults; the fidelity gate's cluster has both) and with
``disable_job_shrink``, so exactly the two warnings about those are expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.config_check import SHOW_CONFIG_ARGV, parse_show_config
from allotment.backends.slurm.runner import Runner

pytestmark = pytest.mark.slurm


def test_the_test_clusters_config_is_read_and_judged(slurm_conf: Path) -> None:
    runner = Runner(env={"SLURM_CONF": str(slurm_conf)})
    config = parse_show_config(runner.read(SHOW_CONFIG_ARGV))
    assert "disable_job_shrink" in config["SchedulerParameters"].split(",")
    assert config["SchedulerType"] == "sched/backfill"
    warnings = SlurmBackend(runner=runner).config_warnings()
    assert [w.split(" ", 2)[1] for w in warnings] == ["SchedulerType", "JobSubmitPlugins"], warnings


def test_a_controller_that_does_not_answer_is_one_warning_not_a_failure(tmp_path: Path) -> None:
    bad = tmp_path / "slurm.conf"
    bad.write_text("ClusterName=nowhere\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\n")
    runner = Runner(env={"SLURM_CONF": str(bad)}, timeout_s=5.0, retries=0)
    (warning,) = SlurmBackend(runner=runner).config_warnings()
    assert warning.startswith("slurm.conf not checked: scontrol show config failed")
