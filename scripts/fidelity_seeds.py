"""Judge saved replays (``tests/slurm/fidelity.sh`` output folders) under latency profiles and
print docs/fidelity.md's per-seed table and the spread of each error over the runs (issue 30).

No cluster: each saved ``real.jsonl`` is compared with a fresh simulation of its trace, shifted by
the replay's epoch phase, as ``allot replay --from-events`` does.  Besides the targets, it counts
the jobs whose first start is within 1 s of their simulated twin's, and where the reconciler's
read sat (``read_phases``).

    python scripts/fidelity_seeds.py --profiles "slurm-test,read=0;slurm-test" OUT [OUT...]

A profile ending in ``@run`` passes where the replay's ticks really read (``OUT/replay/reads.json``)
and launches a start decided at the cluster's read when Slurm launched it (``read_times.as_ran``),
as ``allot replay --compare`` gates since issue 30 (``@reads``: the reads only); the script then
also prints how the reads sat against the grid (``read_spread``).  ``@grid``: the nominal profile
with its reads on its own grid (``read_s`` after each multiple of the tick), which changes one
thing only: a pass at the read after each launch, as the gate's simulation runs one
(``sim/runner.py``; docs/fidelity.md, the eighth pass, measures what it changes in a plan).
The ``stall`` column is the replay's stall check (``replay.stalls``): ``VOID`` and the widest
gap, else the widest gap of the reads and of the scripts' own seconds.  A log saved before its ends
and starts were marked (a run a requeue found ended, ``collect.found_ended``; the tick that
decided a start, ``collect.decided_starts``) is marked here from the replay's audit log, the replay's time 0 taken from its drains (their audit times are exact).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
from pathlib import Path

from allotment.compile.compiler import compile_repo
from allotment.reconcile.audit import entry_time
from allotment.reconcile.replay.collect import decided_starts, found_ended
from allotment.reconcile.replay.compare import WAIT_ABS_S, WAIT_TOL, Row, compare
from allotment.reconcile.replay.events import Event, read_events
from allotment.reconcile.replay.read_times import READS_FILE, as_ran, read_reads
from allotment.reconcile.replay.simlog import simulated_events
from allotment.reconcile.replay.stalls import replay_stalls, widest_gaps
from allotment.sim.latency import parse_profile
from allotment.sim.workloads import from_trace


def first_starts(events: list[Event]) -> dict[str, float]:
    out: dict[str, float] = {}
    for e in sorted(events, key=lambda e: e.t):
        if e.event == "start" and e.job:
            out.setdefault(e.job, e.t)
    return out


def read_phases(events: list[Event], tick_s: float = 2.0) -> tuple[list[float], list[float]]:
    """How long after the grid instant before it each job arrived, for jobs the tick at that
    instant started (a start within 2.6 s of it: launch 1-3 s) and for jobs only the next tick
    started (within 4.6 s).  The largest of the first bounds the read from below; the second
    also holds jobs that found no free GPUs at the first tick, so only its bulk bounds it."""
    submit = {e.job: e.t for e in events if e.event == "submit" and e.job}
    starts = first_starts(events)
    seen: list[float] = []
    next_tick: list[float] = []
    dropped: list[float] = []
    for job, at in submit.items():
        if job in starts:
            grid = (at // tick_s) * tick_s
            gap = starts[job] - grid
            (seen if gap <= 2.6 else next_tick if gap <= 4.6 else dropped).append(round(at - grid, 2))
    return sorted(seen), sorted(next_tick)


def read_spread(reads: tuple[float, ...], tick_s: float = 2.0) -> str:
    """How long after its grid instant each read came (min / median / p90 / max) and how many
    grid slots had no read (a tick that overran its slot)."""
    offs = sorted(r - (r // tick_s) * tick_s for r in reads)
    slots = {int(r // tick_s) for r in reads}
    skipped = (max(slots) - min(slots) + 1 - len(slots)) if slots else 0
    p90 = offs[int(0.9 * (len(offs) - 1))] if offs else 0.0
    return (f"{len(reads)} reads, {offs[0]:.2f} / {statistics.median(offs):.2f} / {p90:.2f} / "
            f"{offs[-1]:.2f} s after the grid, {skipped} slots without a read")


def marked(out: Path, real: list[Event]) -> list[Event]:
    """``real`` with the ends a requeue found ended marked and each start's deciding tick, as
    a replay now writes them."""
    audit_file = out / "replay" / "reconciler" / "audit.jsonl"
    drains = [e.t for e in real if e.event == "drain"]
    if any(e.event == "start" and e.decided is not None for e in real) or not audit_file.is_file() or not drains:
        return real
    audit = [json.loads(line) for line in audit_file.read_text(encoding="utf-8").splitlines() if line]
    ids = json.loads((out / "replay" / "slurm_ids.json").read_text(encoding="utf-8"))
    applied = [entry_time(a) for a in audit if a.get("action") == "drain" and a.get("result") == "applied"]
    t0 = min(applied) - min(drains)
    job_of = {str(v): k for k, v in ids.items()}
    if not any(e.event == "end" and e.rule for e in real):
        real = found_ended(real, audit, job_of, lambda w: round(w - t0, 3))
    return decided_starts(real, audit, job_of, lambda w: round(w - t0, 3))


def stall_cell(out: Path, real: list[Event], reads: tuple[float, ...], tick_s: float = 2.0) -> str:
    """``VOID`` and the widest stall, or the widest gap of the reads and of the scripts' own
    seconds, under their thresholds."""
    jobs = out / "replay" / "jobs"
    stalls = replay_stalls(reads, real, jobs, tick_s)
    if stalls:
        worst = max(stalls, key=lambda x: x.gap_s)
        return f"**VOID** ({worst.who} {worst.after_s:.1f}-{worst.until_s:.1f} s: {worst.gap_s:.1f} s)"
    read_gap, own = widest_gaps(reads, real, jobs)
    return f"reads {read_gap:.2f} s, scripts " + (f"{own:.2f} s" if own is not None else "-")


def moved(sims: list[dict[str, float]]) -> str:
    """How many jobs' first starts differ by over 1 ms between the first two profiles'
    simulations, and by how much at most (what ``@grid``'s pass after a launch changes)."""
    if len(sims) < 2:
        return "-"
    a, b = sims[0], sims[1]
    d = [abs(a[j] - b.get(j, float("inf"))) for j in a if abs(a[j] - b.get(j, float("inf"))) > 1e-3]
    return f"{len(d)} of {len(a)}" + (f", up to {max(d):.1f} s" if d else "")


def error_of(r: Row) -> float:
    """Share and occupancy: the relative error (target 10%); waits: |real - sim| as a share of
    the allowance (target 100%)."""
    if r.target != "25% or 5s":
        return r.error
    return abs(r.real - r.sim) / max(WAIT_TOL * r.sim, WAIT_ABS_S)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", default="slurm-test")
    ap.add_argument("outs", type=Path, nargs="+")
    args = ap.parse_args()
    profiles = args.profiles.split(";")
    spread: dict[str, dict[str, list[float]]] = {p: {} for p in profiles}
    phases: list[str] = []
    print(f"| replay | {' | '.join(f'missed ({p})' for p in profiles)} | first starts within 1 s "
          f"({', '.join(profiles)}) | late ticks | stall | first starts moved (first two profiles) |")
    print("|---" * (5 + len(profiles)) + "|")
    for out in args.outs:
        real = marked(out, read_events(out / "real.jsonl"))
        meta = json.loads((out / "real.json").read_text(encoding="utf-8"))
        config = compile_repo(out / "repo", dt.date(2026, 12, 1))
        group = config.clusters["gpulab"].node_groups[0]
        node_gpus = {f"n{i}": group.gpus_per_node for i in range(1, 5)}
        rs = first_starts(real)
        cells, within, sims = [], [], []
        reads_file = out / "replay" / READS_FILE
        reads = read_reads(reads_file) if reads_file.is_file() else ()
        for p in profiles:
            profile = parse_profile(p.removesuffix("@run").removesuffix("@reads").removesuffix("@grid"))
            if p.endswith("@grid"):  # the nominal passes, and one at the read after a launch
                profile = profile.as_run(tuple(round(2.0 * k + profile.read_s, 3) for k in range(2000)))
            elif p.endswith("@reads"):  # the reads as run, the nominal launch
                profile = profile.as_run(reads)
            elif p.endswith("@run"):  # the reads and the launches as run
                profile = as_ran(profile, reads, real, tuple(from_trace(out / "trace.jsonl").node_events))
            sim = simulated_events(config, "gpulab", from_trace(out / "trace.jsonl"),
                                   profile, epoch_phase_s=meta["epoch_phase_s"])
            rows = compare(real, sim, capacity=32, node_gpus=node_gpus)
            miss = [r.metric.replace(" (s)", "") for r in rows if r.ok is False]
            judged = sum(r.ok is not None for r in rows)
            cells.append(f"**{len(miss)} of {judged}**" + (f": {', '.join(miss)}" if miss else ""))
            ss = first_starts(sim)
            sims.append(ss)
            within.append(f"{sum(abs(rs[j] - ss[j]) <= 1.0 for j in rs if j in ss)}/{len(rs)}")
            for r in rows:
                if r.ok is not None:
                    key = re.sub(r" \d+-\d+s", "", r.metric.replace(" (s)", ""))
                    key = re.sub(r"share team\w+", "share (every team)", key)
                    spread[p].setdefault(key, []).append(error_of(r))
        print(f"| {out.name} | {' | '.join(cells)} | {', '.join(within)} | "
              f"{meta.get('late_ticks', '-')} | {stall_cell(out, real, reads)} | {moved(sims)} |")
        seen, later = read_phases(real)
        phases.append(f"{out.name}: started by that tick up to {max(seen, default=0):.2f} s after "
                      f"it ({len(seen)} jobs); by the next only: {later[:8]}..."
                      + (f"; reads: {read_spread(reads)}" if reads else ""))
    print("\nwhere the read sat (arrival after the grid instant before it):")
    print("\n".join(phases))
    for p in profiles:
        print(f"\n`{p}`: spread of each error over the runs (share and occupancy: relative error, "
              "target 10%; waits: |real - sim| as a share of the allowance, target 100%)\n")
        print("| target | min | median | max | over target |")
        print("|---|---|---|---|---|")
        for key, errs in spread[p].items():
            limit = 1.0 if key.startswith("wait") else 0.10
            print(f"| {key} | {min(errs):.1%} | {statistics.median(errs):.1%} | {max(errs):.1%} | "
                  f"{sum(e > limit for e in errs)} of {len(errs)} |")


if __name__ == "__main__":
    main()
