"""``allot reconcile --backend kubernetes``: flags, exit codes, and one real tick."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from allotment.cli.main import main
from tests.k8s.cluster import Cluster, kubeconfig
from tests.reconcile.repo import make_repo


def test_a_missing_kubeconfig_is_a_backend_failure_with_a_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_repo(tmp_path / "budgets")
    code = main(
        [
            "reconcile",
            "--backend",
            "kubernetes",
            "--kubeconfig",
            str(tmp_path / "none.yaml"),
            "--source",
            str(tmp_path / "budgets"),
            "--state",
            str(tmp_path / "state"),
            "--once",
        ]
    )
    assert code == 3
    err = capsys.readouterr().err
    assert "kubeconfig" in err and "none.yaml" in err and "Traceback" not in err


@pytest.mark.k8s
def test_one_tick_from_the_command_line_syncs_the_tree_and_writes_status(
    tmp_path: Path, kube: object, capsys: pytest.CaptureFixture[str]
) -> None:
    Cluster(kube).reset()  # type: ignore[arg-type]
    make_repo(tmp_path / "budgets")
    argv = [
        "reconcile",
        "--backend",
        "kubernetes",
        "--kubeconfig",
        kubeconfig(),
        "--context",
        "allotment-test",
        "--source",
        str(tmp_path / "budgets"),
        "--state",
        str(tmp_path / "state"),
        "--tiers",
        "20s,10m",
        "--once",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "applied" in out and "add_account teama1" in out
    def condition(kind: str) -> str:
        status = json.loads((tmp_path / "state" / "status.json").read_text())
        return str(next(c for c in status["conditions"] if c["type"] == kind)["status"])

    # kstatus: a tick that changed the cluster is Reconciling, so not yet Ready
    assert (condition("Reconciling"), condition("Ready")) == ("True", "False")
    assert main(argv) == 0
    assert "no actions" in capsys.readouterr().out
    assert (condition("Reconciling"), condition("Ready")) == ("False", "True")  # converged
