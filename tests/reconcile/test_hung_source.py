"""A git server that accepts the connection and never answers cannot stop the reconciler, and a
reconciler that stops ticking is not reported Ready (issue 14 item 7)."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from allotment.backends.simulated import SimulatedBackend
from allotment.cli.main import main
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from allotment.reconcile.status import STALE_TICKS, conditions, read_status
from tests.reconcile.conftest import T0, Clock


@pytest.fixture
def hung_server() -> Iterator[str]:
    """A TCP server that accepts git connections and then says nothing, ever."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"git://127.0.0.1:{srv.getsockname()[1]}/budgets.git"
    stop.set()
    t.join()
    for c in held:
        c.close()
    srv.close()


def test_a_hung_git_server_times_out_and_the_last_fetched_revision_is_driven(
    config_repo: Path, tmp_path: Path, sim: SimulatedBackend, clock: Clock, hung_server: str
) -> None:
    state = tmp_path / "state"
    first = Reconciler(sim, GitSource(str(config_repo), "main", state), state, clock=clock)
    good = first.tick().revision
    first.close()
    rec = Reconciler(
        sim,
        GitSource(hung_server, "main", state, timeout_s=1.0),
        state,
        Options(tiers_s=(20,)),
        clock=clock,
    )
    try:
        started = time.monotonic()
        result = rec.tick()
        took = time.monotonic() - started
    finally:
        rec.close()
    assert took < 10
    assert "no answer in 1 s" in (result.fetch_error or "")
    assert result.revision == good
    stalled = rec.status.condition("Stalled")
    assert stalled is not None and stalled.status and stalled.reason == "SourceUnavailable"


def test_a_stale_last_tick_is_not_ready(make_reconciler: Any) -> None:
    rec = make_reconciler(Options(tiers_s=(20,), interval_s=10))
    rec.tick()
    rec.tick()
    st = rec.status
    ready = {c.type: c for c in conditions(st, T0 + 5)}["Ready"]
    assert ready.status and ready.reason == "Synced"
    later = T0 + STALE_TICKS * 10 + 1
    ready = {c.type: c for c in conditions(st, later)}["Ready"]
    assert not ready.status and ready.reason == "Stale"
    assert ready.message.startswith("last tick 31 s ago")


def test_allot_status_exits_1_and_says_how_old_a_stale_tick_is(
    make_reconciler: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = make_reconciler()
    rec.tick()
    rec.tick()  # Ready True at T0, which is long ago by the wall clock
    assert main(["status", "--reconciler", "--state", str(tmp_path / "state")]) == 1
    out = capsys.readouterr().out
    assert re.search(r"Ready +False Stale: last tick", out)
    ago = int(time.time() - T0)
    assert f"last tick                {ago}" in out or f"last tick                {ago + 1}" in out
    assert main(["status", "--reconciler", "--state", str(tmp_path / "state"), "--json"]) == 1
    raw = json.loads(capsys.readouterr().out)
    ready = next(c for c in raw["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and ready["reason"] == "Stale"
    assert ready["lastTransitionTime"].endswith("Z") and "T" in ready["lastTransitionTime"]
    assert read_status(tmp_path / "state").ticks == 2
