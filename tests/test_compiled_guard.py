"""The compiled hot modules: used when fresh, bypassed (source runs) when a .py is newer or
ALLOTMENT_PURE=1, and in every case the same results.  Runs on a copy of the package in a
temporary folder, in fresh interpreters."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from allotment import _compiled

SRC = Path(_compiled.__file__).resolve().parent.parent
PROBE = (
    "import allotment._compiled as c, allotment.core.scheduler as s, allotment.sim.runner as r;"
    "print(c.mode()); print(s.__file__); print(r.__file__)"
)


def _copy(tmp: Path) -> Path:
    dst = tmp / "src"
    shutil.copytree(SRC / "allotment", dst / "allotment", ignore=shutil.ignore_patterns("__pycache__"))
    for so in SRC.glob("*__mypyc*"):  # mypyc's shared library sits beside the package
        shutil.copy2(so, dst / so.name)
    return dst


def _probe(src: Path, **env: str) -> list[str]:
    e = {**os.environ, "PYTHONPATH": str(src), **env}
    if "ALLOTMENT_PURE" not in env:
        e.pop("ALLOTMENT_PURE", None)
    out = subprocess.run([sys.executable, "-c", PROBE], env=e, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def _compiled_here() -> bool:
    return all(_compiled._paths(n)[1] for n in _compiled.HOT)


@pytest.mark.skipif(not _compiled_here(), reason="installed with ALLOTMENT_COMPILE=0: nothing compiled")
def test_fresh_extensions_run_and_a_newer_source_wins(tmp_path: Path) -> None:
    src = _copy(tmp_path)
    mode, sched, runner = _probe(src)
    assert mode == "compiled with mypyc"
    assert not sched.endswith(".py") and not runner.endswith(".py")
    # an edit after the build: every hot module runs from source, not only the edited one --
    # judged by content where the build left its record (_compiled.RECORD) ...
    _compiled.write_record(src)
    py = src / "allotment" / "core" / "scheduler.py"
    py.write_text(py.read_text() + "\n# edited\n")
    newest = max(p.stat().st_mtime for p in src.rglob("*.so"))
    os.utime(py, (newest + 10, newest + 10))
    mode, sched, runner = _probe(src)
    assert mode.startswith("pure Python") and "changed since the build" in mode
    assert sched.endswith("scheduler.py") and runner.endswith("runner.py")
    # ... and by timestamps where an older build left none
    (src / "allotment" / _compiled.RECORD).unlink()
    mode, sched, runner = _probe(src)
    assert mode.startswith("pure Python") and "older than their source" in mode
    assert sched.endswith("scheduler.py") and runner.endswith("runner.py")


@pytest.mark.skipif(not _compiled_here(), reason="installed with ALLOTMENT_COMPILE=0: nothing compiled")
def test_an_install_that_writes_sources_after_extensions_runs_compiled(tmp_path: Path) -> None:
    """What a wheel or ``pip install .`` leaves: the record of the sources compiled, and every
    ``.py`` newer than its extension.  Content decides: compiled (issue 26)."""
    src = _copy(tmp_path)
    _compiled.write_record(src)
    newest = max(p.stat().st_mtime for p in src.rglob("*.so"))
    for py in (src / "allotment").rglob("*.py"):
        os.utime(py, (newest + 10, newest + 10))
    mode, sched, _ = _probe(src)
    assert mode == "compiled with mypyc" and not sched.endswith(".py")
    (src / "allotment" / "core" / "scheduler.py").write_text(
        (src / "allotment" / "core" / "scheduler.py").read_text() + "\n# edited\n"
    )
    mode, sched, _ = _probe(src)
    assert "changed since the build" in mode and sched.endswith("scheduler.py")


def test_pure_on_request(tmp_path: Path) -> None:
    src = _copy(tmp_path)
    mode, sched, runner = _probe(src, ALLOTMENT_PURE="1")
    assert mode == "pure Python (ALLOTMENT_PURE=1)"
    assert sched.endswith("scheduler.py") and runner.endswith("runner.py")


@pytest.mark.skipif(not _compiled_here(), reason="installed with ALLOTMENT_COMPILE=0: nothing compiled")
def test_compiled_and_pure_simulations_agree_byte_for_byte(tmp_path: Path) -> None:
    code = (
        "import json, sys; from allotment.sim.runner import simulate;"
        "from allotment.traces.scenarios.ai2 import generate; from tests.core.builders import make_config;"
        "c = make_config({'a': {'x': 2, 'y': 1}, 'b': 1}, nodes=8);"
        "m = simulate(c, generate(c, cluster='c1', days=1, seed=4), days=1).metrics;"
        "print(json.dumps(m, sort_keys=True))"
    )
    root = SRC.parent
    outs = []
    for pure in ("0", "1"):
        env = {**os.environ, "ALLOTMENT_PURE": pure, "PYTHONPATH": f"{SRC}{os.pathsep}{root}"}
        outs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=root).stdout)
    assert outs[0] == outs[1] and outs[0].startswith("{")


def test_every_preemption_rule_and_the_debug_overdraft_are_compiled_with_their_callers() -> None:
    """The victim searches (compiled) ask the rules of ``core.preemption`` per job and
    ``ClusterState.within_caps`` asks the debug overdraft per capped candidate: a module left
    out of ``HOT`` runs interpreted, and each such call is a generic one (``within_team`` and
    ``thrown_away_once`` were: 110 M instructions of a 3-day ``ai2`` run's cap searches)."""
    import pkgutil

    import allotment.core.preemption as pre

    rules = {f"{pre.__name__}.{m.name}" for m in pkgutil.iter_modules(pre.__path__)}
    assert rules - set(_compiled.HOT) == set()
    assert "allotment.core.debug_overdraft" in _compiled.HOT
