"""``allot reconcile``: keep a cluster at the newest valid commit of the budget repository.

Level-triggered: every tick fetches the source, compiles the newest commit that validates,
diffs desired against observed, dry-runs, then applies (see ``reconcile.reconciler``).
Exit codes: 0 after ``--once`` with nothing failing (or after SIGTERM); 1 after ``--once``
when the newest commit was rejected (it does not validate, or the backend refused it: the last
good revision was driven instead); 3 when the backend, an action or the state dir failed; 2 for
bad arguments or a corrupt file in the state dir.  Logs go to stderr, timestamped (UTC) and
levelled, as text or JSON lines (``--log-format``); the per-tick summary on stdout is printed
when it differs from the previous tick's.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

from allotment.atomic_file import remove_stale_temps
from allotment.backends.kubernetes.backend import KubernetesBackend
from allotment.backends.policy import DEFAULT_TIERS_S
from allotment.backends.protocol import Backend
from allotment.backends.simulated import SimulatedBackend
from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.runner import Runner
from allotment.config.hostlist import expand_hostlist
from allotment.durations import parse_duration
from allotment.errors import UsageError
from allotment.reconcile.logs import setup_logging
from allotment.reconcile.loop import StopFlag, run_loop, state_lock
from allotment.reconcile.reconciler import Options, Reconciler, TickResult
from allotment.reconcile.skew import DEFAULT_MAX_SKEW_S
from allotment.reconcile.source import DEFAULT_GIT_TIMEOUT_S, open_source


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "reconcile", help="drive a cluster to the budget repository", description=__doc__
    )
    p.add_argument(
        "--backend", choices=("sim", "slurm", "kubernetes"), required=True, help="cluster to drive"
    )
    p.add_argument(
        "--source", default=".", help="git URL, git repository or plain folder (default: .)"
    )
    p.add_argument("--branch", default="main", help="branch of --source to follow")
    p.add_argument("--once", action="store_true", help="one tick, then exit")
    p.add_argument("--interval", default="10s", help="time between ticks (default 10s)")
    p.add_argument("--dry-run", action="store_true", help="plan and dry-run only; change nothing")
    p.add_argument(
        "--state", default=".allot-reconcile", type=Path, help="state dir (status, ledger, audit)"
    )
    p.add_argument(
        "--cluster", default=None, help="inventory cluster this backend is (default: the only one)"
    )
    p.add_argument(
        "--policy-only",
        action="store_true",
        help="sync accounts/users/QOS only; leave jobs and nodes",
    )
    p.add_argument(
        "--tiers",
        default=",".join(f"{s}s" for s in DEFAULT_TIERS_S),
        help="minimum-runtime QOS tiers",
    )
    p.add_argument(
        "--health-file", default=None, help="node health file (default: the inventory's)"
    )
    p.add_argument("--slurm-conf", default=None, help="SLURM_CONF for the client commands")
    p.add_argument(
        "--command-timeout", default="20s", help="timeout of every backend command (default 20s)"
    )
    p.add_argument(
        "--git-timeout",
        default=f"{DEFAULT_GIT_TIMEOUT_S:g}s",
        help=f"timeout of every git fetch (default {DEFAULT_GIT_TIMEOUT_S:g}s)",
    )
    p.add_argument(
        "--max-clock-skew",
        default=f"{DEFAULT_MAX_SKEW_S:g}s",
        help="refuse job and node actions while the backend's clock differs from ours by more"
        f" (default {DEFAULT_MAX_SKEW_S:g}s)",
    )
    p.add_argument(
        "--sim-nodes",
        default=None,
        help="sim backend nodes as HOSTLIST:GPUS, first run only (default: the inventory's)",
    )
    p.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="stderr log lines"
    )
    # --- kubernetes backend (backends/kubernetes) ---
    p.add_argument("--kubeconfig", default=None, help="kubernetes: kubeconfig file")
    p.add_argument("--context", default=None, help="kubernetes: kubeconfig context")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logs")
    p.set_defaults(func=run)


def _seconds(text: str, flag: str) -> float:
    try:
        return float(parse_duration(text))
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _backend(args: argparse.Namespace) -> Backend:
    if args.backend == "kubernetes":
        timeout = _seconds(args.command_timeout, "--command-timeout")
        return KubernetesBackend.from_kubeconfig(args.kubeconfig, args.context, timeout_s=timeout)
    if args.backend == "slurm":
        env = {"SLURM_CONF": args.slurm_conf} if args.slurm_conf else {}
        return SlurmBackend(
            runner=Runner(env=env, timeout_s=_seconds(args.command_timeout, "--command-timeout"))
        )
    # the CLI's simulated cluster runs on the wall clock, like a real one
    path = args.state / "sim.json"
    if path.exists():
        return SimulatedBackend.load(path, follow=time.time)
    if not args.sim_nodes:  # the nodes come from the inventory on the first tick
        return SimulatedBackend(now=time.time(), follow=time.time)
    hosts, _, gpus = args.sim_nodes.rpartition(":")
    if not hosts or not gpus.isdigit():
        raise UsageError(f"--sim-nodes {args.sim_nodes!r}: expected HOSTLIST:GPUS like n[1-4]:8")
    nodes = [(n, int(gpus)) for n in expand_hostlist(hosts)]
    return SimulatedBackend(nodes, now=time.time(), follow=time.time)


def _report_lines(r: TickResult, dry_run: bool) -> list[str]:
    counts = " ".join(f"{k}={v}" for k, v in r.counts().items()) or "no actions"
    rev = (r.revision or "-")[:12]
    lines = [f"revision {rev}: {counts}" + (f"; error: {r.error}" if r.error else "")]
    if r.newest_rejected:
        lines.append(f"  newest rejected: {r.newest_rejected}")
    lines += [f"  drift: {d}" for d in r.drift]
    for res in r.results:
        if dry_run or res.code not in ("unchanged",):
            a = res.action
            lines.append(f"  {res.code:<8} {a.kind} {a.target}: {a.reason}")
    return lines


def run(args: argparse.Namespace) -> int:
    setup_logging(args.log_format, logging.DEBUG if args.verbose else logging.INFO)
    interval = _seconds(args.interval, "--interval")
    max_skew = _seconds(args.max_clock_skew, "--max-clock-skew")
    git_timeout = _seconds(args.git_timeout, "--git-timeout")
    tiers = tuple(int(_seconds(t, "--tiers")) for t in args.tiers.split(",") if t.strip())
    if not tiers or min(tiers) <= 0:
        raise UsageError("--tiers: give at least one positive duration, like 15m,1h,4h,8h")
    state: Path = args.state
    with state_lock(state):
        for p in remove_stale_temps(state):  # left by a kill -9 during a write; we are its writer
            logging.getLogger(__name__).info("removed %s, left by an interrupted write", p.name)
        backend = _backend(args)
        source = open_source(args.source, args.branch, state, timeout_s=git_timeout)
        opts = Options(
            cluster=args.cluster,
            dry_run=args.dry_run,
            active=not args.policy_only,
            tiers_s=tiers,
            health_file=args.health_file,
            max_skew_s=max_skew,
            interval_s=interval,
        )
        rec = Reconciler(backend, source, state, opts, source_label=args.source)
        stop = StopFlag()
        stop.install()

        printed: list[str] = []

        def on_tick(r: TickResult) -> None:
            if isinstance(backend, SimulatedBackend) and not args.dry_run:
                backend.save(state / "sim.json")
            lines = _report_lines(r, args.dry_run)
            if lines != printed:  # print on change only
                print("\n".join(lines), flush=True)
                printed[:] = lines

        try:
            last = run_loop(rec, interval_s=interval, once=args.once, stop=stop, on_tick=on_tick)
        finally:
            rec.close()
    if last is None or not args.once:
        return 0
    failed = last.error is not None or any(r.code == "failed" for r in last.results)
    if failed:
        return 3
    return 1 if last.newest_rejected else 0
