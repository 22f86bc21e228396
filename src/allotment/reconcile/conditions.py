"""From what a tick found to the three kstatus conditions, in one documented order.

The first match wins (``TickOutcome.of``):

1. the state dir or the backend failed            -> Stalled ``StateDirFailure``/``BackendFailure``
2. the clocks disagree beyond the bound           -> Stalled ``ClockSkew``
3. an action failed                               -> Stalled ``ActionsFailed``
4. no revision at all (none validates, no last good; or the source is unreachable)
                                                  -> Stalled ``NoValidRevision``/``SourceUnavailable``
5. the source could not be fetched (the local copy's revision is driven)
                                                  -> Stalled ``SourceUnavailable``
6. the newest commit is not the one driven        -> Stalled ``NewestRevisionRejected``
7. an operator suspended it (``allot reconcile suspend``; it observes, applies nothing)
                                                  -> Ready False ``Suspended``
8. drift left as found (policy ``drift: report``) -> Ready False ``DriftReported``
9. ``--dry-run`` with actions to do               -> Ready False ``DryRun``
10. otherwise                                     -> Ready True ``Synced``

``Reconciling`` is True when the tick changed something.  ``Ready`` is False whenever
``Stalled`` or ``Reconciling`` is True (``status.conditions`` enforces it for every reader).
"""

from __future__ import annotations

from dataclasses import dataclass

from allotment.reconcile.status import Status, suspended_line
from allotment.reconcile.tick import TickResult


@dataclass(frozen=True, slots=True)
class TickOutcome:
    stalled_reason: str | None  # None: not stalled
    message: str
    ready_reason: str = "Synced"
    ready: bool = True
    applied: int = 0

    @classmethod
    def backend_failure(cls, msg: str) -> TickOutcome:
        return cls("BackendFailure", msg)

    @classmethod
    def state_failure(cls, msg: str) -> TickOutcome:
        return cls("StateDirFailure", msg)

    @classmethod
    def no_revision(cls, msg: str, unreachable: bool) -> TickOutcome:
        return cls("SourceUnavailable" if unreachable else "NoValidRevision", msg)

    @classmethod
    def of(cls, r: TickResult, applied: int, dry_run: bool, st: Status) -> TickOutcome:
        failed = [x for x in r.results if x.code == "failed"]
        if r.skew is not None and not r.skew.ok:
            return cls("ClockSkew", r.skew.message(), applied=applied)
        if failed:
            msg = "; ".join(f"{x.action.kind} {x.action.target}: {x.message}" for x in failed[:3])
            return cls("ActionsFailed", msg, applied=applied)
        driving = (r.revision or "")[:12]
        if r.fetch_error:
            return cls(
                "SourceUnavailable",
                f"driving last fetched {driving}: {r.fetch_error}",
                applied=applied,
            )
        if r.newest_rejected:
            return cls(
                "NewestRevisionRejected",
                f"driving last good {driving}: {r.newest_rejected}",
                applied=applied,
            )
        if st.suspended_by is not None:
            held = sum(1 for x in r.results if x.code == "dry_run")
            return cls(
                None, f"{suspended_line(st)}; {held} action(s) held", "Suspended", False, applied
            )
        if r.drift and st.drift:
            n = len(r.drift)
            return cls(
                None,
                f"{n} difference(s) left as found (policy drift: report)",
                "DriftReported",
                False,
                applied,
            )
        if dry_run:
            n = sum(1 for x in r.results if x.code == "dry_run")
            return cls(None, f"{n} action(s) would be applied", "DryRun", n == 0, applied)
        return cls(None, f"cluster matches {driving}", applied=applied)


def set_conditions(st: Status, o: TickOutcome, now: float) -> None:
    if o.stalled_reason is not None:
        st.last_error = o.message
        st.set_condition("Stalled", True, o.stalled_reason, o.message, now)
        st.set_condition("Ready", False, o.stalled_reason, o.message, now)
    else:
        st.last_error = None
        st.set_condition("Stalled", False, "Progressing", "", now)
        st.set_condition("Ready", o.ready, o.ready_reason, o.message, now)
    if o.applied:
        st.set_condition(
            "Reconciling", True, "Progressing", f"{o.applied} change(s) this tick", now
        )
        if o.stalled_reason is None:
            st.set_condition("Ready", False, "Progressing", f"{o.applied} change(s) this tick", now)
    else:
        st.set_condition("Reconciling", False, "Idle", "no change this tick", now)
