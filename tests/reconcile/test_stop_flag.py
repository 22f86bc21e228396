"""The stop flag wakes on SIGTERM wherever in ``wait`` the signal lands, and takes no lock in its
handler (``reconcile.loop.StopFlag``).

The CI once saw a standby reconciler not stop on SIGTERM: its handler called
``threading.Event.set()``, and a handler runs between two bytecodes of the main thread, possibly
inside ``Event.wait`` while that thread holds the event's lock, so ``set`` waited on a lock its
own thread held.  The window is a few bytecodes wide, so the test does not wait for luck: a
profile hook sends the signal at each call event inside ``wait`` in turn, in a child process
(a deadlock must not hang the test run), and every one must stop, waking within a second of
the signal (a signal that lands just before the ``poll`` must wake it too).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import allotment

SRC = str(Path(allotment.__file__).resolve().parents[1])

CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from allotment.reconcile.loop import StopFlag

    def events_in_wait():
        seen = []
        flag = StopFlag()
        sys.setprofile(lambda frame, event, arg: seen.append(event))
        flag.wait(0.001)
        sys.setprofile(None)
        return len(seen)

    fired = [0.0]

    n = events_in_wait()
    for k in range(n):
        flag = StopFlag()
        flag.install()
        count = [0]

        def hook(frame, event, arg, k=k):
            count[0] += 1
            if count[0] == k + 1:
                fired[0] = time.monotonic()
                os.kill(os.getpid(), signal.SIGTERM)

        sys.setprofile(hook)
        flag.wait(1.5)
        sys.setprofile(None)
        late = time.monotonic() - fired[0]
        assert flag.stopped, k
        assert late < 1.0, (k, late)  # a signal just before the poll still wakes it
    print("points", n)
    """
)


def test_a_signal_at_any_point_of_wait_stops_it_at_once() -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("a SIGTERM inside StopFlag.wait left it waiting") from exc
    assert out.returncode == 0, out.stderr
    points = int(out.stdout.split()[-1])
    assert points >= 1  # the hook saw the wait's calls: the sweep is not empty


def test_set_from_another_thread_wakes_a_wait() -> None:
    from allotment.reconcile.loop import StopFlag

    flag = StopFlag()
    t = threading.Timer(0.2, flag.set)
    t.start()
    t0 = time.monotonic()
    flag.wait(20.0)
    t.join()
    assert flag.stopped
    assert time.monotonic() - t0 < 5.0


def test_a_signal_from_outside_wakes_a_long_wait_and_is_logged() -> None:
    child = textwrap.dedent(
        """
        import logging, sys, time
        from allotment.reconcile.loop import StopFlag
        logging.basicConfig(level=logging.INFO, stream=sys.stderr)
        flag = StopFlag(); flag.install()
        print("ready", flush=True)
        t0 = time.monotonic()
        flag.wait(60.0)
        print(flag.stopped, round(time.monotonic() - t0 < 10), flush=True)
        """
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    p = subprocess.Popen([sys.executable, "-c", child], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    assert out.split() == ["True", "1"], (out, err)
    assert f"signal {int(signal.SIGTERM)}: finishing the current tick" in err
