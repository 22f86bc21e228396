"""A demo cluster that lives: ``allot reconcile --backend sim --workload ai2`` feeds the simulated
backend a workload in real time (compressed by ``--speedup``), so the live page, ``allot status
--state``, ``allot usage`` and ``allot explain --state`` show real queues, starts, requeues and
ends instead of an empty cluster.

What a job does, as ``allot replay`` does it on a real Slurm (``replay.submit``, whose rules
are reused): it is submitted at its trace time divided by the speedup, under its account and
the QOS of its compressed minimum runtime (0: ``unallocated``); it runs its compressed work and
is then finished; a requeue loses the run unless the job is resumable (a resumable job keeps
every second it ran, as a continuously checkpointing one does).  A job that depends on others
(the ``ai2`` scenario's closed-loop streams) is submitted once they have ended.

What the simulated backend cannot carry is left out and counted in the first log line: jobs
larger than one node (it places a job on one node), and jobs of a user with no association to
the account (the job runs as another member of the account when there is one).

The feed's own progress (its origin on the wall clock, the next job, the backend's id of each
submitted job) is kept in ``feed.json`` beside ``sim.json``, so a restarted reconciler goes on
feeding the same cluster.  Time is an argument (``step(now)``); nothing here reads a clock.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from allotment.backends.policy import UNALLOCATED_QOS, default_tier
from allotment.backends.simulated import SimulatedBackend
from allotment.core.jobs import JobSpec
from allotment.errors import BackendError, UsageError
from allotment.reconcile.replay.submit import compressed, tier_seconds
from allotment.reconcile.state_errors import StateFileError, write_atomic
from allotment.strict_json import loads_finite

log = logging.getLogger(__name__)
FEED_FILE = "feed.json"


@dataclass(frozen=True, slots=True)
class FeedJob:
    """A workload job as the simulated backend gets it (times in wall seconds from the origin)."""

    spec: JobSpec
    at_s: float  # when it is submitted, at the earliest
    work_s: float  # how long it runs when never interrupted
    qos: str


@dataclass(slots=True)
class Feed:
    label: str  # "<workload> x<speedup>", to refuse feeding another workload into the same cluster
    origin: float  # wall time of the workload's time 0
    jobs: tuple[FeedJob, ...]  # in submission order
    next: int = 0  # the first job whose time has not come
    ids: dict[str, str] = field(default_factory=dict)  # workload job id -> backend job id
    done: set[str] = field(default_factory=set)  # workload jobs that ended (or were skipped)
    left_out: dict[str, int] = field(default_factory=dict)  # why -> jobs skipped
    waiting: list[int] = field(default_factory=list)  # jobs due, waiting for their dependencies
    _ids_cache: set[str] | None = None

    def step(self, backend: SimulatedBackend, now: float) -> int:
        """Finish the jobs whose work is done, then submit the jobs whose time has come; returns
        how many changes were made."""
        changed = self._finish(backend, now)
        return changed + self._submit(backend, now)

    def _finish(self, backend: SimulatedBackend, now: float) -> int:
        by_backend = {b: w for w, b in self.ids.items() if w not in self.done}
        if not by_backend:
            return 0
        work = {j.spec.id: j for j in self.jobs}
        obs = backend.observe()
        ran: dict[str, float] = {}  # a resumable job keeps what its earlier runs did
        for r in backend.history(0.0):
            w = by_backend.get(r.id)
            if w is not None and work[w].spec.resumable:
                ran[w] = ran.get(w, 0.0) + (r.end - r.start)
        n = 0
        live = set()
        for j in obs.jobs:
            w = by_backend.get(j.id)
            if w is None:
                continue
            live.add(j.id)
            if j.state == "running" and j.start is not None and ran.get(w, 0.0) + (obs.at - j.start) >= work[w].work_s:
                backend.finish(j.id)
                self.done.add(w)
                n += 1
        for b, w in by_backend.items():  # cancelled by the reconciler (refused at submission)
            if b not in live:
                self.done.add(w)
        return n

    def _submit(self, backend: SimulatedBackend, now: float) -> int:
        while self.next < len(self.jobs) and self.origin + self.jobs[self.next].at_s <= now:
            self.waiting.append(self.next)  # its time has come; it may still wait for others
            self.next += 1
        members = _members(backend)
        per_node = max((n.gpus for n in backend.observe().nodes), default=0)
        n, still = 0, []
        for i in self.waiting:
            j = self.jobs[i]
            if any(d not in self.done for d in self._deps(j)):
                still.append(i)  # a stream's next job waits for the one before, as people do
                continue
            n += self._submit_one(backend, j, members, per_node)
        self.waiting = still
        return n

    def _submit_one(
        self, backend: SimulatedBackend, j: FeedJob, members: dict[str, tuple[str, ...]], per_node: int
    ) -> int:
        user = _user(j.spec, members)
        if j.spec.gpus > per_node:
            why = "larger than one node (the sim backend places a job on one node)"
        elif user is None:
            why = "no member of the account to run it"
        else:
            try:
                self.ids[j.spec.id] = backend.submit(
                    j.spec.account.lower(), j.spec.gpus, user=user, qos=j.qos, resumable=j.spec.resumable
                )
                return 1
            except BackendError as exc:
                why = str(exc)
        self.done.add(j.spec.id)  # left out: a job waiting for it goes on without it
        if why not in self.left_out:
            log.warning("demo workload: %s left out (and every other job for the same reason): %s", j.spec.id, why)
        self.left_out[why] = self.left_out.get(why, 0) + 1
        return 0

    def _deps(self, j: FeedJob) -> tuple[str, ...]:
        return tuple(d for d in j.spec.depends_on if d in self._known and d != j.spec.id)

    @property
    def _known(self) -> set[str]:
        if self._ids_cache is None:
            self._ids_cache = {x.spec.id for x in self.jobs}
        return self._ids_cache

    def to_json(self) -> dict[str, object]:
        return {
            "label": self.label, "origin": self.origin, "next": self.next, "ids": self.ids,
            "done": sorted(self.done), "left_out": self.left_out, "waiting": self.waiting,
        }


def make_feed(
    jobs: Sequence[JobSpec],
    *,
    label: str,
    origin: float,
    speedup: float,
    default_min_s: int,
    tiers_s: tuple[int, ...],
) -> Feed:
    """The workload compressed by ``speedup``, in submission order (then id); each job in the
    QOS a user would pick among the reconciler's ``tiers_s`` for its compressed minimum runtime
    (the largest tier not above it)."""
    if not speedup > 0 or math.isinf(speedup):
        raise UsageError(f"--speedup {speedup:g}: expected a positive number")
    out = []
    for s in sorted(jobs, key=lambda s: (s.submit, s.id)):
        tier = tier_seconds(s, default_min_s, speedup)
        qos = UNALLOCATED_QOS if tier == 0 else default_tier(tiers_s, tier)
        out.append(FeedJob(s, compressed(s.submit, speedup), max(1.0, compressed(s.work, speedup)), qos))
    return Feed(label, origin, tuple(out))


def restore(feed: Feed, state_dir: Path) -> Feed:
    """The feed as ``feed.json`` left it (a restarted reconciler goes on), or ``feed`` when there
    is none; StateFileError when it fed another workload."""
    path = state_dir / FEED_FILE
    if not path.exists():
        return feed
    try:
        raw = loads_finite(path.read_text(encoding="utf-8"))
        if raw["label"] != feed.label:
            raise StateFileError(
                f"{path}: feeds {raw['label']}, not {feed.label}; move it and sim.json aside to start over"
            )
        feed.origin, feed.next = float(raw["origin"]), int(raw["next"])
        feed.ids = {str(k): str(v) for k, v in raw["ids"].items()}
        feed.done = {str(x) for x in raw["done"]}
        feed.left_out = {str(k): int(v) for k, v in raw.get("left_out", {}).items()}
        feed.waiting = [int(i) for i in raw.get("waiting", [])]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StateFileError(f"{path}: not a demo feed file ({exc})") from None
    return feed


def save(feed: Feed, state_dir: Path) -> None:
    write_atomic(state_dir / FEED_FILE, json.dumps(feed.to_json(), sort_keys=True, indent=1) + "\n")


def _members(backend: SimulatedBackend) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for u in backend.observe_policy().users:
        for a in u.accounts:
            out.setdefault(a, []).append(u.name)
    return {a: tuple(sorted(us)) for a, us in out.items()}


def _user(spec: JobSpec, members: dict[str, tuple[str, ...]]) -> str | None:
    us = members.get(spec.account.lower(), ())
    return spec.user if spec.user in us else (us[0] if us else None)
