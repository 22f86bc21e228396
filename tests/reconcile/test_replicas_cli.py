"""``--lease``: the strategy is chosen by the backend or the flag; a Lease that cannot be
reached is a backend failure (exit 3, one line) before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.cli.main import main


def test_a_kubernetes_lease_without_a_kubeconfig_fails_as_a_backend_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "reconcile", "--backend", "sim", "--state", str(tmp_path / "st"), "--leader-elect",
        "--lease", "kubernetes", "--kubeconfig", str(tmp_path / "missing"),
    ]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"allot reconcile: kubeconfig {tmp_path / 'missing'}: ") and err.count("\n") == 1
    assert "Traceback" not in err and not (tmp_path / "st").exists()


def test_an_unknown_lease_kind_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["reconcile", "--backend", "sim", "--leader-elect", "--lease", "etcd"])
    assert exc.value.code == 2
    assert "invalid choice: 'etcd'" in capsys.readouterr().err
