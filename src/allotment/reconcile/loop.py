"""Run ticks until told to stop.  SIGTERM/SIGINT never interrupt a tick: the flag is checked
between ticks, so the tick in flight finishes, the ledger and status are flushed, and the process
exits 0.  One reconciler per state dir (an exclusive ``flock``), so two copies never race.
Between ticks the operator's requests (``control``) are looked for every ``POLL_S``: "reconcile
now", suspend and resume start a tick at once, and the next tick keeps its slot on the grid.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import math
import select
import signal
import socket
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


_INSTALLED: list[StopFlag] = []


class StopFlag:
    """Set by SIGTERM/SIGINT (or ``set`` from any thread); ``wait`` sleeps until the next tick or
    the flag, whichever first.

    The signal handler takes no lock.  A Python handler runs in the main thread between two
    bytecodes, possibly inside ``threading.Event.wait`` while that thread holds the event's own
    lock: an ``Event.set()`` there blocks on it forever (shown by
    ``tests/reconcile/test_stop_flag.py``; a standby that never stopped on SIGTERM in CI).  So
    the handler only sets a plain attribute, ``set`` writes a byte to a socket pair (as the
    signal's C-level handler does, ``install``), and ``wait`` polls the other end.  Logging
    takes locks too (a handler's, and the stream's), so the signal is logged by ``stopped`` when
    the loop next looks, not in the handler.
    """

    def __init__(self) -> None:
        self._stopped = False
        self._signum: int | None = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)

    def install(self) -> None:
        """Handle SIGTERM/SIGINT (main thread only, as ``signal`` requires).  The wake-up fd is
        written by the C-level handler at the moment the signal arrives, so a signal that lands
        just before ``wait`` enters ``poll`` (when the Python handler has not run yet) still
        wakes it."""
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        signal.set_wakeup_fd(self._wake_w.fileno(), warn_on_full_buffer=False)
        _INSTALLED.append(self)  # the process's wake-up fd: never collected, never closed

    def __del__(self) -> None:  # the pair is closed with the flag (an installed flag is kept)
        for end in (getattr(self, "_wake_r", None), getattr(self, "_wake_w", None)):
            if end is not None:
                end.close()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._signum = signum
        self.set()

    def set(self) -> None:
        self._stopped = True
        with contextlib.suppress(OSError):  # the buffer is full: a byte is already waiting
            self._wake_w.send(b"\0")

    @property
    def stopped(self) -> bool:
        if self._signum is not None:
            log.info("signal %d: finishing the current tick, then exiting", self._signum)
            self._signum = None
        return self._stopped

    def wait(self, seconds: float) -> None:
        if self._stopped:
            return
        # poll, not select: no limit on the descriptor's number in a long-lived process
        poller = select.poll()
        poller.register(self._wake_r, select.POLLIN)
        # at most an hour (poll's C int of milliseconds); a caller waits again until its deadline
        if poller.poll(math.ceil(min(max(0.0, seconds), 3600.0) * 1000)):
            # drained, so a byte of some other handled signal cannot make later waits spin
            with contextlib.suppress(OSError):
                while self._wake_r.recv(512):
                    pass


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
