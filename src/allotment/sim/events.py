"""The per-job event log: the public record of what the scheduler did in one simulated run.

One ``Event`` per thing that happened (a job submitted, started, preempted, ended, rejected,
reserved for; a node drained or resumed), in time order; equal times keep the order in which
the simulator applied them (docs/trace-format.md, "Event log").  The log is the *only* input of
the metrics: the simulator's ``Recorder`` consumes these events as they are emitted, and
``metrics_from_events`` replays a saved log through the very same ``Recorder``, so each metric
has one definition and a log reproduces ``allot simulate --json`` exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from allotment.core.set_once import refuse_delete, refuse_second_write

EVENT_FORMAT_VERSION = 1
EVENT_KINDS = ("submit", "eligible", "start", "preempt", "end", "reject", "reserve", "release", "drain", "resume",
               "notice")
# the values of ``state`` on a ``drain`` event (a node failure, its emptying, a human needed)
DRAIN_STATES = ("unhealthy", "ready-for-repair", "needs-human")
# the fields of an ``Event``, in the order of its constructor and of a JSON line
_FIELDS: Final = (
    "t", "event", "job", "account", "gpus", "nodes", "node_gpus", "allocated", "charged_gpus",
    "min_runtime", "held", "by", "rule", "requeued", "lost_gpu_hours", "charged_gpu_hours", "at",
    "node", "state", "reason", "kind", "chain", "chain_jobs", "deadline",
)  # fmt: skip


class Event:
    """One line of the log.  Fields that do not apply to an event kind stay ``None`` and are
    left out of the JSON line.

    Immutable like a frozen dataclass (assigning or deleting a field raises
    ``FrozenInstanceError``; equal when every field is equal; hashable), but a plain class in a
    compiled module: the simulator builds one per event, and a frozen dataclass's ``__init__``
    runs interpreted even under mypyc (one ``object.__setattr__`` per field), about 31K
    instructions per event against 1.2K for this class compiled (a ``NamedTuple``, 7.7K, also
    reads its fields generically and compares equal to a plain tuple).  Compiled, the ``Final``
    fields have no setter and ``__init__`` stores them directly; ``__setattr__`` only refuses a
    second write, which is what keeps the interpreted class (``ALLOTMENT_PURE=1``) immutable too.
    ``replace`` stands in for ``dataclasses.replace``.  Compiled, the constructor also checks
    the fields' types (an integral ``t`` read from a hand-written log becomes a float); the
    simulator's own events are unchanged byte for byte."""

    __slots__ = _FIELDS

    def __init__(
        self,
        t: float,  # seconds from the run's t = 0
        event: str,  # one of EVENT_KINDS
        job: str | None = None,
        account: str | None = None,  # the leaf charged
        gpus: int | None = None,
        nodes: tuple[str, ...] | None = None,  # start: where it runs; reserve: the nodes held
        node_gpus: tuple[int, ...] | None = None,  # start: GPUs on each of ``nodes``
        allocated: bool | None = None,  # start: charged (False: runs as unallocated work)
        charged_gpus: float | None = None,  # start: reference GPUs charged per hour (billing weights)
        min_runtime: float | None = None,  # submit: the minimum runtime after the policy default and cap
        held: bool | None = None,  # submit: waits for dependencies (an ``eligible`` event follows)
        by: str | None = None,  # preempt, notice: the job that needed the GPUs
        rule: str | None = None,  # preempt, notice: unallocated | reservation | within-team | reclaim | debug-slice | consolidate | drain
        requeued: bool | None = None,  # preempt: back in the queue (False: cancelled by policy)
        lost_gpu_hours: float | None = None,  # preempt: GPUs x progress thrown away
        charged_gpu_hours: float | None = None,  # end: reference GPU-hours charged over all its runs
        at: float | None = None,  # reserve: the planned start; notice: the end of the grace
        node: str | None = None,  # drain / resume
        state: str | None = None,  # drain: one of DRAIN_STATES
        reason: str | None = None,
        kind: str | None = None,  # submit: the job's kind by the policy (sim/job_kind.py)
        chain: str | None = None,  # submit: the chain of dependent jobs it is in (sim/chains.py)
        chain_jobs: int | None = None,  # submit: how many jobs that chain has in the workload
        deadline: float | None = None,  # submit: when it should have ended (seconds from t = 0)
    ) -> None:
        self.t: Final = t
        self.event: Final = event
        self.job: Final = job
        self.account: Final = account
        self.gpus: Final = gpus
        self.nodes: Final = nodes
        self.node_gpus: Final = node_gpus
        self.allocated: Final = allocated
        self.charged_gpus: Final = charged_gpus
        self.min_runtime: Final = min_runtime
        self.held: Final = held
        self.by: Final = by
        self.rule: Final = rule
        self.requeued: Final = requeued
        self.lost_gpu_hours: Final = lost_gpu_hours
        self.charged_gpu_hours: Final = charged_gpu_hours
        self.at: Final = at
        self.node: Final = node
        self.state: Final = state
        self.reason: Final = reason
        self.kind: Final = kind
        self.chain: Final = chain
        self.chain_jobs: Final = chain_jobs
        self.deadline: Final = deadline

    def __setattr__(self, name: str, value: object) -> None:
        refuse_second_write(self, name)  # the first is __init__'s (interpreted only)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        refuse_delete(name)

    def astuple(self) -> tuple[Any, ...]:
        """Every field, in ``_FIELDS`` order."""
        return (
            self.t, self.event, self.job, self.account, self.gpus, self.nodes, self.node_gpus,
            self.allocated, self.charged_gpus, self.min_runtime, self.held, self.by, self.rule,
            self.requeued, self.lost_gpu_hours, self.charged_gpu_hours, self.at, self.node,
            self.state, self.reason, self.kind, self.chain, self.chain_jobs, self.deadline,
        )  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return self.astuple() == other.astuple()

    def __hash__(self) -> int:
        return hash(self.astuple())

    def __repr__(self) -> str:
        return "Event(" + ", ".join(f"{f}={v!r}" for f, v in zip(_FIELDS, self.astuple(), strict=True)) + ")"

    def replace(self, **changes: Any) -> Event:
        """A copy with ``changes`` applied (what ``dataclasses.replace`` does for a dataclass)."""
        kw: dict[str, Any] = dict(zip(_FIELDS, self.astuple(), strict=True))
        for k in changes:
            if k not in kw:
                raise TypeError(f"Event has no field {k!r}")
        kw.update(changes)
        return Event(**kw)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f, v in zip(_FIELDS, self.astuple(), strict=True):
            if v is not None:
                out[f] = list(v) if isinstance(v, tuple) else v
        return out


_TUPLES = ("nodes", "node_gpus")


def event_from_json(d: Mapping[str, Any]) -> Event:
    kw: dict[str, Any] = {k: (tuple(v) if k in _TUPLES else v) for k, v in d.items()}
    return Event(**kw)


@dataclass(frozen=True, slots=True)
class RunHeader:
    """The static inputs the metrics need besides the events: the first line of an events file."""

    policy: str
    cluster: str
    seed: int
    end: float  # the measurement window is [0, end)
    capacity_gpus: int
    nodes: Mapping[str, int]  # node -> GPUs
    entitlement_gpus: Mapping[str, float]  # leaf -> GPUs on a fully healthy cluster (max_gpus applied)
    ceilings: Mapping[str, float]  # leaf -> tightest max_gpus on its path (absent: uncapped)
    debug_threshold_s: float
    debug_max_gpus: int  # a debug job fits on one node (docs/metrics.md)
    format_version: int = EVENT_FORMAT_VERSION
    teams: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "header",
            "format_version": self.format_version,
            "policy": self.policy,
            "cluster": self.cluster,
            "seed": self.seed,
            "end": self.end,
            "capacity_gpus": self.capacity_gpus,
            "nodes": dict(self.nodes),
            "teams": list(self.teams),
            "entitlement_gpus": dict(self.entitlement_gpus),
            "ceilings": dict(self.ceilings),
            "debug_threshold_s": self.debug_threshold_s,
            "debug_max_gpus": self.debug_max_gpus,
        }

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> RunHeader:
        if d.get("event") != "header" or d.get("format_version") != EVENT_FORMAT_VERSION:
            raise ValueError("not an allotment event log (format_version 1 header expected)")
        return RunHeader(
            policy=d["policy"],
            cluster=d["cluster"],
            seed=d["seed"],
            end=d["end"],
            capacity_gpus=d["capacity_gpus"],
            nodes=dict(d["nodes"]),
            entitlement_gpus=dict(d["entitlement_gpus"]),
            ceilings=dict(d["ceilings"]),
            debug_threshold_s=d["debug_threshold_s"],
            debug_max_gpus=d["debug_max_gpus"],
            teams=tuple(d["teams"]),
        )


def metrics_from_events(header: RunHeader, events: Iterable[Event]) -> dict[str, Any]:
    """Every metric of ``allot simulate --json``, recomputed from a log alone."""
    from allotment.sim.metrics import Recorder

    rec = Recorder(header)
    for e in events:
        rec.consume(e)
    return rec.summary()


def first_waits_by_kind(header: RunHeader, events: Iterable[Event]) -> dict[str, list[float]]:
    """Every job's first-start wait, per job kind (``sim.job_kind``), recomputed from a log: the
    very lists whose percentiles are ``metrics.json``'s ``wait``, for a view that draws their
    distribution (``allot report``) and must show the same numbers."""
    from allotment.sim.job_kind import JOB_KINDS
    from allotment.sim.metrics import Recorder
    from allotment.sim.summary import waits

    rec = Recorder(header)
    for e in events:
        rec.consume(e)
    first = waits(rec, header.end)[0]
    return {k: list(first[k]) for k in JOB_KINDS}


def dumps_line(obj: Mapping[str, Any]) -> str:
    """One JSON line: compact, keys in the dataclass order, floats in shortest round-trip form."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n"


def encode_log(header: RunHeader, events: Iterable[Event]) -> Iterator[str]:
    yield dumps_line(header.to_json())
    for e in events:
        yield dumps_line(e.to_json())


def read_log(path: str | Path) -> tuple[RunHeader, list[Event]]:
    """Read an events file written by ``allot simulate --events`` or ``--save``."""
    with open(path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if not lines:
        raise ValueError(f"{path}: empty event log")
    return RunHeader.from_json(lines[0]), [event_from_json(d) for d in lines[1:]]
