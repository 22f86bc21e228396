"""``allot reconcile``: keep a cluster at the newest valid commit of the budget repository.

Level-triggered: every tick fetches the source, compiles the newest commit that validates,
diffs desired against observed, dry-runs, then applies (docs/operators-guide.md).
Exit codes: 0 after ``--once`` with nothing failing (or after SIGTERM); 1 after ``--once``
when the newest commit was rejected (it does not validate, or the backend refused it: the last
good revision was driven instead); 3 when the backend, an action or the state dir failed; 2 for
bad arguments or a corrupt file in the state dir.  Logs go to stderr, timestamped (UTC) and
levelled, as text or JSON lines (``--log-format``); the per-tick summary on stdout is printed
when it differs from the previous tick's.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from allotment.atomic_file import remove_stale_temps
from allotment.backends.policy import DEFAULT_TIERS_S
from allotment.cli import reconcile_control
from allotment.durations import parse_duration, parse_seconds
from allotment.errors import UsageError
from allotment.reconcile.skew import DEFAULT_MAX_SKEW_S
from allotment.reconcile.source import DEFAULT_GIT_TIMEOUT_S
from allotment.traces.scenarios import SCENARIOS

if TYPE_CHECKING:  # imported when run: ``allot reconcile now`` needs none of them
    from allotment.backends.protocol import Backend
    from allotment.backends.simulated import SimulatedBackend
    from allotment.reconcile.demo_feed import Feed
    from allotment.reconcile.leadership import Fence, Leadership, LeaseStore
    from allotment.reconcile.loop import StopFlag
    from allotment.reconcile.probes import Heartbeat, ProbeServer
    from allotment.reconcile.reconciler import Options, Reconciler, TickResult

log = logging.getLogger("allotment.cli.reconcile")


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend", choices=("sim", "slurm", "kubernetes"), help="cluster to drive (required)"
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
        "--cluster",
        default=None,
        help="inventory cluster this backend is (default: the only one; with several, the one"
        " with the most GPUs, named in a warning)",
    )
    p.add_argument(
        "--policy-only",
        action="store_true",
        help="sync accounts/users/QOS only; leave jobs and nodes",
    )
    p.add_argument(
        "--tiers",
        default=None,
        help="minimum-runtime QOS tiers (default 15m,1h,4h,8h; with --workload, those divided"
        " by --speedup)",
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
        "--workload",
        default=None,
        metavar="SCENARIO",
        help="sim backend: feed it this scenario's jobs in real time, a demo cluster that lives"
        f" ({', '.join(SCENARIOS)})",
    )
    p.add_argument(
        "--speedup", type=float, default=60.0, help="--workload: trace seconds per second (default 60)"
    )
    p.add_argument(
        "--workload-days", type=float, default=7.0, help="--workload: days of the scenario (default 7)"
    )
    p.add_argument(
        "--log-format", choices=("text", "json"), default="text", help="stderr log lines"
    )
    p.add_argument(
        "--probe-port",
        type=int,
        default=None,
        help="serve /healthz and /readyz on this TCP port (0: any free one; default: none)",
    )
    p.add_argument(
        "--probe-bind", default="127.0.0.1", help="address of the probes (default: loopback only)"
    )
    p.add_argument(
        "--leader-elect",
        action="store_true",
        help="run as one of several replicas sharing --state (on shared storage): one leads"
        " through a lease with a fencing token, the others stand by (docs/operators-guide.md)",
    )
    p.add_argument(
        "--lease-duration",
        default="15s",
        help="--leader-elect: how long a lease lasts unrenewed; a standby takes over at most"
        " about this long after the leader dies (default 15s)",
    )
    p.add_argument(
        "--identity", default=None, help="--leader-elect: this replica's name (default host-pid)"
    )
    p.add_argument(
        "--lease",
        choices=("file", "kubernetes"),
        default=None,
        help="--leader-elect: the lease's primitive: a coordination.k8s.io/v1 Lease (default with"
        " --backend kubernetes; --kubeconfig, --context) or a file in --state (default otherwise)",
    )
    p.add_argument(
        "--lease-namespace", default="allotment-system", help="--lease kubernetes: the Lease's namespace"
    )
    p.add_argument(
        "--lease-name", default="allotment-reconciler", help="--lease kubernetes: the Lease's name"
    )
    # --- kubernetes backend (backends/kubernetes) ---
    p.add_argument("--kubeconfig", default=None, help="kubernetes: kubeconfig file")
    p.add_argument("--context", default=None, help="kubernetes: kubeconfig context")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logs")
    p.set_defaults(func=run)
    control = p.add_subparsers(
        dest="verb", metavar="{suspend,resume,now}", title="operator requests to a running reconciler"
    )
    reconcile_control.register(control)


def _seconds(text: str, flag: str) -> float:
    """A wall-clock flag's seconds as written (``--interval 0.3s`` is 0.3 s, not rounded to 0)."""
    try:
        return parse_seconds(text)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _whole_seconds(text: str, flag: str) -> int:
    """A protection tier: whole seconds, as the config's durations (``parse_duration``)."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _backend(args: argparse.Namespace) -> Backend:
    from allotment.backends.kubernetes.backend import KubernetesBackend
    from allotment.backends.simulated import SimulatedBackend
    from allotment.backends.slurm.backend import SlurmBackend
    from allotment.backends.slurm.runner import Runner
    from allotment.config.hostlist import expand_hostlist

    if args.backend == "kubernetes":
        timeout = _seconds(args.command_timeout, "--command-timeout")
        return KubernetesBackend.from_kubeconfig(args.kubeconfig, args.context, timeout_s=timeout)
    if args.backend == "slurm":
        env = {"SLURM_CONF": args.slurm_conf} if args.slurm_conf else {}
        # what slurm.conf lacks for active mode is the reconciler's to report (_backend_config)
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


class WorkloadFeeder:
    """``--workload``: the demo feed (``reconcile.demo_feed``), made on the first tick that has a
    config (the scenario is drawn from the driven config's teams and users), stepped after every
    tick on the wall clock, and kept in the state dir."""

    def __init__(
        self, args: argparse.Namespace, state: Path, tiers: tuple[int, ...], fence: Fence
    ) -> None:
        self.args, self.state, self.tiers, self.fence = args, state, tiers, fence
        self.feed: Feed | None = None

    def step(self, rec: Reconciler, backend: SimulatedBackend) -> None:
        from allotment.reconcile.demo_feed import make_feed, restore
        from allotment.reconcile.demo_feed import save as save_feed
        from allotment.sim.workloads import from_scenario

        now = time.time()
        if self.feed is None:
            config = rec.driving_config
            if config is None:
                return  # no revision driven yet: nothing to draw the scenario from
            a = self.args
            cluster = rec.status.cluster
            work = from_scenario(config, a.workload, cluster=cluster, days=a.workload_days, seed=0)
            label = f"{a.workload} {a.workload_days:g} days x{a.speedup:g} on {cluster}"
            made = make_feed(
                work.jobs, label=label, origin=now, speedup=a.speedup,
                default_min_s=config.policy_for(cluster).default_min_runtime_s, tiers_s=self.tiers,
            )
            self.feed = restore(made, self.state)
            with self.fence():  # its origin, so a restart keeps the same clock
                save_feed(self.feed, self.state)
        if self.feed.step(backend, now):
            with self.fence():
                save_feed(self.feed, self.state)


def _probes(
    args: argparse.Namespace, heartbeat: Heartbeat, leadership: Leadership | None
) -> ProbeServer | None:
    from allotment.reconcile.probes import ProbeServer

    if args.probe_port is None:
        return None
    metrics = None
    if leadership is not None:
        from allotment.reconcile.lease_metrics import exposition

        def metrics() -> bytes:
            return exposition(leadership, time.time())

    try:
        server = ProbeServer((args.probe_bind, args.probe_port), heartbeat, metrics)
    except OSError as exc:
        raise UsageError(
            f"--probe-bind {args.probe_bind} --probe-port {args.probe_port}: {exc.strerror or exc}"
        ) from None
    server.start()
    host, port = server.server_address[0], server.server_address[1]
    log.info("probes on http://%s:%s/healthz and /readyz", host, port)
    return server


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
    from allotment.reconcile.leadership import no_fence
    from allotment.reconcile.logs import setup_logging
    from allotment.reconcile.loop import StopFlag, state_lock
    from allotment.reconcile.probes import Heartbeat, hung_after
    from allotment.reconcile.reconciler import Options

    if args.backend is None:
        raise UsageError("--backend is required (sim, slurm or kubernetes)")
    setup_logging(args.log_format, logging.DEBUG if args.verbose else logging.INFO)
    interval = _seconds(args.interval, "--interval")
    if not interval > 0:  # ticks back to back would read the controller in a tight loop
        raise UsageError(f"--interval {args.interval}: expected a positive duration, like 10s")
    max_skew = _seconds(args.max_clock_skew, "--max-clock-skew")
    _seconds(args.git_timeout, "--git-timeout")  # refused before anything starts
    if args.workload is not None and args.backend != "sim":
        raise UsageError("--workload: only the sim backend takes a workload (a real cluster has its own)")
    if args.workload is not None and args.workload not in SCENARIOS:
        raise UsageError(f"--workload {args.workload}: unknown; known: {', '.join(SCENARIOS)}")
    if args.workload is not None and not 0 < args.speedup < float("inf"):
        raise UsageError(f"--speedup {args.speedup:g}: expected a positive number")
    if args.tiers is None:
        tiers = DEFAULT_TIERS_S
        if args.workload is not None:  # compressed as the jobs' minimum runtimes are
            tiers = tuple(sorted({max(1, round(t / args.speedup)) for t in DEFAULT_TIERS_S}))
    else:
        tiers = tuple(_whole_seconds(t, "--tiers") for t in args.tiers.split(",") if t.strip())
    if not tiers or min(tiers) <= 0:
        raise UsageError("--tiers: give at least one positive duration, like 15m,1h,4h,8h")
    opts = Options(
        cluster=args.cluster,
        dry_run=args.dry_run,
        active=not args.policy_only,
        tiers_s=tiers,
        health_file=args.health_file,
        max_skew_s=max_skew,
        interval_s=interval,
    )
    state: Path = args.state
    stop = StopFlag()
    stop.install()
    heartbeat = Heartbeat(hung_after(interval))
    leadership = _leadership(args) if args.leader_elect else None
    probes = _probes(args, heartbeat, leadership)
    try:
        if leadership is not None:
            last = _replica(args, opts, tiers, stop, heartbeat, leadership)
        else:
            with state_lock(state):
                last = _term(args, opts, tiers, stop, heartbeat, no_fence, None)
    finally:
        if probes is not None:
            probes.shutdown()
            probes.server_close()
    if last is None or not args.once:
        return 0
    failed = last.error is not None or any(r.code == "failed" for r in last.results)
    if failed:
        return 3
    return 1 if last.newest_rejected else 0


def _leadership(args: argparse.Namespace) -> Leadership:
    from allotment.reconcile.leadership import Leadership, default_identity

    if args.once:
        raise UsageError("--leader-elect: replicas run until stopped; --once is for one process")
    lease_s = _seconds(args.lease_duration, "--lease-duration")
    if lease_s <= 0:
        raise UsageError(f"--lease-duration {args.lease_duration}: expected a positive duration")
    return Leadership(_lease_store(args, lease_s), args.identity or default_identity())


def _replica(
    args: argparse.Namespace, opts: Options, tiers: tuple[int, ...], stop: StopFlag,
    heartbeat: Heartbeat, leadership: Leadership,
) -> TickResult | None:
    """``--leader-elect``: one of several replicas sharing the state dir (reconcile.replicas)."""
    from allotment.reconcile.replicas import run_replica

    # what a term imports, imported while standing by: a takeover acts at once, not after it
    for module in (
        "allotment.backends.kubernetes.backend", "allotment.backends.slurm.backend",
        "allotment.reconcile.reconciler", "allotment.reconcile.saved_sim", "allotment.reconcile.source",
    ):
        importlib.import_module(module)

    def lead(ld: Leadership) -> TickResult | None:
        return _term(args, opts, tiers, stop, heartbeat, ld.fence, ld)

    return run_replica(
        leadership, lead, stop, poll_s=leadership.store.duration_s / 4, heartbeat=heartbeat
    )


def _lease_store(args: argparse.Namespace, lease_s: float) -> LeaseStore:
    """The lease's primitive: the backend's own where it has one (a Kubernetes ``Lease``), else
    a file on the shared state dir; ``--lease`` chooses another."""
    kind = args.lease or ("kubernetes" if args.backend == "kubernetes" else "file")
    if kind == "file":
        from allotment.reconcile.file_lease import FileLease

        return FileLease(args.state, lease_s)
    from allotment.reconcile.kube_lease import open_kube_lease

    return open_kube_lease(
        args.kubeconfig, args.context, args.state, int(lease_s),
        namespace=args.lease_namespace, name=args.lease_name,
    )


def _term(
    args: argparse.Namespace, opts: Options, tiers: tuple[int, ...], stop: StopFlag,
    heartbeat: Heartbeat, fence: Fence, leadership: Leadership | None,
) -> TickResult | None:
    """Run the loop with every write inside ``fence``: the one process (its state-dir lock is
    its guard), or a leader's term (until its lease is lost)."""
    from allotment.backends.simulated import SimulatedBackend
    from allotment.reconcile.loop import run_loop
    from allotment.reconcile.reconciler import Reconciler
    from allotment.reconcile.replicas import leader_line
    from allotment.reconcile.saved_sim import SIM_FILE, SavedSim
    from allotment.reconcile.source import open_source

    state: Path = args.state
    with fence():
        for p in remove_stale_temps(state):  # left by a kill -9 during a write; we are its writer
            log.info("removed %s, left by an interrupted write", p.name)
    backend = _backend(args)
    sim = backend if isinstance(backend, SimulatedBackend) else None
    if sim is not None and not args.dry_run:
        backend = SavedSim(sim, state / SIM_FILE, fence)
    source = open_source(args.source, args.branch, state, timeout_s=_seconds(args.git_timeout, "--git-timeout"))
    token = None if leadership is None or leadership.record is None else leadership.record.token
    rec = Reconciler(backend, source, state, opts, source_label=args.source, fence=fence, token=token)
    if leadership is not None and leadership.record is not None:
        lease = leadership.record
        rec.status.leader, rec.status.leader_token = lease.holder, lease.token
        rec.status.leader_since = lease.acquired_at
        with fence():
            rec.audit.append([leader_line(lease, leadership.previous)])
    printed: list[str] = []
    feed = WorkloadFeeder(args, state, tiers, fence) if args.workload is not None else None

    def on_tick(r: TickResult) -> None:
        if sim is not None and not args.dry_run:
            if feed is not None:
                feed.step(rec, sim)
            with fence():
                sim.save(state / SIM_FILE)
        lines = _report_lines(r, args.dry_run)
        if lines != printed:  # print on change only
            print("\n".join(lines), flush=True)
            printed[:] = lines

    try:
        return run_loop(
            rec, interval_s=opts.interval_s, once=args.once, stop=stop, on_tick=on_tick,
            heartbeat=heartbeat, until=(lambda: False) if leadership is None else (lambda: leadership.lost),
        )
    finally:
        rec.close()
