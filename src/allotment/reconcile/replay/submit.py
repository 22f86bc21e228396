"""One trace job as one ``sbatch`` command (pure: argv and script text, nothing is run here).

Why a script and not ``sleep``: a replayed job must behave like a checkpointing training job
under requeue.  The script counts its work in whole seconds and writes the count into
``<dir>/<id>.ckpt`` at every multiple of the job's checkpoint interval (every second when it
has none); when Slurm starts it again after a requeue, it goes on from the count there (a job
that is not resumable starts from zero).  So a preempted job loses what it did since its last
checkpoint, as the simulator's does (``core.jobs.kept_work``; without an interval at most one
second, where the simulator's continuously checkpointing job loses none).  Its seconds are kept on the
wall clock (second k of a run ends at the run's start + k), so a run lasts its work, as in the
simulator, whatever the load.

Shape: ``gpus_per_node`` set -> ``-N gpus/per --gres=gpu:per``; otherwise one node when the job
fits on one, else whole nodes (the core's rule for a job without a per-node shape).  QOS: 0 s
minimum runtime -> ``unallocated``; otherwise the tier of the compressed minimum runtime.
Time limit: the compressed work plus a margin, in whole minutes (Slurm's unit): the core's
work bound.  Every job runs as the replaying user with ``-A`` its account; the trace's user is
kept only in the job's comment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from allotment.backends.policy import UNALLOCATED_QOS, tier_name
from allotment.core.jobs import JobSpec
from allotment.sim.latency import time_limit_s

CHECKPOINT_WRITE_S = 0.4  # a checkpoint (when the job has a checkpoint interval) counts from
# this long after its second, as a real checkpoint takes time to write.  Why 0.4: the
# reconciler's requeue reaches a run at its start tick's phase, and Slurm launched that run
# 0.07-1.13 s (mean 0.6) after its start tick's scontrol update, so a run requeued k ticks
# later has run k ticks less 0.07-1.13 s; a write 0.4 s late centres that spread between two
# checkpoints, and the run keeps the checkpoint the simulator keeps (docs/fidelity.md)
TIMES_SUFFIX = ".times"  # each run of a job appends "start <unix s>", "beat <unix s>" at the
# top of each of its seconds, and, done, "end <unix s>"
LIMIT_MARGIN_S = 30.0  # the script's own overhead (one fork per second) and Slurm's launch;
# the slurm-test latency profile gives the simulated core the same limits (sim.latency)


@dataclass(frozen=True, slots=True)
class Submission:
    job: JobSpec
    at: float  # seconds after the replay's start (already compressed)
    argv: tuple[str, ...]
    script: str
    nodes: int


def compressed(seconds: float, speedup: float) -> float:
    return seconds / speedup


def tier_seconds(job: JobSpec, default_s: int, speedup: float) -> int:
    """The compressed minimum runtime in whole seconds (0 = unallocated)."""
    declared = default_s if job.min_runtime is None else job.min_runtime
    return 0 if declared <= 0 else max(1, round(compressed(declared, speedup)))


def shape(job: JobSpec, gpus_per_node: int) -> tuple[int, tuple[str, ...]]:
    per = job.gpus_per_node
    if per is None:
        per = job.gpus if job.gpus <= gpus_per_node else gpus_per_node
    nodes = max(1, math.ceil(job.gpus / per))
    opts = ("-N", str(nodes)) if nodes > 1 else ()
    return nodes, (*opts, f"--gres=gpu:{per}")


def checkpoint_s(job: JobSpec, speedup: float) -> int:
    """The compressed checkpoint interval in whole seconds (the script's unit; 1 when the job
    checkpoints continuously, which the script's whole seconds approximate)."""
    ci = job.checkpoint_interval
    return 1 if ci is None or ci <= 0 else max(1, round(compressed(ci, speedup)))


def script(job: JobSpec, work_s: int, ckpt_dir: Path, every_s: int = 1) -> str:
    """The job's shell script.  Its checkpoint can never be lost to a requeue's kill: it is
    written to ``<id>.ckpt.tmp`` and renamed over ``<id>.ckpt`` (a rename in one directory is
    atomic), so a kill inside the write leaves the last whole checkpoint.  A plain ``echo >
    ckpt`` truncated the file first; a kill there left it empty, the restarted run read nothing,
    its loop test failed and it exited 0 at once: Slurm recorded ``COMPLETED`` with the work
    undone (issue 30: 2 of 16-21 requeues per replay).  So the read is defensive too: a
    checkpoint that is not a count of seconds restarts the work from 0 and says so (stderr and
    ``<id>.notes``, which the replay reports), and the script exits 0 only with all its work
    done."""
    ckpt = ckpt_dir / f"{job.id}.ckpt"
    notes = ckpt_dir / f"{job.id}.notes"
    times = ckpt_dir / f"{job.id}{TIMES_SUFFIX}"
    resume = "" if job.resumable else 'rm -f "$ckpt"\n'
    save = 'echo "$done" > "$ckpt.tmp" && mv -f "$ckpt.tmp" "$ckpt"'
    # a checkpoint of every_s > 1 seconds is written CHECKPOINT_WRITE_S after its second
    write = (
        save
        if every_s <= 1
        else f'if [ $((done % {every_s})) -eq 0 ] && [ "$done" -lt {work_s} ]; then '
        f"sleep {CHECKPOINT_WRITE_S:g}; {save}; fi"
    )
    return (
        "#!/bin/sh\n"
        f"# allotment replay of trace job {job.id}: {work_s} s of work, resumable from {ckpt}"
        f" (a checkpoint every {every_s} s)\n"
        f'ckpt="{ckpt}"\n'
        f"{resume}done=0\n"
        'if [ -e "$ckpt" ]; then done=$(cat "$ckpt"); case $done in ""|*[!0-9]*|0?*) '
        f"echo \"replay {job.id}: checkpoint $ckpt held '$done', not a count of seconds;"
        f' starting from 0" | tee -a "{notes}" >&2; done=0;; esac; fi\n'
        # each second ends at this run's start + k, not after a sleep 1 plus the loop's forks:
        # those added 0.1-0.5 s per minute of work, more under load (docs/fidelity.md)
        "t0=$(date +%s.%N); k=0\n"
        # sacct has whole seconds; the run's own start and end, to the millisecond, tell on
        # which side of a tick's read they fell (collect.script_times; issue 30)
        f'echo "start $t0" >> "{times}"\n'
        # and each second's own instant ("beat"): a gap in them is the machine stopping the
        # job (replay.stalls: such a replay is void, not a miss)
        f'while [ "$done" -lt {work_s} ]; do k=$((k + 1)); now=$(date +%s.%N); '
        f'echo "beat $now" >> "{times}"; '
        """sleep "$(awk -v t0="$t0" -v k="$k" -v now="$now" """
        """'BEGIN { d = t0 + k - now; printf "%.3f", (d > 0 ? d : 0) }')"; """
        f"done=$((done + 1)); {write}; done\n"
        f'[ "$done" -ge {work_s} ] || {{ echo "replay {job.id}: stopped at $done of {work_s} s"'
        " >&2; exit 1; }\n"
        f'echo "end $(date +%s.%N)" >> "{times}"\n'
    )


def submission(
    job: JobSpec, *, speedup: float, gpus_per_node: int, default_min_s: int, ckpt_dir: Path
) -> Submission:
    work_s = max(1, math.ceil(compressed(job.work, speedup)))
    tier = tier_seconds(job, default_min_s, speedup)
    qos = UNALLOCATED_QOS if tier == 0 else tier_name(tier)
    minutes = round(time_limit_s(work_s, LIMIT_MARGIN_S) / 60.0)
    nodes, opts = shape(job, gpus_per_node)
    argv = (
        "sbatch",
        "--parsable",
        "-A",
        job.account.lower(),
        "-q",
        qos,
        "-J",
        f"replay-{job.id}",
        f"--comment=trace user {job.user or '-'}",
        "-t",
        str(minutes),
        "-o",
        "/dev/null",
        "--requeue" if job.resumable else "--no-requeue",
        *opts,
        str(ckpt_dir / f"{job.id}.sh"),
    )
    return Submission(
        job,
        compressed(job.submit, speedup),
        argv,
        script(job, work_s, ckpt_dir, checkpoint_s(job, speedup)),
        nodes,
    )


def tiers(jobs: tuple[JobSpec, ...], default_min_s: int, speedup: float) -> tuple[int, ...]:
    """Every allocated tier the replay's jobs use (the QOS the reconciler must create)."""
    out = {tier_seconds(j, default_min_s, speedup) for j in jobs}
    out.discard(0)
    return tuple(sorted(out)) or (max(1, round(compressed(default_min_s, speedup))),)
