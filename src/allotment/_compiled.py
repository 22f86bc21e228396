"""The hot modules compiled with mypyc, and a guard against stale builds.

``pip install`` (editable or not) compiles ``HOT`` with mypyc (see ``setup.py``): the same source,
run about twice as fast, with the same results byte for byte (the test suite runs on whatever is
installed, and the simulator's outputs are golden-tested).  An extension module sits next to its
``.py`` and Python imports it first; if someone edits a ``.py`` after the build, the stale
extension would silently run old code.  ``use_fresh_sources`` (called by ``allotment/__init__``)
then routes every hot module to its source instead, all of them at once because compiled
modules call each other natively.  ``ALLOTMENT_PURE=1`` does the same on purpose.

Standard library only: ``setup.py`` reads ``HOT`` before any dependency is installed.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

HOT: tuple[str, ...] = (
    "allotment.core.ids",
    "allotment.core.state",
    "allotment.core.debug",
    "allotment.core.contract",
    "allotment.core.placement",
    "allotment.core.usage",
    "allotment.core.fairshare",
    "allotment.core.queues",
    "allotment.core.accounting",
    "allotment.core.tiers",
    "allotment.core.epoch",
    "allotment.core.weights",
    "allotment.core.boosts",
    "allotment.core.inherited",
    "allotment.core.priority",
    "allotment.core.candidates",
    "allotment.core.modes",
    "allotment.core.walk",
    "allotment.core.reservation",
    "allotment.core.preemption.view",
    "allotment.core.preemption.caps",
    "allotment.core.preemption.terms",
    "allotment.core.preemption.victims",
    "allotment.core.preemption.slicing",
    "allotment.core.preemption.debug_slice",
    "allotment.core.preemption.retry",
    "allotment.core.cluster",
    "allotment.core.pass_inputs",
    "allotment.core.starting",
    "allotment.core.scheduler",
    "allotment.sim.signals",
    "allotment.sim.events",
    "allotment.sim.summary",
    "allotment.sim.metrics",
    "allotment.sim.eventlog",
    "allotment.sim.runner",
)

_SRC = Path(__file__).resolve().parent.parent
_MODE = "pure Python"


def _paths(name: str) -> tuple[Path, list[Path]]:
    rel = Path(*name.split("."))
    py = _SRC / rel.with_suffix(".py")
    exts = [
        py.with_name(rel.name + suffix)
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
        if py.with_name(rel.name + suffix).exists()
    ]
    return py, exts


class _SourceFirst:
    """Finds the hot modules as plain source, ahead of their compiled extensions.

    A meta path finder by its ``find_spec`` alone: subclassing ``importlib.abc.MetaPathFinder``
    would import ``importlib.abc`` and with it ``importlib.resources``, tempfile and zipfile, a
    third of ``allot --version``'s start-up, on every command."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in HOT:
            return None
        py, _ = _paths(fullname)
        return importlib.util.spec_from_file_location(fullname, py)


def use_fresh_sources() -> None:
    global _MODE
    found = [_paths(n) for n in HOT]
    compiled = all(exts for _, exts in found)
    stale = any(py.stat().st_mtime > max(e.stat().st_mtime for e in exts) for py, exts in found if exts)
    forced = os.environ.get("ALLOTMENT_PURE") == "1"
    if forced or (compiled and stale) or not compiled:
        if any(exts for _, exts in found):  # some extension exists but must not be used
            sys.meta_path.insert(0, _SourceFirst())
        why = (
            " (ALLOTMENT_PURE=1)"
            if forced
            else " (compiled modules are older than their source)" if compiled and stale else ""
        )
        _MODE = "pure Python" + why
    else:
        _MODE = "compiled with mypyc"


def mode() -> str:
    """How the hot modules run: ``compiled with mypyc`` or ``pure Python``."""
    return _MODE
