"""Run ticks until told to stop.  SIGTERM/SIGINT never interrupt a tick: the flag is checked
between ticks, so the tick in flight finishes, the ledger and status are flushed, and the process
exits 0.  One reconciler per state dir (an exclusive ``flock``), so two copies never race.
Between ticks the operator's requests (``control``) are looked for every ``POLL_S``: "reconcile
now", suspend and resume start a tick at once, and the next tick keeps its slot on the grid.
"""

from __future__ import annotations

import fcntl
import logging
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from allotment.errors import UsageError
from allotment.reconcile.control import POLL_S
from allotment.reconcile.probes import Heartbeat
from allotment.reconcile.reconciler import Reconciler, TickResult
from allotment.reconcile.state_errors import StateDirError

log = logging.getLogger(__name__)


@contextmanager
def state_lock(state_dir: Path) -> Iterator[None]:
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        f = (state_dir / "lock").open("a")
    except OSError as exc:
        raise StateDirError(f"state dir {state_dir}: {exc.strerror or exc}") from exc
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise UsageError(f"another reconciler holds {state_dir}/lock") from exc
        yield


class StopFlag:
    """Set by SIGTERM/SIGINT; ``wait`` sleeps until the next tick or the flag, whichever first."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def install(self) -> None:
        def handler(signum: int, frame: FrameType | None) -> None:
            log.info("signal %d: finishing the current tick, then exiting", signum)
            self._event.set()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)

    def set(self) -> None:
        self._event.set()

    @property
    def stopped(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> None:
        self._event.wait(max(0.0, seconds))


def run_loop(
    reconciler: Reconciler,
    *,
    interval_s: float,
    once: bool,
    stop: StopFlag,
    on_tick: Callable[[TickResult], None] = lambda r: None,
    clock: Callable[[], float] = time.monotonic,
    heartbeat: Heartbeat | None = None,
    until: Callable[[], bool] = lambda: False,
) -> TickResult | None:
    """Tick until ``stop`` (or ``until()``: a replica that lost its lease, reconcile.replicas)."""
    last: TickResult | None = None
    deadline = clock()
    while not stop.stopped and not until():
        if heartbeat is not None:
            heartbeat.started()
        last = reconciler.tick()
        on_tick(last)
        if heartbeat is not None:
            heartbeat.ended()
        if once:
            break
        if clock() >= deadline:  # not a tick an operator asked for between two slots
            deadline = next_tick(deadline, clock(), interval_s)
        while not stop.stopped and not until() and clock() < deadline and not reconciler.wants_tick():
            stop.wait(min(POLL_S, deadline - clock()))
    return last


def next_tick(deadline: float, now: float, interval_s: float) -> float:
    """When the next tick starts: on the grid ``deadline + k * interval_s`` (k >= 1), the first
    slot not yet past.  Ticks keep their period exactly, instead of drifting by each tick's own
    overhead (a wait of "interval minus this tick's time" loses the time between the reading and
    the wait, about 10 ms a tick), which the simulator's passes, on the same grid, do not; a tick
    that overran skips the slots it missed rather than running late ticks back to back."""
    if interval_s <= 0:
        return now
    nxt = deadline + interval_s
    if nxt < now:
        nxt += math.ceil((now - nxt) / interval_s) * interval_s
    return nxt
