"""Run a replay: submit at trace times, apply node health events, reconcile alongside, collect.

The reconciler ticks in active mode on the grid of the reconcile interval (``_tick_on_grid``),
on a health file the replay writes (``<state>/health.txt``): a trace's ``unhealthy`` node event
adds the node there, ``healthy`` removes it, and the reconciler drains and resumes as it would
for a real health check.  A second thread sleeps until each submission's time and runs
``sbatch``, so a slow tick never delays a submission.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from allotment.backends.slurm.runner import Runner
from allotment.compile.model import CompiledConfig
from allotment.core.jobs import JobSpec, NodeEvent
from allotment.errors import BackendError
from allotment.reconcile.loop import StopFlag, next_tick
from allotment.reconcile.observation_file import OBSERVATION_FILE
from allotment.reconcile.reconciler import Reconciler
from allotment.reconcile.replay.collect import (
    SACCT_FIELDS,
    ScriptTime,
    events_from_runs,
    parse_sacct,
    script_times,
)
from allotment.reconcile.replay.events import Event
from allotment.reconcile.replay.read_times import READS_FILE, trace_reads, write_reads
from allotment.reconcile.replay.submit import TIMES_SUFFIX, Submission, submission

log = logging.getLogger(__name__)


OBSERVATIONS_FILE = "observations.jsonl"  # what each tick read, one line per tick
SACCT_FILE = "sacct.txt"  # Slurm's record of every run (``SACCT_FIELDS``, Unix seconds)
TICK_LAG_S = 0.5  # ticks run this long after each multiple of the interval: after that
# second's submissions went out, as the simulator's pass at t sees the jobs submitted at t


def aligned_origin(now: float, interval_s: float) -> float:
    """The replay's time 0: the next wall-clock multiple of the reconcile interval.  So the
    reconciler ticks at trace times ``k * interval`` (+ ``TICK_LAG_S``), where the simulator
    runs its passes, and the trace's fair-share epochs sit at a known phase from Unix time's
    (``epoch_phase``), which the simulation is shifted by."""
    step = interval_s if interval_s > 0 else 1.0
    return math.ceil(now / step) * step


def epoch_phase(t0: float, period_s: float) -> float:
    """How far the replay's time 0 lies after a fair-share epoch boundary (``core.epoch``,
    multiples of the period in Unix time on the cluster, of trace time in the simulator)."""
    return t0 % period_s if period_s > 0 else 0.0


@dataclass(slots=True)
class Replay:
    config: CompiledConfig
    cluster: str
    jobs: tuple[JobSpec, ...]
    node_events: tuple[NodeEvent, ...]
    speedup: float
    state_dir: Path
    runner: Runner
    reconciler: Reconciler
    interval_s: float = 5.0
    max_wall_s: float = 3600.0
    clock: Callable[[], float] = time.time
    t0: float = 0.0
    ids: dict[str, str] = field(default_factory=dict)  # trace id -> Slurm job id
    submitted: dict[str, float] = field(default_factory=dict)  # trace id -> wall time of sbatch
    rejected: list[Event] = field(default_factory=list)
    late_ticks: int = 0  # ticks skipped because the one before overran its slot
    # wall-clock instants of the backend's observations (read_times.ReadTimedSlurm.reads), if
    # kept: each tick's first is its decision read, later ones check its starts (``apply``)
    reads_wall: list[float] | None = None
    tick_reads: list[float] = field(default_factory=list)  # each tick's decision read (wall)
    reads: tuple[float, ...] = ()  # the same in trace seconds from time 0, after run()
    # told (jobs submitted, jobs in the trace) after each submission, from the feeding thread
    progress: Callable[[int, int], None] = lambda done, total: None

    def run(self) -> list[Event]:
        jobs_dir = self.state_dir / "jobs"
        jobs_dir.mkdir(parents=True, exist_ok=True)
        pol = self.config.policy_for(self.cluster)
        per_node = max(g.gpus_per_node for g in self.config.clusters[self.cluster].node_groups)
        subs = [
            submission(
                j,
                speedup=self.speedup,
                gpus_per_node=per_node,
                default_min_s=pol.default_min_runtime_s,
                ckpt_dir=jobs_dir,
            )
            for j in self.jobs
        ]
        for s in subs:
            (jobs_dir / f"{s.job.id}.sh").write_text(s.script, encoding="utf-8")
        health = self.state_dir / "health.txt"
        health.write_text("", encoding="utf-8")
        self.reconciler.tick()  # policy in place before the first job arrives
        stop = StopFlag()
        failed: list[BaseException] = []

        def feed() -> None:
            try:
                self._submit_all(subs, health)
                self._wait_empty()
            except BaseException as exc:  # re-raised in the main thread below
                failed.append(exc)
            finally:
                stop.set()

        # the reconciler keeps the main thread (its ledger's SQLite connection lives here);
        # submissions run in their own thread so a slow tick never delays one
        self.t0 = aligned_origin(self.clock(), self.interval_s)
        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        self._tick_on_grid(stop)
        feeder.join()
        if failed:
            raise failed[0]
        # a job that found its checkpoint unreadable restarted its work from 0 and said so
        for notes in sorted(jobs_dir.glob("*.notes")):
            log.warning("replay: %s", notes.read_text(encoding="utf-8").strip())
        # which Slurm job each trace job was, to read the audit log (by Slurm id) beside the
        # event log (by trace id)
        ids = json.dumps(self.ids, indent=1, sort_keys=True) + "\n"
        (self.state_dir / "slurm_ids.json").write_text(ids, encoding="utf-8")
        if self.reads_wall is not None:  # where the ticks read, for --compare's passes
            self.reads = trace_reads(self.tick_reads, self.t0, self.speedup)
            write_reads(self.state_dir / READS_FILE, self.reads)
        return self.collect(subs)

    def _tick_on_grid(self, stop: StopFlag) -> None:
        """Tick at ``t0 + k * interval + TICK_LAG_S``, where the simulator passes: the
        reconciler's own grid (``reconcile.loop.next_tick``, which skips the slots a tick
        overran), started at the replay's origin.  Each skipped slot is counted in
        ``late_ticks``: a pass the simulator made and the cluster did not."""
        step = self.interval_s if self.interval_s > 0 else 1.0
        deadline = self.t0 + TICK_LAG_S
        stop.wait(deadline - self.clock())
        while not stop.stopped:
            seen = len(self.reads_wall) if self.reads_wall is not None else 0
            self.reconciler.tick()
            self._keep_observation()
            if self.reads_wall is not None and len(self.reads_wall) > seen:
                self.tick_reads.append(self.reads_wall[seen])  # the read the tick decided on
            nxt = next_tick(deadline, self.clock(), step)
            missed = round((nxt - deadline) / step) - 1
            if missed > 0:
                self.late_ticks += missed
                log.warning("replay: a tick overran its slot; %d slot(s) skipped", missed)
            deadline = nxt
            stop.wait(deadline - self.clock())

    def _keep_observation(self) -> None:
        """Append what this tick read (the reconciler's ``observation.json``, which each tick
        overwrites) to ``OBSERVATIONS_FILE``: the cluster as the core saw it at every read,
        nodes of each run included, to set beside the simulation's state where the two part
        (seed 11, 2026-12-07: the audit log says what a tick decided, not where it placed it)."""
        seen = self.reconciler.state_dir / OBSERVATION_FILE
        if seen.is_file():
            with (self.state_dir / OBSERVATIONS_FILE).open("a", encoding="utf-8") as out:
                out.write(seen.read_text(encoding="utf-8").strip() + "\n")

    def _submit_all(self, subs: list[Submission], health: Path) -> None:
        timeline: list[tuple[float, int, Submission | NodeEvent]] = [(s.at, 1, s) for s in subs]
        timeline += [(e.time / self.speedup, 0, e) for e in self.node_events]
        sick: dict[str, str] = {}
        for at, _, item in sorted(timeline, key=lambda x: (x[0], x[1])):
            delay = self.t0 + at - self.clock()
            if delay > 0:
                time.sleep(delay)
            if isinstance(item, NodeEvent):
                if item.state == "unhealthy":
                    sick[item.node] = "replayed node event"
                else:
                    sick.pop(item.node, None)
                lines = "".join(f"{n} unhealthy {why}\n" for n, why in sorted(sick.items()))
                health.write_text(lines, encoding="utf-8")
                continue
            self.submitted[item.job.id] = self.clock()
            self.progress(len(self.submitted), len(subs))
            try:
                out = self.runner.write(list(item.argv))
                self.ids[item.job.id] = out.strip().split(";")[0]
            except BackendError as exc:
                log.warning("sbatch of %s failed: %s", item.job.id, exc)
                self.rejected.append(
                    Event(
                        round(at * self.speedup, 3),
                        "reject",
                        item.job.id,
                        item.job.account,
                        item.job.gpus,
                        item.nodes,
                        reason=str(exc)[:200],
                        kind=item.job.kind,
                    )
                )

    def _wait_empty(self) -> None:
        deadline = self.t0 + self.max_wall_s
        mine = set(self.ids.values())
        while self.clock() < deadline:
            try:
                queued = set(self.runner.read(["squeue", "-h", "-o", "%i"]).split())
            except BackendError:
                queued = mine
            if not queued & mine:
                return
            time.sleep(2.0)
        log.warning("replay: jobs still queued after %.0f s; cancelling them", self.max_wall_s)
        self.runner.write(["scancel", *sorted(mine)])

    def collect(self, subs: list[Submission]) -> list[Event]:
        epoch = Runner({**self.runner.env, "SLURM_TIME_FORMAT": "%s"}, self.runner.timeout_s)
        argv = ["sacct", "-D", "-X", "-n", "-P", "-a", "-o", SACCT_FIELDS]
        text = epoch.read([*argv, "-j", ",".join(sorted(self.ids.values()))]) if self.ids else ""
        (self.state_dir / SACCT_FILE).write_text(text, encoding="utf-8")  # every run's nodes too
        by_name = {f"replay-{s.job.id}": s.job for s in subs}
        allocated = {s.job.id: "unallocated" not in s.argv for s in subs}
        audit = self.reconciler.audit.read()
        own: dict[str, tuple[ScriptTime, ...]] = {}
        for s in subs:
            f = self.state_dir / "jobs" / f"{s.job.id}{TIMES_SUFFIX}"
            own[s.job.id] = script_times(f.read_text(encoding="utf-8")) if f.is_file() else ()
        events = events_from_runs(
            parse_sacct(text), by_name, audit, t0=self.t0, speedup=self.speedup, allocated=allocated,
            script_times=own,
        )
        first: dict[str, float] = {}
        for e in sorted(events, key=lambda e: e.t):
            if e.event == "start" and e.job:
                first.setdefault(e.job, e.t)
        for s in subs:
            if s.job.id in self.ids:
                at = round((self.submitted[s.job.id] - self.t0) * self.speedup, 3)
                at = min(at, first.get(s.job.id, at))  # sacct's whole seconds
                events.append(
                    Event(
                        at,
                        "submit",
                        s.job.id,
                        s.job.account,
                        s.job.gpus,
                        s.nodes,
                        allocated[s.job.id],
                        kind=s.job.kind,
                    )
                )
        return events + self.rejected
