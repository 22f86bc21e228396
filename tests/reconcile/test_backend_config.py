"""What the backend's own config lacks for active mode is reported, never fixed
(``Reconciler._backend_config``): read once a process at the first active tick, each gap a
warning in the log then, and the ``BackendConfigIncomplete`` condition in ``status.json``, on
``allot status`` and on ``/metrics`` every tick after.  A backend that checks nothing carries no
such condition.  The sim backend stands in for the cluster here (its answer set by the test);
``tests/slurm/test_config_check_slurm.py`` reads a real controller's."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from allotment.backends.simulated import SimulatedBackend
from allotment.cli.main import main
from allotment.reconcile.reconciler import BACKEND_CONFIG, Options


class _Checked(SimulatedBackend):
    """A simulated cluster whose config check answers ``gaps`` (counting the reads)."""

    gaps: tuple[str, ...] | None = ()
    reads = 0

    def config_warnings(self) -> tuple[str, ...] | None:
        self.reads += 1
        return self.gaps


def _backend(gaps: tuple[str, ...] | None) -> _Checked:
    b = _Checked([(f"n{i}", 8) for i in range(1, 5)], now=1_795_000_000.0)
    b.gaps = gaps
    return b


def _condition(state: Path) -> dict[str, Any] | None:
    raw = json.loads((state / "status.json").read_text())
    return next((c for c in raw["conditions"] if c["type"] == BACKEND_CONFIG), None)


GAPS = (
    "slurm.conf: SchedulerType is sched/backfill, not sched/builtin; backfill starts held-back jobs",
    "slurm.conf: JobRequeue is 0, not 1; every job submitted without --requeue is non-resumable",
)


def test_each_gap_is_logged_once_and_is_a_condition_every_tick(
    make_reconciler: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    backend = _backend(GAPS)
    rec = make_reconciler(backend=backend)
    with caplog.at_level(logging.WARNING):
        rec.tick()
        rec.tick()
    assert backend.reads == 1
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("slurm.conf:")]
    assert logged == list(GAPS)
    cond = _condition(tmp_path / "state")
    assert cond is not None
    assert (cond["status"], cond["reason"]) == ("True", "ConfigWarnings")
    assert cond["message"] == "; ".join(GAPS)
    # it is a report: Ready is not withheld for it
    raw = json.loads((tmp_path / "state/status.json").read_text())
    ready = next(c for c in raw["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"
    main(["status", "--reconciler", "--state", str(tmp_path / "state")])  # exit 1: Stale, a test clock
    lines = capsys.readouterr().out.splitlines()
    line = next(x for x in lines if BACKEND_CONFIG in x)
    assert line.split()[:3] == [BACKEND_CONFIG, "True", "ConfigWarnings:"] and GAPS[1] in line
    # the conditions' True/False in one column, past the longest type
    ready = next(x for x in lines if x.split()[:1] == ["Ready"])
    assert ready.index("False") == line.index("True")


def test_a_config_with_everything_is_a_false_condition(make_reconciler: Any, tmp_path: Path) -> None:
    make_reconciler(backend=_backend(())).tick()
    cond = _condition(tmp_path / "state")
    assert cond is not None and (cond["status"], cond["reason"]) == ("False", "ConfigAsExpected")


def test_a_backend_that_checks_nothing_has_no_such_condition(
    make_reconciler: Any, tmp_path: Path
) -> None:
    make_reconciler(backend=_backend(None)).tick()
    assert _condition(tmp_path / "state") is None


def test_policy_only_reads_no_config(make_reconciler: Any, tmp_path: Path) -> None:
    backend = _backend(GAPS)
    make_reconciler(Options(tiers_s=(20,), active=False), backend=backend).tick()
    assert backend.reads == 0 and _condition(tmp_path / "state") is None
