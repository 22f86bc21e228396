"""The last observation, kept in the state dir (``observation.json``) for the read-only views:
``allot explain JOB --state DIR`` names a live job by the backend's own id (a Slurm job id on
Slurm) and the live page shows the queue and the nodes, whatever the backend.  Without it only
the simulated backend's ``sim.json`` told them what runs.

One owner of the format: the writer (the reconciler, each tick, atomically) and the reader (the
views) are both here.  The shape is an ``Observation`` as ``dataclasses.asdict`` writes it (built
field by field: ``asdict``'s deep copy took 1.4 s of a 10,000-job tick's 2.4 s, this 0.1 s)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from allotment.backends.protocol import JobObs, NodeObs, Observation
from allotment.reconcile.state_errors import StateDirError, StateFileError, write_atomic
from allotment.strict_json import loads_finite

OBSERVATION_FILE = "observation.json"


def save_observation(state_dir: Path, obs: Observation) -> None:
    # fields in declaration order
    write_atomic(state_dir / OBSERVATION_FILE, json.dumps(_plain(obs), separators=(",", ":")))


def _plain(obs: Observation) -> dict[str, Any]:
    """``asdict(obs)``, shallow: every field of a node and a job is a number, a string, None or
    a tuple of those, which JSON writes as they are."""

    def row(x: NodeObs | JobObs) -> dict[str, Any]:
        return {f.name: getattr(x, f.name) for f in fields(x)}

    return {"at": obs.at, "nodes": [row(n) for n in obs.nodes], "jobs": [row(j) for j in obs.jobs],
            "backend_now": obs.backend_now}


def load_observation(state_dir: Path) -> Observation | None:
    """The observation the reconciler last saved (None when it saved none); StateFileError for
    a file that is not one."""
    path = state_dir / OBSERVATION_FILE
    if not path.exists():
        return None
    try:
        raw = loads_finite(path.read_text(encoding="utf-8"))
        backend_now = raw.get("backend_now")
        return Observation(
            float(raw["at"]),
            tuple(NodeObs(**n) for n in raw["nodes"]),
            tuple(
                JobObs(**{**j, "nodes": tuple(j.get("nodes", ())), "node_gpus": tuple(j.get("node_gpus", ())),
                          "depends_on": tuple(j.get("depends_on", ()))})
                for j in raw["jobs"]
            ),
            None if backend_now is None else float(backend_now),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StateFileError(f"{path}: not an observation ({exc})") from None
    except OSError as exc:
        raise StateDirError(f"{path}: cannot read ({exc.strerror or exc})") from exc
