"""Latency profiles: the delays a real backend adds to what the core decides, which the
simulator applies when it schedules events (``sim.runner``), so that a prediction includes what
no scheduler can avoid.

Three delays, each measured or configured on the real thing (docs/fidelity.md):

* ``cycle_s``: scheduling passes happen only at multiples of it, like the reconciler's ticks
  (0: the policy's ``reconcile_interval_s``).  A job that arrives between ticks waits for the
  next one before the core can start it.
* ``requeue_delay_s``: a requeued (preempted) job is eligible to start again only this long
  after the requeue.  Slurm sets ``EligibleTime`` = requeue + ``cred_expire`` + 1 s
  (``AuthInfo=...,cred_expire=N``, default 120 s; tests/slurm/up.sh sets 10).  Without it the
  simulator restarted a preempted job at once, and under-predicted waits after preemptions.
  It holds also when the pass that requeued a job started it again (off a draining node):
  Slurm would not run it before its eligible time (``sim.runner``).
* ``launch_delay_s``: from the pass that starts a job to the moment the backend runs it (the
  reconciler's ``scontrol update``, then Slurm's next scheduling cycle: ``sched_interval=2``
  on the test cluster, and the main scheduler also runs on each priority change and job end).
  The simulator counts it as waiting (the job's start is that much later) and keeps the GPUs
  held through it, as Slurm allocates them at the start.  The run counts from its launch
  (``ClusterState.launched``), as a reconciler's core reads the backend's start: its minimum
  runtime ends, and a preemption keeps its checkpoints, from there, not from the pass.

* ``read_s``: how long after the tick's grid instant the reconciler reads the cluster
  (``squeue`` about 0.9 s after it on the test cluster: ``allot replay`` ticks 0.5 s after
  the multiple, its reads take about 0.4 s).  With it the simulator's pass sits at that read
  instant, so it sees every arrival and end before it, as the cluster's core does; a start
  still lands ``launch_delay_s`` after the grid instant (both are measured from there).
  0 (the default, and ``slurm``'s: not measured on a production cluster): the pass sees the
  state at the grid instant.  ``slurm-test`` has 0.9 s, measured; it is the closer of the two
  on replays off the tick (issue 30, docs/fidelity.md residual 2).

* ``launches``: with ``reads``, the instants a replay's runs really started (the script's own
  start, else ``sacct``'s second) and the tick that decided each (the audit log); a start the
  simulator decides at the same read as the cluster launches when Slurm launched it, one it
  decides elsewhere after ``launch_after_pass()``.
* ``ended``: with ``reads``, the runs a replay's requeue found already ended (the reconciler
  decided the requeue at a read, the run completed before it landed: ``unchanged`` in its
  audit log, residual 3 of docs/fidelity.md); a preemption the simulator decides of that job
  at the read before that end (``ended_first``) completes the run at the pass instead, as on
  the cluster.  The simulator's preemption lands at the pass and cannot know on which side of
  the requeue's ``scontrol`` a real end a fraction of a second later fell; the cluster says.
* ``reads``: the pass schedule as it ran (``LatencyProfile.as_run``): the instants, in trace
  seconds, at which a replay's reconciler really read the cluster (``allot replay`` keeps them,
  ``reconcile/replay/read_times.py``).  With them each pass sits at the first real read at or
  after what it must see, late and skipped ticks included, and the launch still counts
  ``launch_delay_s - read_s`` from it; after the last read, the nominal grid.  Only a
  replay's comparison sets it: a plan cannot know when its ticks will run, so it predicts with
  the nominal ``read_s``; the comparison then asks whether the same observations, at the
  instants they were made, give the same decisions (docs/fidelity.md, the sixth pass).

And one thing the core cannot know on a real cluster: a job's true work.  On Slurm it is told
the job's time limit (whole minutes) instead, and plans reservations and backfill with it.
``limit_margin_s`` (None: the core knows the exact work, as in a trace) makes the simulated
core see the time limit ``time_limit_s(work, margin)`` the replay gives each job, while the job
still ends after its true work.

Profiles: ``none`` (no delay: the policy's idealized cluster), ``slurm`` (Slurm's defaults:
``cred_expire`` 120 s), ``slurm-test`` (the test cluster ``make test-fidelity`` replays on).
A profile can be adjusted with ``KEY=VALUE`` suffixes: ``slurm,requeue=31,cycle=5,limit=30``.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, replace

from allotment.core.jobs import JobSpec
from allotment.errors import UsageError
from allotment.traces.bounds import MAX_DURATION_S

LAUNCH_WINDOW_S = 3.0  # after the last read, a run start this long after a pass, at most, can
# be that pass's launch (the longest measured on the replays: 2.6 s from the read to the start)


@dataclass(frozen=True, slots=True)
class RunStart:
    """A job's run that really started at ``at`` (a replay's ``sacct`` start, trace seconds)."""

    job: str
    at: float
    decided: float | None = None  # the read of the tick that decided it, when known (audit)
    # the read of a later tick that decided it again and whose update found it still waiting
    # (audit ``applied``): the run is that decision (None: ``decided``'s)
    placed: float | None = None


@dataclass(frozen=True, slots=True)
class RunEnd:
    """A job's run that really completed at ``at`` (a replay's ``sacct`` end, trace seconds,
    the middle of its second) before the requeue the reconciler had decided for it landed."""

    job: str
    at: float


ENDED_SLACK_S = 0.5  # sacct's whole second: a real end at ``at`` was at most this much earlier


@dataclass(frozen=True, slots=True)
class LatencyProfile:
    name: str
    cycle_s: float = 0.0  # passes only at multiples of this (0: the policy's reconcile interval)
    requeue_delay_s: float = 0.0  # a requeued job is eligible again this long after the requeue
    launch_delay_s: float = 0.0  # from the pass that starts a job to its real start
    limit_margin_s: float | None = None  # the core sees time limits: work + margin, in minutes
    read_s: float = 0.0  # a pass sees what happened up to this long after its grid instant
    reads: tuple[float, ...] = ()  # as run: the replay's real read instants (sorted), or none
    launches: tuple[RunStart, ...] = ()  # as run: the replay's real run starts, or none
    ended: tuple[RunEnd, ...] = ()  # as run: runs that ended before their requeue landed

    def key(self) -> dict[str, float | str | None]:
        """Every field, for a cache key: two profiles that differ in any delay differ here."""
        return {
            "name": self.name,
            "cycle_s": self.cycle_s,
            "requeue_delay_s": self.requeue_delay_s,
            "launch_delay_s": self.launch_delay_s,
            "limit_margin_s": self.limit_margin_s,
            # only when set: every profile without it keeps its key (and plans their cache)
            **({"read_s": self.read_s} if self.read_s else {}),
            **({"reads": " ".join(f"{r:g}" for r in self.reads)} if self.reads else {}),
            **({"launches": " ".join(f"{s.job}@{s.at:g}" for s in self.launches)}
               if self.launches else {}),
            **({"ended": " ".join(f"{e.job}@{e.at:g}" for e in self.ended)} if self.ended else {}),
        }

    def spec(self) -> str:
        """The ``--profile`` text that gives this profile back (``parse_profile``): its name
        and every delay that differs from the named profile's, ``slurm,requeue=11``."""
        base = PROFILES.get(self.name, NONE)
        sets = [
            f"{key}={getattr(self, field):g}"
            for key, field in _KEYS.items()
            if getattr(self, field) != getattr(base, field) and getattr(self, field) is not None
        ]
        return ",".join([self.name, *sets])

    def describe(self) -> str:
        """``slurm (cycle 0 s, requeue 121 s, launch 1 s)``: how a report names the profile."""
        limit = "" if self.limit_margin_s is None else f", limit +{self.limit_margin_s:g} s"
        limit += f", read +{self.read_s:g} s" if self.read_s else ""
        limit += f", passes at {len(self.reads)} reads as run" if self.reads else ""
        cycle = f"{self.cycle_s:g} s" if self.cycle_s > 0 else "the reconcile interval"
        return (
            f"{self.name} (cycle {cycle}, requeue {self.requeue_delay_s:g} s, "
            f"launch {self.launch_delay_s:g} s{limit})"
        )

    def pass_interval(self, reconcile_interval_s: float) -> float:
        return self.cycle_s if self.cycle_s > 0 else reconcile_interval_s

    @property
    def off_grid(self) -> bool:
        """Do passes sit anywhere but on the grid instants (``pass_at`` places them)?"""
        return bool(self.read_s or self.reads)

    def as_run(
        self, reads: tuple[float, ...], launches: tuple[RunStart, ...] = (),
        ended: tuple[RunEnd, ...] = (),
    ) -> LatencyProfile:
        """This profile with the pass schedule a replay really ran (``reads``, trace seconds)
        and, if given, the instants its runs really started (``launch_after``) and the runs
        its requeues found ended (``ended_first``).
        A read within ``launch_after_pass()`` of the one kept before it is dropped: a pass
        must not come before the last one's starts launch (on the cluster a tick's read is
        at least 1.3 s after the one before; a skipped slot makes it more)."""
        kept: list[float] = []
        for r in sorted(reads):
            if not kept or r - kept[-1] >= self.launch_after_pass():
                kept.append(r)
        at_read = tuple(kept)

        def read_of(tick: float | None) -> float | None:  # a tick's decision read: its first
            if tick is None:
                return None
            i = bisect.bisect_left(at_read, round(tick, 9) - 1e-9)
            return at_read[i] if i < len(at_read) else None

        ordered = tuple(sorted((replace(s, decided=read_of(s.decided), placed=read_of(s.placed)) for s in launches),
                               key=lambda s: (s.at, s.job)))
        ends = tuple(sorted(ended, key=lambda e: (e.at, e.job)))
        return replace(self, reads=tuple(kept), launches=ordered, ended=ends)

    def pass_at(self, now: float, tick: float) -> float:
        """The first pass at or after ``now``: the next grid instant, plus ``read_s``; with
        ``reads``, the first real read at or after ``now`` (the nominal grid after the last)."""
        if self.reads:
            i = bisect.bisect_left(self.reads, round(now, 9) - 1e-9)
            if i < len(self.reads):
                return self.reads[i]
        if tick <= 0:
            return now
        k = math.ceil(round((now - self.read_s) / tick, 9))  # an event at a pass: that pass
        return k * tick + self.read_s

    def launch_after_pass(self) -> float:
        """From the pass to the run's start: the launch counts from the grid instant."""
        return max(0.0, self.launch_delay_s - self.read_s)

    def same_launch(self) -> float | None:
        """The launch delay of every start when it is one for all (None: ask ``launch_after``
        per start).  A profile that replays no launches answers ``launch_after_pass()`` for each
        (its loops find nothing, whatever the reads): the simulator reads it once per run, where
        an interpreted call per start cost 0.5% of a 30-day run (stop 48, docs/benchmarks.md)."""
        return None if self.launches else self.launch_after_pass()

    def launch_after(self, job: str, now: float) -> float:
        """From the pass at ``now`` that starts ``job`` to its run's start: as the replay ran
        it when the cluster's core decided that run's start at this read (``decided``, from the
        reconciler's audit log: Slurm may launch it only after the next read, when a requeue's
        kill must free its GPUs first), or at a later read before the launch, where the job was
        still pending and the cluster's core decided it again (``redecided_at``); for a run
        whose decision is not known, when it started after this pass and before the next read
        (a start the cluster's core decided a tick later lands after that read, and must not
        lend its launch to an earlier decision); else ``launch_after_pass()``.  Without a later
        read, within ``LAUNCH_WINDOW_S``."""
        for s in self.launches:  # the cluster's core decided this start at this read, or before
            if s.job == job and s.decided is not None and s.decided - 1e-6 <= now < s.at:
                return s.at - now
        i = bisect.bisect_right(self.reads, now + 1e-9)
        until = self.reads[i] if i < len(self.reads) else now + LAUNCH_WINDOW_S
        for s in self.launches:
            if s.at > until:
                break
            if s.job == job and s.at > now and s.decided is None:
                return s.at - now
        return self.launch_after_pass()

    def redecided_at(self, job: str, now: float) -> float | None:
        """The read at which the simulator takes back a start of ``job`` it decided at the read
        ``now``, to decide it again there as the cluster's core did: the next read, when the
        cluster's run of it was decided at or before ``now`` and placed by a decision after it
        (``placed``: that tick's update found the job still waiting in Slurm, so the run is
        that decision, on the nodes it chose).  None otherwise: launched before the next read,
        or a later decision's update found the run launched already (``unchanged``), so the
        run is this decision's, held until its launch (seed 11, 2026-12-07: f016, decided at
        68.9 onto n4 and again at 70.9 onto n1, ran on n4).  A nominal profile has no launches
        and never takes a start back."""
        for s in self.launches:
            if s.job == job and s.decided is not None and s.decided - 1e-6 <= now < s.at:
                if s.placed is None or s.placed <= now + 1e-6:
                    return None
                i = bisect.bisect_right(self.reads, now + 1e-9)
                return self.reads[i] if i < len(self.reads) else None
        return None

    def ended_first(self, job: str, now: float) -> bool:
        """Did the cluster's run of ``job`` end before a requeue decided at the pass at ``now``
        landed?  True when the replay's requeue of it found it ended (``ended``) and that end
        lies after this read (less sacct's half second) and before the next one: the same
        requeue, decided at the same read.  An end a tick later belongs to another decision."""
        if not self.ended:
            return False
        i = bisect.bisect_right(self.reads, now + 1e-9)
        until = self.reads[i] if i < len(self.reads) else now + LAUNCH_WINDOW_S
        return any(e.job == job and now - ENDED_SLACK_S <= e.at <= until for e in self.ended)

    def as_known(self, spec: JobSpec) -> JobSpec:
        """The job as the core can know it: its time limit as its work, when limits are on."""
        if self.limit_margin_s is None:
            return spec
        return replace(spec, work=time_limit_s(spec.work, self.limit_margin_s))


def time_limit_s(work_s: float, margin_s: float) -> float:
    """A time limit for ``work_s`` of work: ``margin_s`` more, rounded up to whole minutes
    (Slurm's unit for ``sbatch -t``)."""
    return 60.0 * max(1, math.ceil((work_s + margin_s) / 60.0))


NONE = LatencyProfile("none")
PROFILES: dict[str, LatencyProfile] = {
    "none": NONE,
    # Slurm defaults: cred_expire=120 -> eligible 121 s after a requeue; the main scheduler
    # runs on every priority change and job end, so a start lands about 1 s after the tick
    "slurm": LatencyProfile("slurm", requeue_delay_s=121.0, launch_delay_s=1.0),
    # tests/slurm/up.sh: cred_expire=10; fidelity.sh's sched_interval=1.  Passes at the
    # policy's reconcile_interval (2 s in the fidelity workload), where ``allot replay`` ticks
    # (0.5 s after each multiple of it, replay.drive.TICK_LAG_S).  From that multiple to the
    # run's start (the tick's reads, decide and apply, about 0.7 s, then Slurm's next 1 s
    # cycle: 0.06-1.1 s after the scontrol update): sacct's whole second 1, 2 or 3 in 94, 27
    # and 1 of 122 starts (seeds 7 and 15), taken at their middle: mean 1.7 s
    # (docs/fidelity.md).  The mean is the profile: a deterministic simulator cannot draw
    # Slurm's cycle phase per job, and a seeded draw would not be Slurm's.
    # ``allot replay`` gives each job a time limit of its work + 30 s in whole minutes.
    # Its tick reads squeue about 0.9 s after the grid multiple: arrivals up to 0.8-0.9 s
    # after it were started by that tick, from 1.0 s on by the next (issue 30, measured on
    # the arbitrary workload's replays); a pass there sees what that read sees
    "slurm-test": LatencyProfile(
        "slurm-test", requeue_delay_s=11.0, launch_delay_s=1.7, limit_margin_s=30.0, read_s=0.9
    ),
}
_KEYS = {
    "cycle": "cycle_s",
    "requeue": "requeue_delay_s",
    "launch": "launch_delay_s",
    "limit": "limit_margin_s",
    "read": "read_s",
}


def parse_profile(text: str) -> LatencyProfile:
    """``NAME[,KEY=SECONDS...]`` with KEY one of cycle, requeue, launch, limit, read."""
    name, *sets = [t.strip() for t in text.split(",")]
    base = PROFILES.get(name)
    if base is None:
        raise UsageError(
            f"--profile {text}: unknown profile {name!r}; known: {', '.join(PROFILES)}"
        )
    changes: dict[str, float] = {}
    for item in sets:
        key, sep, value = item.partition("=")
        field = _KEYS.get(key.strip())
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        # finite and bounded like every duration of a trace: inf or 1e308 would never come round
        if not sep or field is None or not 0 <= seconds <= MAX_DURATION_S:
            raise UsageError(
                f"--profile {text}: {item!r} should be KEY=SECONDS with KEY in {', '.join(_KEYS)} "
                f"and 0 <= SECONDS <= {MAX_DURATION_S:,} (366 days)"
            )
        changes[field] = seconds
    return LatencyProfile(
        base.name,
        changes.get("cycle_s", base.cycle_s),
        changes.get("requeue_delay_s", base.requeue_delay_s),
        changes.get("launch_delay_s", base.launch_delay_s),
        changes.get("limit_margin_s", base.limit_margin_s),
        changes.get("read_s", base.read_s),
    )
