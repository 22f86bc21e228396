"""Run as one of several replicas: stand by until the lease is this replica's, lead (the
ordinary loop, ``reconcile.loop``, with every write fenced) until the lease is lost or the
process is told to stop, then stand by again (``reconcile.leadership`` holds the rule).

A change of leader is recorded where an operator looks: one audit line (``"phase": "leader"``,
with the holder, the token and whom it replaced) and the status (``leader``, ``leader_token``,
``leader_since``).  The new leader reads everything again from the shared state dir (status,
memory, ledger, the sim cluster): nothing a standby kept in memory is trusted.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from allotment.reconcile.audit import audit_time
from allotment.reconcile.leadership import Leadership, LeaseRecord, LostLease
from allotment.reconcile.loop import StopFlag
from allotment.reconcile.probes import Heartbeat
from allotment.reconcile.reconciler import TickResult

log = logging.getLogger(__name__)

Lead = Callable[[Leadership], TickResult | None]
"""One term as leader: build the reconciler with ``leadership.fence`` and run the loop until
``leadership.lost`` or the stop flag; may raise ``LostLease`` from any write."""


def leader_line(rec: LeaseRecord, previous: LeaseRecord | None) -> str:
    """The audit line of a takeover."""
    entry: dict[str, object] = {
        "time": audit_time(rec.acquired_at),
        "phase": "leader",
        "holder": rec.holder,
        "token": rec.token,
        "previous": None if previous is None else previous.holder,
        "previous_token": None if previous is None else previous.token,
        "previous_expired": None if previous is None else audit_time(previous.expires_at),
    }
    return json.dumps(entry, sort_keys=True)


def run_replica(
    leadership: Leadership,
    lead: Lead,
    stop: StopFlag,
    *,
    poll_s: float,
    heartbeat: Heartbeat | None = None,
) -> TickResult | None:
    """Stand by, polling the lease every ``poll_s``; lead when it is ours.  On a clean stop the
    lease is released, so a standby takes over at once rather than after it expires."""
    last: TickResult | None = None
    waiting_for: str | None = None
    while not stop.stopped:
        if heartbeat is not None:
            heartbeat.stand_by(True)
        if not leadership.try_lead():
            cur = leadership.current()
            who = None if cur is None else cur.holder
            if who != waiting_for:
                log.info("standby: %s leads", who)
                waiting_for = who
            stop.wait(poll_s)
            continue
        rec = leadership.record
        assert rec is not None
        prev = leadership.previous
        log.info(
            "leader: %s took the lease, token %d (from %s)",
            rec.holder,
            rec.token,
            "nobody" if prev is None else f"{prev.holder}, token {prev.token}",
        )
        if heartbeat is not None:
            heartbeat.stand_by(False)
        try:
            last = lead(leadership)
        except LostLease as exc:
            log.warning("%s; standing by", exc)
        finally:
            if stop.stopped:
                leadership.release()
            else:
                leadership.step_down()
        waiting_for = None
    return last
