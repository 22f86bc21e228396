"""The hot modules compiled with mypyc, and a guard against stale builds.

``pip install`` (editable or not) compiles ``HOT`` with mypyc (see ``setup.py``): the same source,
run about twice as fast, with the same results byte for byte (the test suite runs on whatever is
installed, and the simulator's outputs are golden-tested).  An extension module sits next to its
``.py`` and Python imports it first; if someone edits a ``.py`` after the build, the stale
extension would silently run old code.  ``use_fresh_sources`` (called by ``allotment/__init__``)
then routes every hot module to its source instead, all of them at once because compiled
modules call each other natively.  ``ALLOTMENT_PURE=1`` does the same on purpose.

Fresh means *same content*: ``setup.py`` records the SHA-256 of every source it compiles in
``_compiled_sources.json`` (``write_record``), and a module is stale when its ``.py`` no longer
hashes to that.  Timestamps cannot tell: a wheel or ``pip install .`` writes the ``.py`` files
after the extensions, so every fresh install looked stale and ran pure Python (issue 26).  A
build from before the record exists is still judged by timestamps.

How the modules run is said once, in ``allot --version`` (``mode``), with the reason when pure.

Standard library only: ``setup.py`` reads ``HOT`` before any dependency is installed.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

HOT: tuple[str, ...] = (
    "allotment.core.ids",
    "allotment.core.state",
    "allotment.core.debug",
    "allotment.core.starvation",
    "allotment.core.contract",
    "allotment.core.placement",
    "allotment.core.usage",
    "allotment.core.fairshare",
    "allotment.core.sorted_pairs",  # bisect/insort on pairs and keys, natively (not on boxed tuples)
    "allotment.core.queues",
    "allotment.core.accounting",
    "allotment.core.tiers",
    "allotment.core.epoch",
    "allotment.core.weights",
    "allotment.core.boosts",
    "allotment.core.dependant_list",
    "allotment.core.inherited",
    "allotment.core.priority",
    "allotment.core.within_team_arrays",
    "allotment.core.loose_order",
    "allotment.core.fairness_merge",
    "allotment.core.candidates",
    "allotment.core.modes",
    "allotment.core.walk",
    "allotment.core.reservation",
    "allotment.core.session_pool",
    "allotment.core.preemption.view",
    # the two rules every own-team victim test reads (caps._class, victims._Classifier): left
    # out, each was a generic call into interpreted code, 72k of them from the cap searches of a
    # 3-day ``ai2`` run (110 M instructions)
    "allotment.core.preemption.thrown_away_once",
    "allotment.core.preemption.within_team",
    "allotment.core.preemption.caps",
    "allotment.core.preemption.terms",
    "allotment.core.preemption.futile_reclaim",
    "allotment.core.preemption.victims",
    "allotment.core.preemption.slicing",
    "allotment.core.preemption.debug_slice",
    "allotment.core.preemption.gang_sparing",
    "allotment.core.preemption.retry",
    "allotment.core.preemption.kept_pick",
    "allotment.core.decisions",  # the pass's records written once, built by compiled __init__s
    # ClusterState.grace_of asks it per victim considered and per protection ended (an
    # interpreted call each: 37 M instructions in 3 days of ``ai2-big-gangs``)
    # the one recognition rule of a session, asked per pending job and per victim's grace from
    # compiled code (an interpreted call with keywords each: 44 M instructions in 3 days of
    # ``ai2-big-gangs``); the class pickles through its own ``__reduce__``
    "allotment.compile.interactive",
    "allotment.core.session_grace",
    "allotment.core.debug_overdraft",  # ClusterState.within_caps asks it per capped candidate
    "allotment.core.pair_heap",  # ClusterState's protections, sifted natively (not heapq on tuples)
    "allotment.core.cluster",
    "allotment.core.pass_inputs",
    "allotment.core.fast_walk",
    "allotment.core.starting",
    "allotment.core.scheduler",
    "allotment.core.order",
    "allotment.core.drain",
    "allotment.sim.signals",
    "allotment.sim.events",
    "allotment.sim.summary",
    "allotment.sim.metrics",
    "allotment.sim.eventlog",
    "allotment.sim.runner",
    "allotment.sim.known_dependencies",  # called at each arrival, end and pass
    "allotment.sim.event_queue",  # the run's event heap, sifted natively (not heapq on tuples)
    "allotment.sim.settled",
    "allotment.sim.job_kind",
    # interpreted, every append of a wait or a completion time was a generic call from the
    # compiled recorder and summary; a paused run's copy goes through its own __deepcopy__
    "allotment.sim.spilled_doubles",
    # a trace replayed line by line (``allot simulate --trace``): every job line is decoded and
    # checked twice (the checking pass, then the replay), each time into a ``JobSpec``; and the
    # compiled core reads a job's fields natively only when its class is compiled.  JobSpec and
    # NodeEvent pickle through their own ``__reduce__`` (see the note on sim.latency below).
    "allotment.core.jobs",
    "allotment.traces.bounds",
    "allotment.traces.line_checker",
    "allotment.traces.job_lines",
    "allotment.traces.reader",
    "allotment.traces.trace_stream",
    # every ``--scenario`` run and every plan unit draws its workload first: 178k shapes and 77k
    # jobs for 30 days of ``ai2`` (100k of the shapes the fixed-seed mean), interpreted
    "allotment.traces.scenarios.ai2",
    # Not sim.latency (its calls from the runner are 0.5% of a Philly-shaped run): a compiled
    # frozen dataclass does not unpickle (its __setattr__ refuses), and plan's worker pool
    # pickles the profile.
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


RECORD = "_compiled_sources.json"  # next to this file: {module: sha256 of the source compiled}


def source_digest(py: Path) -> str:
    import hashlib  # here, not at the top: ``allot --version`` imports this module

    return hashlib.sha256(py.read_bytes()).hexdigest()


def write_record(src: Path) -> Path:
    """Called by ``setup.py`` as it compiles: the digest of every hot module's source."""
    out = src / "allotment" / RECORD
    digests = {n: source_digest(src / Path(*n.split(".")).with_suffix(".py")) for n in HOT}
    out.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    return out


def _read_record(src: Path) -> dict[str, str] | None:
    try:
        data = json.loads((src / "allotment" / RECORD).read_text())
    except (OSError, ValueError):
        return None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else None


def stale_modules(
    found: Mapping[str, tuple[Path, list[Path]]], record: Mapping[str, str] | None
) -> list[str]:
    """The compiled modules whose source changed since the build: by content when the build
    left a record, else (an older build) by timestamp."""
    if record is not None:
        return [n for n, (py, exts) in found.items() if exts and record.get(n) != source_digest(py)]
    return [
        n for n, (py, exts) in found.items()
        if exts and py.stat().st_mtime > max(e.stat().st_mtime for e in exts)
    ]


def judge(
    found: Mapping[str, tuple[Path, list[Path]]], record: Mapping[str, str] | None, forced: bool
) -> str:
    """``compiled with mypyc``, or ``pure Python (why)``: the one rule for which code runs."""
    if forced:
        return "pure Python (ALLOTMENT_PURE=1)"
    if not all(exts for _, exts in found.values()):
        return "pure Python (not compiled)"
    if stale_modules(found, record):
        return (
            "pure Python (a source changed since the build: reinstall)"
            if record is not None
            else "pure Python (compiled modules are older than their source)"
        )
    return "compiled with mypyc"


def use_fresh_sources() -> None:
    global _MODE
    found = {n: _paths(n) for n in HOT}
    _MODE = judge(found, _read_record(_SRC), os.environ.get("ALLOTMENT_PURE") == "1")
    if _MODE != "compiled with mypyc" and any(exts for _, exts in found.values()):
        sys.meta_path.insert(0, _SourceFirst())  # some extension exists but must not be used


def mode() -> str:
    """How the hot modules run: ``compiled with mypyc`` or ``pure Python (why)``."""
    return _MODE
