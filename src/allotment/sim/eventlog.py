"""What the simulator calls when something happens: builds the ``Event``, feeds the
``Recorder`` and whoever else asked for the events (a list kept in memory, a file written as the
run goes: ``sim/event_file.py``).  Nobody asking, the event is dropped once the recorder has it:
a 30-day run emits hundreds of thousands, which held in memory were most of its peak (issue 27).
One call per event kind keeps the runner's edits to single lines; the few facts an event needs
that the runner does not hold (a job's charge so far, whether a reservation or a drain state was
already logged) live here."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from allotment.core.decisions import NodeReport, Preemption, Reservation, Start
from allotment.core.jobs import JobSpec
from allotment.core.session_grace import Notice
from allotment.sim.chains import Chain
from allotment.sim.events import Event
from allotment.sim.metrics import Recorder
from allotment.sim.signals import HOUR


class EventLog:
    def __init__(
        self,
        recorder: Recorder,
        *,
        kept: list[Event] | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.rec = recorder
        self.kept = kept  # every event, in order, when a caller keeps them in memory
        self.on_event = on_event  # called with every event as it happens (a file writer)
        self._running: dict[str, tuple[float, float]] = {}  # job -> (start, charged GPUs)
        self._charged: dict[str, float] = {}  # job -> reference GPU-seconds charged so far
        self._reserved: dict[str, tuple[tuple[str, ...], float]] = {}
        self._drain_logged: dict[str, set[str]] = {}  # node -> drain states logged since it failed

    def _emit(self, e: Event) -> None:
        self.rec.consume(e)
        if self.kept is not None:
            self.kept.append(e)
        if self.on_event is not None:
            self.on_event(e)

    def _charge_until(self, job: str, t: float) -> None:
        start, rate = self._running.pop(job)
        self._charged[job] = self._charged.get(job, 0.0) + rate * (t - start)

    # -- jobs ---------------------------------------------------------------------------------
    def submit(self, t: float, spec: JobSpec, min_runtime: float, *, held: bool, kind: str,
               chain: Chain | None = None) -> None:
        self._emit(Event(t, "submit", spec.id, spec.account, spec.gpus, min_runtime=min_runtime, held=held or None,
                         kind=kind, chain=None if chain is None else chain.name,
                         chain_jobs=None if chain is None else chain.jobs, deadline=spec.deadline))

    def eligible(self, t: float, spec: JobSpec) -> None:
        self._emit(Event(t, "eligible", spec.id, spec.account, spec.gpus, reason="its last dependency ended"))

    def reject(self, t: float, spec: JobSpec, reason: str) -> None:
        self._emit(Event(t, "reject", spec.id, spec.account, spec.gpus, reason=reason))

    def start(self, t: float, spec: JobSpec, st: Start, charged_gpus: float) -> None:
        self._reserved.pop(spec.id, None)
        self._running[spec.id] = (t, charged_gpus)
        self._emit(
            Event(
                t, "start", spec.id, spec.account, spec.gpus,
                nodes=tuple(n for n, _ in st.placement),
                node_gpus=tuple(g for _, g in st.placement),
                allocated=st.allocated,
                charged_gpus=charged_gpus,
                reason=st.reason,
            )
        )

    def preempt(self, t: float, spec: JobSpec, p: Preemption, *, requeued: bool) -> None:
        self._charge_until(spec.id, t)
        if not requeued:  # cancelled: no ``end`` will report its charge, so it is not kept
            self._charged.pop(spec.id, None)
        self._emit(
            Event(
                t, "preempt", spec.id, spec.account, spec.gpus,
                by=p.for_job,
                rule=p.rule,
                requeued=requeued,
                lost_gpu_hours=p.lost_work * spec.gpus / HOUR,
                reason=p.reason,
            )
        )

    def notice(self, t: float, spec: JobSpec, n: Notice) -> None:
        """A session told it will be stopped after its grace (core.session_grace)."""
        self._emit(Event(t, "notice", spec.id, spec.account, spec.gpus, by=n.for_job, rule=n.rule,
                         at=n.at + n.grace_s, reason=n.reason))

    def end(self, t: float, spec: JobSpec) -> None:
        self._charge_until(spec.id, t)
        charged = self._charged.pop(spec.id, 0.0) / HOUR
        self._emit(Event(t, "end", spec.id, spec.account, spec.gpus, charged_gpu_hours=charged))

    def reservations(self, t: float, held: Sequence[tuple[JobSpec, Reservation]], started: Collection[str],
                     waiting: Callable[[str], bool], spec_of: Callable[[str], JobSpec]) -> None:
        """A pass's reservations (``held``, with their jobs): ``reserve`` when one is new or
        changed, not on every pass that keeps it; ``release`` when a job's reservation is gone and
        the job did not start (``started``: the pass's starts), with why -- another job holds it
        now, the job left the queue (``waiting``), or it no longer qualifies to hold one (the
        core decides the hold afresh each pass: docs/design/reservation.md)."""
        now_held = {spec.id for spec, _ in held}
        for jid in [j for j in self._reserved if j not in now_held]:
            del self._reserved[jid]
            if jid in started:
                continue  # fulfilled: its ``start`` says so
            if not waiting(jid):
                why = "it left the queue"
            elif len(held) == 1:
                why = f"{held[0][0].id} holds the reservation now"
            elif held:
                why = f"{', '.join(spec.id for spec, _ in held)} hold the reservations now"
            else:
                why = "no job holds a reservation now: it no longer qualifies (its team's tier, caps or shape changed)"
            spec = spec_of(jid)
            self._emit(Event(t, "release", jid, spec.account, spec.gpus, reason=why))
        for spec, r in held:
            key = (tuple(r.nodes), r.at)
            if self._reserved.get(spec.id) == key:
                continue
            self._reserved[spec.id] = key
            self._emit(Event(t, "reserve", spec.id, spec.account, spec.gpus, nodes=key[0], at=r.at, reason=r.reason))

    def reserved(self) -> bool:
        """Does a job hold a reservation this log reported (``reservations`` has something to
        release)?"""
        return bool(self._reserved)

    # -- nodes --------------------------------------------------------------------------------
    def drain(self, t: float, node: str, reason: str) -> None:
        self._drain_logged[node] = {"unhealthy"}
        self._emit(Event(t, "drain", node=node, state="unhealthy", reason=reason))

    def resume(self, t: float, node: str) -> None:
        self._drain_logged.pop(node, None)
        self._emit(Event(t, "resume", node=node, reason="healthy again"))

    def node_report(self, t: float, rep: NodeReport) -> None:
        """A failed node's drain reports: emptied (ready for repair) and, once, needs a human."""
        logged = self._drain_logged.get(rep.node)
        if logged is None:
            return  # not a failure this run logged
        state = "ready-for-repair" if rep.state == "ready-for-repair" else ("needs-human" if rep.needs_human else None)
        if state is None or state in logged:
            return
        logged.add(state)
        self._emit(Event(t, "drain", node=rep.node, state=state, reason=rep.reason))
