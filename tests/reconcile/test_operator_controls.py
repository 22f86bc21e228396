"""Operator controls, with real processes on 127.0.0.1: ``allot reconcile now`` ticks a
reconciler whose interval is an hour, ``suspend`` makes it observe and apply nothing (shown in
``allot status --reconciler`` and on the live page, recorded in the audit log), ``resume``
applies again; ``allot serve`` answers ``/healthz`` and ``/readyz``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reconcile.repo import DEFAULT_SHARES, commit_all, head, write_repo

ALLOT = [sys.executable, "-m", "allotment.cli.main"]


def _allot(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ALLOT, *argv], capture_output=True, text=True, timeout=timeout, check=False)


def _status(state: Path) -> dict[str, Any]:
    return json.loads((state / "status.json").read_text())  # type: ignore[no-any-return]


def _ready(state: Path) -> dict[str, Any]:
    return next(c for c in _status(state)["conditions"] if c["type"] == "Ready")


def _audit(state: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in (state / "audit.jsonl").read_text().splitlines()]


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read().decode()


@pytest.fixture
def reconciler(config_repo: Path, tmp_path: Path) -> Iterator[Path]:
    """A reconciler process on the sim backend that ticks once an hour on its own."""
    state = tmp_path / "st"
    argv = [*ALLOT, "reconcile", "--backend", "sim", "--source", str(config_repo),
            "--state", str(state), "--interval", "1h"]
    with (tmp_path / "reconcile.log").open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, env={**os.environ})
    try:
        deadline = time.monotonic() + 60
        while not (state / "status.json").exists():
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "reconcile.log").read_text()
            time.sleep(0.1)
        yield state
    finally:
        proc.terminate()
        proc.wait(60)


@pytest.fixture
def served(reconciler: Path, tmp_path: Path) -> Iterator[str]:
    argv = [*ALLOT, "serve", "--state", str(reconciler), "--port", "0"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "serving DIR on http://127.0.0.1:PORT/ ..."
        url = line.split(" on ", 1)[1].split("/ ", 1)[0]
        assert url.startswith("http://127.0.0.1:"), line
        yield url
    finally:
        proc.terminate()
        proc.wait(60)
        assert proc.stdout is not None
        proc.stdout.close()


def test_reconcile_now_ticks_at_once_and_waits_for_the_tick(reconciler: Path) -> None:
    assert _status(reconciler)["ticks"] == 1
    started = time.monotonic()
    done = _allot("reconcile", "now", "--state", str(reconciler), "--timeout", "60s")
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - started < 30  # the interval is an hour: the request ticked it
    assert _status(reconciler)["ticks"] == 2
    assert "Ready True Synced" in done.stdout
    (line,) = [e for e in _audit(reconciler) if e.get("phase") == "control"]
    assert line["action"] == "now" and "@" in line["by"]


def test_a_suspended_reconciler_observes_but_applies_nothing_until_resumed(
    reconciler: Path, config_repo: Path, served: str
) -> None:
    before = head(config_repo)
    assert _status(reconciler)["last_applied_revision"] == before
    done = _allot("reconcile", "suspend", "--state", str(reconciler), "--reason", "GPU firmware upgrade")
    assert done.returncode == 0, done.stderr
    write_repo(config_repo, {**DEFAULT_SHARES, "teama1": 10})
    after = commit_all(config_repo, "shrink teama1")
    ticks = _status(reconciler)["ticks"]
    now = _allot("reconcile", "now", "--state", str(reconciler), "--timeout", "60s")
    assert now.returncode == 1, now.stdout  # a suspended reconciler is not Ready
    st = _status(reconciler)
    assert st["ticks"] > ticks
    assert st["last_attempted_revision"] == after  # it fetched and compiled the new commit ...
    assert st["last_applied_revision"] == before  # ... and applied none of it
    ready = _ready(reconciler)
    assert (ready["status"], ready["reason"]) == ("False", "Suspended")
    assert "GPU firmware upgrade" in ready["message"] and "action(s) held" in ready["message"]
    held = int(ready["message"].rsplit("; ", 1)[1].split()[0])
    assert held > 0 and st["last_tick_counts"] == {"dry_run": held}
    audit = _audit(reconciler)
    suspend_at = next(i for i, e in enumerate(audit) if e.get("action") == "suspend")
    assert audit[suspend_at]["reason"] == "GPU firmware upgrade"
    assert not [e for e in audit[suspend_at:] if e.get("phase") in ("intent", "outcome")]
    text = _allot("status", "--reconciler", "--state", str(reconciler))
    assert text.returncode == 1 and "suspended                by " in text.stdout
    assert "GPU firmware upgrade" in text.stdout
    code, page = _get(served + "/")
    assert code == 200 and 'id="suspended"' in page and "GPU firmware upgrade" in page
    actions = page[page.index('id="actions"'):]
    assert "<td>suspend</td>" in actions and "<td>operator</td><td>requested</td>" in actions

    assert _allot("reconcile", "resume", "--state", str(reconciler)).returncode == 0
    again = _allot("reconcile", "now", "--state", str(reconciler), "--timeout", "60s")
    assert again.returncode in (0, 1), again.stderr  # Reconciling right after applying
    st = _status(reconciler)
    assert st["last_applied_revision"] == after and st["suspended_by"] is None
    audit = _audit(reconciler)
    resume_at = next(i for i, e in enumerate(audit) if e.get("action") == "resume")
    applied = [e for e in audit[resume_at:] if e.get("phase") == "outcome" and e["result"] == "applied"]
    assert applied and all(e["revision"] == after for e in applied)
    code, page = _get(served + "/")
    assert code == 200 and 'id="suspended"' not in page


def test_a_suspension_survives_a_restart(config_repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "st"
    once = ["reconcile", "--backend", "sim", "--source", str(config_repo), "--state", str(state), "--once"]
    assert _allot(*once).returncode == 0
    before = _status(state)["last_applied_revision"]
    assert _allot("reconcile", "suspend", "--state", str(state)).returncode == 0
    write_repo(config_repo, {**DEFAULT_SHARES, "teama1": 10})
    commit_all(config_repo, "shrink teama1")
    assert _allot(*once).returncode == 0  # a new process reads the suspension from the state dir
    assert _status(state)["last_applied_revision"] == before
    assert _ready(state)["reason"] == "Suspended"


def test_healthz_and_readyz_answer_on_loopback(served: str, reconciler: Path) -> None:
    assert _get(served + "/healthz") == (200, "ok\n")
    assert _get(served + "/readyz") == (200, "ok\n")
    (reconciler / "status.json").rename(reconciler / "status.json.moved")
    try:
        assert _get(served + "/healthz") == (200, "ok\n")  # alive: never restart the viewer
        code, body = _get(served + "/readyz")
        assert code == 503 and "no status.json" in body
    finally:
        (reconciler / "status.json.moved").rename(reconciler / "status.json")


def test_the_reconciler_serves_its_own_probes(config_repo: Path, tmp_path: Path) -> None:
    import re

    state = tmp_path / "st"
    argv = [*ALLOT, "reconcile", "--backend", "sim", "--source", str(config_repo), "--state", str(state),
            "--interval", "1h", "--probe-port", "0"]
    log = tmp_path / "log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=out, env={**os.environ})
    try:
        deadline = time.monotonic() + 60
        while not (m := re.search(r"probes on (http://127\.0\.0\.1:\d+)/healthz", log.read_text())) or not (
            state / "status.json"
        ).exists():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        url = m.group(1)
        assert _get(url + "/healthz") == (200, "ok\n")
        assert _get(url + "/readyz") == (200, "ok\n")
        assert _get(url + "/metrics")[0] == 404
    finally:
        proc.terminate()
        assert proc.wait(60) == 0


def test_liveness_fails_on_a_hung_tick_and_readiness_waits_for_the_first() -> None:
    from allotment.reconcile.probes import Heartbeat, hung_after

    now = [0.0]
    hb = Heartbeat(hung_after(10.0), clock=lambda: now[0])  # 10 s ticks: hung after 600 s
    assert hb.live().ok and not hb.ready().ok
    hb.started()
    now[0] = 599.0
    assert hb.live().ok  # a slow tick (commands wait out their timeouts) is not a dead one
    now[0] = 601.0
    assert not hb.live().ok and "in flight for 601 s" in hb.live().message
    hb.ended()
    assert hb.live().ok and hb.ready().ok
