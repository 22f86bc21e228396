"""The metrics of one simulated run, as Ai2 defines them (docs/metrics.md), from the event log.

``Recorder.consume`` takes the run's events one by one (the simulator feeds it as it emits them;
``events.metrics_from_events`` replays a saved log), so every metric is defined here once and a
log reproduces ``allot simulate --json`` exactly.  Everything is measured over [0, end), end =
the horizon (``--days``) or, without one, when the run stopped.  GPU quantities are integrated
exactly between events, then summed by hour.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from allotment.sim.events import Event, RunHeader
from allotment.sim.job_kind import JOB_KINDS, job_kind
from allotment.sim.settled import CHUNK, DROPPED, LIVE, SettledJobs, maybe
from allotment.sim.signals import HourlySignal
from allotment.sim.spilled_doubles import SpilledDoubles
from allotment.sim.summary import LARGE_GPUS, percentile, summarize
from allotment.spill import Spill

__all__ = ["LARGE_GPUS", "Recorder", "percentile"]


class _Job:
    """What the metrics keep of one job.  A plain class rather than a dataclass: built once per
    submit, and a compiled dataclass's ``__init__`` cost ~3.5K instructions against a few hundred."""

    __slots__ = ("account", "allocated", "budgeted", "chain", "eligible", "first_start", "gpus", "kind", "node_gpus",
                 "nodes", "noticed", "pending_since", "pending_total", "rejected", "serial", "submitted")

    def __init__(self, account: str, gpus: int, budgeted: bool, kind: str, serial: int = -1) -> None:
        self.serial = serial  # submit order (sim/settled.py keeps it once the job is gone)
        self.account = account
        self.gpus = gpus
        self.budgeted = budgeted  # minimum runtime > 0: counts against its team's budget
        self.kind = kind  # by the policy, from the submit event (sim/job_kind.py)
        self.eligible: float | None = None
        self.first_start: float | None = None
        self.pending_since: float | None = None  # in the queue since (None: running, held or gone)
        self.pending_total = 0.0
        self.nodes: tuple[str, ...] = ()  # where it runs now (empty: not running)
        self.node_gpus: tuple[int, ...] = ()  # GPUs on each of ``nodes``
        self.allocated = False
        self.rejected = False  # refused by the policy: counted apart, never a wait
        self.noticed = False  # told this run that it will be stopped (a ``notice`` event)
        self.submitted = 0.0  # its submit time: the start of its completion time
        self.chain: str | None = None  # the chain of dependent jobs it is in (sim/chains.py)


class Recorder:
    """Integrates the event stream into hourly signals and per-job waits."""

    def __init__(self, header: RunHeader) -> None:
        self.header = header
        self.teams = sorted(header.teams or header.entitlement_gpus)
        self.node_cap = dict(header.nodes)
        self.node_used = dict.fromkeys(header.nodes, 0)
        self.unhealthy: set[str] = set()
        self.healthy = HourlySignal(float(header.capacity_gpus))  # in-service GPUs
        self.charged = HourlySignal()  # allocated (charged) GPUs running
        self.free_work = HourlySignal()  # unallocated GPUs running
        self.demand = HourlySignal()  # GPUs of every running + pending job
        self.team_run = {t: HourlySignal() for t in self.teams}  # budgeted work running
        self.team_demand = {t: HourlySignal() for t in self.teams}  # budgeted work running+pending
        self.team_charged = {t: HourlySignal() for t in self.teams}  # the team's allocated (charged) GPUs running
        self.jobs: dict[str, _Job] = {}  # the jobs still alive: submitted, not ended, cancelled or rejected
        self.spill = Spill()  # where what is kept of every job goes, a chunk at a time (allotment/spill.py)
        self.settled = SettledJobs(self.spill)  # what the waits need of the others (sim/settled.py)
        self._account_ids: dict[str, int] = {}
        self._accounts: list[str] = []
        self.counts = {"submitted": 0, "completed": 0, "cancelled": 0, "rejected": 0}
        self.preemptions_by_rule: dict[str, int] = {}
        self.lost_gpu_hours = 0.0
        self.notices = 0  # sessions told they will be stopped (core.session_grace)
        self.sessions_stopped = 0  # interactive sessions preempted
        self.sessions_stopped_unnoticed = 0  # ... without a notice first: their unsaved state was lost
        self.drains: list[list[float | None]] = []  # [unhealthy at, emptied at, healthy at]
        self.open_drain: dict[str, int] = {}
        self.human_drains = 0
        self.completion = SpilledDoubles(self.spill)  # submit to end of each job that ended, in end order
        # chain name -> [first submit, last end, members ended, members in the workload, last submit]
        self.chains: dict[str, list[float]] = {}
        # deadlines: each job's with one, until it ends (those left were not done by then), and
        # how many ended by it or after it (docs/metrics.md, "Deadlines")
        self.deadline_open: dict[str, float] = {}
        self.deadline_met = 0
        self.deadline_late = 0

    # -- events -------------------------------------------------------------------------------
    def consume(self, e: Event) -> None:
        """One event, to the handler of its kind: an if-chain, most frequent kinds first, which
        the compiled module turns into string compares and direct calls (a ``getattr`` by name
        cost a generic lookup and call per event)."""
        k = e.event
        if k == "start":
            self._on_start(e)
        elif k == "submit":
            self._on_submit(e)
        elif k == "end":
            self._on_end(e)
        elif k == "preempt":
            self._on_preempt(e)
        elif k == "eligible":
            self._on_eligible(e)
        elif k == "reserve" or k == "release":
            self._on_reserve(e)
        elif k == "reject":
            self._on_reject(e)
        elif k == "drain":
            self._on_drain(e)
        elif k == "resume":
            self._on_resume(e)
        elif k == "notice":
            self._on_notice(e)
        else:
            raise ValueError(f"unknown event kind {k!r}")

    def _on_submit(self, e: Event) -> None:
        self.counts["submitted"] += 1
        assert e.job is not None and e.account is not None and e.gpus is not None
        mr = e.min_runtime or 0.0
        kind = e.kind
        if kind is None:  # a log from before kinds were logged: the debug rule still applies
            h = self.header
            kind = job_kind(None, mr, e.gpus, debug_threshold_s=h.debug_threshold_s,
                            node_gpus=h.debug_max_gpus, interactive=None)
        elif kind not in JOB_KINDS:
            raise ValueError(f"submit of {e.job} at t={e.t}: unknown job kind {kind!r}")
        old = self.jobs.get(e.job)
        if old is not None:  # a later submit of the same id replaces it: its slot holds no job now
            self.settled.drop(old.serial)
        j = self.jobs[e.job] = _Job(e.account, e.gpus, mr > 0, kind, self.settled.open())
        j.submitted = e.t
        if e.chain is not None:
            j.chain = e.chain
            c = self.chains.get(e.chain)
            if c is None:
                self.chains[e.chain] = [e.t, e.t, 0.0, float(e.chain_jobs or 0), e.t]
            else:
                c[0] = min(c[0], e.t)
                c[4] = max(c[4], e.t)
        if e.deadline is not None:
            self.deadline_open[e.job] = e.deadline
        if not e.held:
            self._on_eligible(e)

    def _on_eligible(self, e: Event) -> None:
        j = self.jobs[e.job or ""]
        j.eligible = j.pending_since = e.t
        self._demand(e.t, j, j.gpus)

    def _on_reject(self, e: Event) -> None:
        self.counts["rejected"] += 1
        j = self.jobs.get(e.job or "")
        if j is not None:
            j.rejected = True
            j.pending_since = None
            self._settle(e.job or "", j)

    def _on_start(self, e: Event) -> None:
        j = self.jobs[e.job or ""]
        if j.pending_since is not None:
            j.pending_total += e.t - j.pending_since
            j.pending_since = None
        if j.first_start is None:
            j.first_start = e.t
        nodes, gpus = e.nodes or (), e.node_gpus or ()
        if len(nodes) != len(gpus):
            raise ValueError(f"start of {e.job} at t={e.t}: {len(nodes)} nodes but {len(gpus)} GPU counts")
        j.nodes, j.node_gpus = nodes, gpus
        j.allocated = bool(e.allocated)
        for i, n in enumerate(nodes):
            self.node_used[n] += gpus[i]
        self._run(e.t, j, j.gpus)

    def _stop(self, t: float, j: _Job) -> None:
        gpus = j.node_gpus
        for i, n in enumerate(j.nodes):
            g = gpus[i]
            self.node_used[n] -= g
            if n in self.unhealthy:
                self.healthy.add(t, -g)  # freed on an unhealthy node: out of service
        self._run(t, j, -j.gpus)
        j.nodes, j.node_gpus = (), ()

    def _on_notice(self, e: Event) -> None:
        self.jobs[e.job or ""].noticed = True
        self.notices += 1

    def _on_preempt(self, e: Event) -> None:
        j = self.jobs[e.job or ""]
        self._stop(e.t, j)
        if j.kind == "interactive":  # a session stopped without notice lost what it had not saved
            self.sessions_stopped += 1
            self.sessions_stopped_unnoticed += 0 if j.noticed else 1
        j.noticed = False
        rule = e.rule or ""
        self.preemptions_by_rule[rule] = self.preemptions_by_rule.get(rule, 0) + 1
        self.lost_gpu_hours += e.lost_gpu_hours or 0.0
        if e.requeued:
            j.pending_since = e.t
        else:
            self.counts["cancelled"] += 1
            self._demand(e.t, j, -j.gpus)
            self._settle(e.job or "", j)

    def _on_end(self, e: Event) -> None:
        j = self.jobs[e.job or ""]
        self._stop(e.t, j)
        self._demand(e.t, j, -j.gpus)
        self.counts["completed"] += 1
        self.completion.append(e.t - j.submitted)
        due = self.deadline_open.pop(e.job or "", None)
        if due is not None:
            if e.t > due:
                self.deadline_late += 1
            else:
                self.deadline_met += 1
        if j.chain is not None:
            c = self.chains[j.chain]
            c[1] = max(c[1], e.t)
            c[2] += 1.0
        self._settle(e.job or "", j)

    def _on_reserve(self, e: Event) -> None:
        pass  # advisory (a reservation made, changed or released): no metric counts it

    def _on_drain(self, e: Event) -> None:
        node = e.node or ""
        if e.state == "unhealthy":
            self.unhealthy.add(node)
            self.healthy.add(e.t, -(self.node_cap[node] - self.node_used[node]))
            self.open_drain[node] = len(self.drains)
            self.drains.append([e.t, None, None])
        elif e.state == "ready-for-repair":
            d = self.drains[self.open_drain[node]]
            if d[1] is None:
                d[1] = e.t
        elif e.state == "needs-human":
            self.human_drains += 1

    def _on_resume(self, e: Event) -> None:
        node = e.node or ""
        self.unhealthy.discard(node)
        self.healthy.add(e.t, self.node_cap[node] - self.node_used[node])
        k = self.open_drain.pop(node, None)
        if k is not None:
            self.drains[k][2] = e.t

    def _run(self, t: float, j: _Job, gpus: int) -> None:
        (self.charged if j.allocated else self.free_work).add(t, gpus)
        if j.budgeted and j.account in self.team_run:
            self.team_run[j.account].add(t, gpus)
        if j.allocated and j.account in self.team_charged:
            self.team_charged[j.account].add(t, gpus)

    def _demand(self, t: float, j: _Job, gpus: int) -> None:
        self.demand.add(t, gpus)
        if j.budgeted and j.account in self.team_demand:
            self.team_demand[j.account].add(t, gpus)

    # -- jobs that are gone -------------------------------------------------------------------
    def _settle(self, job: str, j: _Job) -> None:
        """The job is gone (ended, cancelled, rejected): keep its wait facts, drop the object."""
        a = self._account_ids.get(j.account)
        if a is None:
            a = self._account_ids[j.account] = len(self._accounts)
            self._accounts.append(j.account)
        self.settled.settle(j.serial, j.eligible, j.first_start, j.pending_total, j.pending_since, j.gpus,
                            JOB_KINDS.index(j.kind), a, j.rejected)
        del self.jobs[job]

    def all_jobs(self) -> Iterator[_Job]:
        """Every job submitted, in submit order: the live ones as they are, the others rebuilt
        from their settled facts (only what ``summary.waits`` reads of them)."""
        live = {j.serial: j for j in self.jobs.values()}
        n = len(self.settled)
        for base, s in self.settled.chunks():
            for i in range(min(CHUNK, n - base)):
                k = s.kind[i]
                if k == LIVE:
                    j = live.get(base + i)
                    if j is not None:
                        yield j
                    continue
                if k == DROPPED:  # a later submit of the same id replaced it
                    continue
                j = _Job(self._accounts[s.account[i]], s.gpus[i], False, JOB_KINDS[k], base + i)
                j.eligible = maybe(s.eligible[i])
                j.first_start = maybe(s.first_start[i])
                j.pending_total = s.pending_total[i]
                j.pending_since = maybe(s.pending_since[i])
                j.rejected = bool(s.rejected[i])
                yield j

    # -- the summary --------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        return summarize(self)
