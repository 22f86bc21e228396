"""The reconciler's start-up check of ``slurm.conf`` reads the real controller's answer
(``backends/slurm/config_check.py``).  The test cluster runs backfill without the job-submit
plugin (``tests/slurm/up.sh``'s defaults; the fidelity gate's cluster has both) and with
``disable_job_shrink``, ``JobRequeue=1`` and ``AccountingStorageEnforce=associations,limits,qos``,
so exactly the two warnings about those are expected."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.config_check import SHOW_CONFIG_ARGV, parse_show_config
from allotment.backends.slurm.runner import Runner
from allotment.reconcile.reconciler import BACKEND_CONFIG, Options, Reconciler
from allotment.reconcile.source import GitSource
from tests.reconcile.repo import make_repo

pytestmark = pytest.mark.slurm


def test_the_test_clusters_config_is_read_and_judged(slurm_conf: Path) -> None:
    runner = Runner(env={"SLURM_CONF": str(slurm_conf)})
    config = parse_show_config(runner.read(SHOW_CONFIG_ARGV))
    assert "disable_job_shrink" in config["SchedulerParameters"].split(",")
    assert config["SchedulerType"] == "sched/backfill"
    # up.sh sets JobRequeue=1 and AccountingStorageEnforce=associations,limits,qos: read as such
    assert config["JobRequeue"] == "1"
    assert {"associations", "limits", "qos"} <= set(config["AccountingStorageEnforce"].split(","))
    warnings = SlurmBackend(runner=runner).config_warnings()
    assert [w.split(" ", 2)[1] for w in warnings] == ["SchedulerType", "JobSubmitPlugins"], warnings


def test_a_controller_that_does_not_answer_is_one_warning_not_a_failure(tmp_path: Path) -> None:
    bad = tmp_path / "slurm.conf"
    bad.write_text("ClusterName=nowhere\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\n")
    runner = Runner(env={"SLURM_CONF": str(bad)}, timeout_s=5.0, retries=0)
    (warning,) = SlurmBackend(runner=runner).config_warnings()
    assert warning.startswith("slurm.conf not checked: scontrol show config failed")


def test_a_reconciler_on_this_cluster_logs_each_gap_once_and_keeps_the_condition(
    tmp_path: Path, clean_cluster: Path, caplog: pytest.LogCaptureFixture
) -> None:
    make_repo(tmp_path / "budgets")
    backend = SlurmBackend(runner=Runner(env={"SLURM_CONF": str(clean_cluster)}, timeout_s=30))
    state = tmp_path / "state"
    rec = Reconciler(
        backend, GitSource(str(tmp_path / "budgets"), "main", state), state, Options(tiers_s=(20, 600))
    )
    try:
        with caplog.at_level(logging.WARNING):
            for _ in range(2):
                assert rec.tick().error is None
    finally:
        rec.close()
    warned = [r.getMessage().split(" ", 2)[1] for r in caplog.records if r.getMessage().startswith("slurm.conf:")]
    assert warned == ["SchedulerType", "JobSubmitPlugins"]  # at the first tick only
    raw = json.loads((state / "status.json").read_text())
    cond = next(c for c in raw["conditions"] if c["type"] == BACKEND_CONFIG)
    assert (cond["status"], cond["reason"]) == ("True", "ConfigWarnings")
    assert "SchedulerType is sched/backfill" in cond["message"]
    assert "JobSubmitPlugins lacks lua" in cond["message"]
    assert "disable_job_shrink" not in cond["message"] and "JobRequeue" not in cond["message"]
