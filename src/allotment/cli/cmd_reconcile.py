"""``allot reconcile``: keep a cluster at the newest valid commit of the budget repository.

Level-triggered: every tick fetches the source, compiles the newest commit that validates,
diffs desired against observed, dry-runs, then applies (see ``reconcile.reconciler``).
Exit codes: 0 after ``--once`` with nothing failing (or after SIGTERM), 3 when the backend
failed or an action failed, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from allotment.backends.policy import DEFAULT_TIERS_S
from allotment.backends.protocol import Backend
from allotment.backends.simulated import SimulatedBackend
from allotment.backends.slurm.backend import SlurmBackend
from allotment.backends.slurm.runner import Runner
from allotment.config.hostlist import expand_hostlist
from allotment.durations import parse_duration
from allotment.errors import UsageError
from allotment.reconcile.loop import StopFlag, run_loop, state_lock
from allotment.reconcile.reconciler import Options, Reconciler, TickResult
from allotment.reconcile.source import open_source


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "reconcile", help="drive a cluster to the budget repository", description=__doc__
    )
    p.add_argument("--backend", choices=("sim", "slurm"), required=True, help="cluster to drive")
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
    p.add_argument("--command-timeout", default="20s", help="timeout of every backend command")
    p.add_argument(
        "--sim-nodes",
        default="n[1-4]:8",
        help="sim backend nodes as HOSTLIST:GPUS (first run only)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO level to stderr")
    p.set_defaults(func=run)


def _seconds(text: str, flag: str) -> float:
    try:
        return float(parse_duration(text))
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _backend(args: argparse.Namespace) -> Backend:
    if args.backend == "slurm":
        env = {"SLURM_CONF": args.slurm_conf} if args.slurm_conf else {}
        return SlurmBackend(
            runner=Runner(env=env, timeout_s=_seconds(args.command_timeout, "--command-timeout"))
        )
    path = args.state / "sim.json"
    if path.exists():
        return SimulatedBackend.load(path)
    if not args.sim_nodes:
        return SimulatedBackend()
    hosts, _, gpus = args.sim_nodes.rpartition(":")
    if not hosts or not gpus.isdigit():
        raise UsageError(f"--sim-nodes {args.sim_nodes!r}: expected HOSTLIST:GPUS like n[1-4]:8")
    return SimulatedBackend([(n, int(gpus)) for n in expand_hostlist(hosts)])


def _report(r: TickResult, dry_run: bool) -> None:
    counts = " ".join(f"{k}={v}" for k, v in r.counts().items()) or "no actions"
    rev = (r.revision or "-")[:12]
    print(f"revision {rev}: {counts}" + (f"; error: {r.error}" if r.error else ""), flush=True)
    for d in r.drift:
        print(f"  drift: {d}", flush=True)
    for res in r.results:
        if dry_run or res.code not in ("unchanged",):
            a = res.action
            print(f"  {res.code:<8} {a.kind} {a.target}: {a.reason}", flush=True)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    interval = _seconds(args.interval, "--interval")
    tiers = tuple(int(_seconds(t, "--tiers")) for t in args.tiers.split(",") if t.strip())
    if not tiers or min(tiers) <= 0:
        raise UsageError("--tiers: give at least one positive duration, like 15m,1h,4h,8h")
    state: Path = args.state
    with state_lock(state):
        backend = _backend(args)
        source = open_source(args.source, args.branch, state)
        opts = Options(
            cluster=args.cluster,
            dry_run=args.dry_run,
            active=not args.policy_only,
            tiers_s=tiers,
            health_file=args.health_file,
        )
        rec = Reconciler(backend, source, state, opts, source_label=args.source)
        stop = StopFlag()
        stop.install()

        def on_tick(r: TickResult) -> None:
            if isinstance(backend, SimulatedBackend) and not args.dry_run:
                backend.save(state / "sim.json")
            _report(r, args.dry_run)

        try:
            last = run_loop(rec, interval_s=interval, once=args.once, stop=stop, on_tick=on_tick)
        finally:
            rec.close()
    if last is None or not args.once:
        return 0
    failed = last.error is not None or any(r.code == "failed" for r in last.results)
    return 3 if failed else 0
