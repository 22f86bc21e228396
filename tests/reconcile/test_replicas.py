"""Replicas with one leader (issue 31, item 1), with real processes on the sim backend sharing one
state dir: the leader is killed with SIGKILL at seeded random points of its term, twenty times; a
standby takes over within two lease periods each time, tokens only grow, nothing is written
under an old token after a newer leader's first line, no action is applied twice or lost, and
the ledger holds exactly what the cluster ran.  An old leader stopped (SIGSTOP) past its lease
writes nothing when it resumes, and steps down.

Lease periods are 1 s and ticks 0.2 s so the whole file runs in well under a minute; the
assertions are on what the processes wrote (the lease record, the audit log, the ledger, the
cluster's file), not on how long anything took, except the takeover bound the issue asks for.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from allotment.reconcile.file_lease import FileLease
from allotment.reconcile.leadership import LeaseRecord

pytestmark = pytest.mark.slow

LEASE_S = 1.0
SEED = 31
KILLS = 20


class Replicas:
    """Start and stop ``allot reconcile --leader-elect`` processes on one state dir."""

    def __init__(
        self, repo: Path, state: Path, logs: Path, lease_s: float = LEASE_S, extra: tuple[str, ...] = ()
    ) -> None:
        self.repo, self.state, self.logs = repo, state, logs
        self.lease_s, self.extra = lease_s, extra
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.made = 0
        logs.mkdir(exist_ok=True)

    def start(self, *, feed: bool = True) -> str:
        """One more replica; ``feed=False``: without the demo workload (it ends no job itself)."""
        self.made += 1
        name = f"r{self.made}"
        argv = [
            sys.executable,
            "-m",
            "allotment.cli.main",
            "reconcile",
            "--backend",
            "sim",
            "--source",
            str(self.repo),
            "--state",
            str(self.state),
            "--interval",
            "0.3s",
            "--leader-elect",
            "--lease-duration",
            f"{self.lease_s:g}s",
            "--identity",
            name,
            *self.extra,
            "--tiers",
            "1,2,4,8",
        ]
        if feed:
            argv += [
                "--workload",
                "ai2",
                # 2 days at 2,000x: jobs arrive for 86 s of wall time from the first leader's
                # first tick, well past the kills (about 40 s), so successors lead a live cluster
                # however slow the machine; at 20,000x the whole feed lasted 9 s, and a first
                # leader held up by a loaded machine once ran every job to its end in one tick
                # before the first kill (protections are the --tiers in wall seconds, whatever
                # the speedup)
                "--speedup",
                "2000",
                "--workload-days",
                "2",
            ]
        with (self.logs / f"{name}.log").open("wb") as log:
            self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=log, env={**os.environ})
        return name

    def standbys(self, leader: str) -> list[str]:
        """Live replicas other than ``leader`` that have looked at the lease."""
        return [
            n
            for n, p in self.procs.items()
            if n != leader and p.poll() is None and "standby: " in self.log(n)
        ]

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text()

    def stop_all(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                with _suppress():
                    os.kill(p.pid, signal.SIGCONT)
                p.send_signal(signal.SIGTERM)
        for name, p in self.procs.items():
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)
                raise AssertionError(f"{name} did not stop on SIGTERM:\n{self.log(name)}") from None


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return isinstance(exc[1], ProcessLookupError)


@pytest.fixture
def replicas(config_repo: Path, tmp_path: Path) -> Iterator[Replicas]:
    r = Replicas(config_repo, tmp_path / "st", tmp_path / "logs")
    try:
        yield r
    finally:
        for p in r.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(10)


def _wait(what: str, cond: Callable[[], Any], r: Replicas, limit_s: float = 30.0) -> Any:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.02)
    logs = "\n".join(f"--- {n}\n{r.log(n)[-2000:]}" for n in r.procs)
    raise AssertionError(f"timed out waiting for {what}\n{logs}")


ReadLease = Callable[[], LeaseRecord | None]


def file_lease(state: Path) -> ReadLease:
    def read() -> LeaseRecord | None:
        try:
            return FileLease(state, LEASE_S).read()
        except Exception:  # being replaced this instant: read again
            return None

    return read


def _audit(state: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (state / "audit.jsonl").read_text().splitlines() if x.strip()]


def _ended(state: Path) -> int:
    try:
        return len(json.loads((state / "sim.json").read_text())["ended"])
    except (OSError, ValueError):
        return 0


def _status(state: Path) -> dict[str, Any]:
    try:
        return dict(json.loads((state / "status.json").read_text()))
    except (OSError, ValueError):  # not there yet
        return {}


def _ticks(state: Path, token: int, base: int) -> int:
    """Ticks the leader under ``token`` has finished (0 until it saved its first status)."""
    st = _status(state)
    return int(st["ticks"]) - base if st.get("leader_token") == token else 0


def _ticked(state: Path, after: float) -> bool:
    try:
        st = json.loads((state / "status.json").read_text())
    except (OSError, ValueError):
        return False
    from allotment.timefmt import parse_rfc3339

    return parse_rfc3339(st["last_tick"]) > after


def test_a_standby_takes_over_each_time_the_leader_is_killed_and_nothing_is_done_twice_or_lost(
    replicas: Replicas,
) -> None:
    kill_the_leader_repeatedly(replicas, file_lease(replicas.state), KILLS)


def kill_the_leader_repeatedly(replicas: Replicas, _lease_now: ReadLease, kills: int) -> None:
    """The kill test, on whichever lease the replicas use (tests/k8s runs it on a ``Lease``)."""
    state, LEASE_S = replicas.state, replicas.lease_s
    KILLS = kills

    def _lease(_state: Path) -> LeaseRecord | None:
        return _lease_now()
    for _ in range(4):  # a leader and three standbys: one is always up while a replacement starts
        replicas.start()
    rng = random.Random(SEED)
    # the first leader runs until the fed jobs run and end, so every takeover meets a live cluster
    _wait("jobs that ended", lambda: _ended(state) > 5, replicas, limit_s=60)
    token, killed_at, takeovers, after_expiry = 0, None, [], []
    first_kill: float | None = None
    ticked: list[int] = []  # leaders killed after a whole tick: each wrote its leader line before it
    expired = 0.0
    for _ in range(KILLS):
        cur = _wait(
            "a leader with a newer token",
            lambda token=token: (
                (c := _lease(state)) is not None
                and c.token > token
                and c.valid_at(time.time())
                and c
            ),
            replicas,
        )
        assert cur.token == token + 1  # one takeover per death: tokens grow by one
        if killed_at is not None:
            takeovers.append(cur.acquired_at - killed_at)
            after_expiry.append(cur.acquired_at - expired)
        token = cur.token
        # a random point of its term: while it sets up (n = 0) or after its n-th tick, plus a
        # random part of a tick (inside a write, between two, in the wait)
        n = rng.randrange(3)
        st = _status(state)
        base = int(st.get("ticks", 0)) - (st.get("leader_token") == cur.token)
        _wait(
            f"tick {n} of {cur.holder}",
            lambda cur=cur, base=base, n=n: _ticks(state, cur.token, base) >= n,
            replicas,
        )
        if n >= 1:
            ticked.append(cur.token)
        time.sleep(rng.uniform(0.0, 0.3))
        # a standby is up (a replacement takes seconds to start on a busy machine: that is the
        # Deployment's business, not the takeover's)
        _wait("a standby", lambda cur=cur: replicas.standbys(cur.holder), replicas)
        killed_at = time.time()
        first_kill = killed_at if first_kill is None else first_kill
        p = replicas.procs[cur.holder]
        assert p.poll() is None, replicas.log(cur.holder)
        p.kill()
        p.wait(10)
        dead = _lease(state)  # as the dead leader left it: its last renewal's expiry
        assert dead is not None and dead.token == token
        expired = dead.expires_at
        replicas.start()  # the Deployment's replacement
    # the last leader runs a few whole ticks, then every replica stops cleanly
    last = _wait(
        "the last takeover",
        lambda: (c := _lease(state)) is not None and c.token > token and c,
        replicas,
    )
    takeovers.append(last.acquired_at - killed_at)
    after_expiry.append(last.acquired_at - expired)
    for _ in range(2):
        now = time.time()
        _wait("a tick of the last leader", lambda now=now: _ticked(state, now), replicas)
    replicas.stop_all()

    # a standby took over within two lease periods of every kill: the lease outlives its dead
    # holder by at most one period, and a standby (polling every quarter) takes it within the next
    print(
        "takeover after the kill, after the lease expired (s):",
        [(round(t, 2), round(e, 2)) for t, e in zip(takeovers, after_expiry, strict=True)],
    )
    assert len(takeovers) == KILLS and max(takeovers) <= 2 * LEASE_S, takeovers

    # the audit log: each leader's first line (a leader killed before it wrote anything has
    # none; one killed after a whole tick has it, whatever the machine's speed), then only lines
    # under its token
    entries = _audit(state)
    leaders = [e for e in entries if e.get("phase") == "leader"]
    tokens = [e["token"] for e in leaders]
    assert tokens == sorted(set(tokens)) and tokens[-1] == KILLS + 1, tokens
    assert ticked and set(ticked) <= set(tokens), (ticked, tokens)
    assert all(e["previous_token"] == e["token"] - 1 for e in leaders if e["token"] > 1)
    current = 0
    for e in entries:
        if e.get("phase") == "leader":
            current = e["token"]
        elif "token" in e:
            assert e["token"] == current, (
                f"written under token {e['token']} after token {current} took over: {e}"
            )

    # no action applied twice: each policy change once (the config never changes) ...
    applied = [e for e in entries if e.get("phase") == "outcome" and e.get("result") == "applied"]
    interrupted = Counter(
        e["target"]
        for e in entries
        if e.get("phase") == "outcome"
        and e.get("result") == "interrupted"
        and e["action"] == "requeue"
    )
    policy = Counter((e["action"], e["target"]) for e in applied if "fields" in e)
    assert policy and max(policy.values()) == 1, policy
    # ... and every requeue the log says was applied happened once in the cluster, none lost
    sim = json.loads((state / "sim.json").read_text())
    ended: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in sim["ended"]:
        ended[run["id"]].append(run)
    requeued = Counter(e["target"] for e in applied if e["action"] == "requeue")
    for job in set(requeued) | {j for j, v in sim["jobs"].items() if v["restarts"]}:
        in_cluster = sim["jobs"][job]["restarts"] if job in sim["jobs"] else len(ended[job]) - 1
        assert requeued[job] <= in_cluster <= requeued[job] + interrupted[job], job
    # the final leader converged: every account and QOS of the config exists once
    assert {"org", "proga", "teama1", "teama2", "teamb"} <= set(sim["accounts"])

    # the ledger is exact up to the last observation it charged: a run that ended after it (one
    # the feed finished, or a tick's own requeue, after that tick's read, as the replicas stopped)
    # is charged up to that read and waits for the next start's history(since) (CI saw one 10 ms
    # short when this compared against each run's end)
    runs = [r for r in sim["ended"] if r["min_runtime_s"] != 0 and r["gpus"] > 0]
    # the cluster lived across the takeovers: allocated runs ended under a successor too, so the
    # ledger check below covers charges written by leaders that took over (a count would depend
    # on how fast this machine is: CI once saw exactly 10 where the test asked for more)
    assert first_kill is not None and any(r["end"] > first_kill for r in runs), runs
    charged_at_stop = _charged(state)
    seen = _last_backend_time(state)
    for r in runs:
        got = charged_at_stop.get((r["id"], int(r["start"])), 0.0)
        if r["end"] <= seen:
            assert got == pytest.approx(_hours(r, r["end"]), rel=1e-9, abs=1e-12), (r, got)
        else:  # at most up to its end, and at least up to the read (the saved time drops its us)
            assert _hours(r, seen) - 1e-9 <= got <= _hours(r, r["end"]) + 1e-12, (r, got, seen)
    running = {(j["id"], int(j["start"])) for j in sim["jobs"].values() if j["start"] is not None}
    assert set(charged_at_stop) <= {(r["id"], int(r["start"])) for r in sim["ended"]} | running

    # ... and nothing is lost by the stop: the next leader (no feed, so it ends nothing itself
    # but its own requeues) charges every run of the stopped cluster to its exact end
    replicas.start(feed=False)
    _wait(
        "the restarted leader",
        lambda: (c := _lease(state)) is not None and c.token == KILLS + 2 and c,
        replicas,
    )
    for _ in range(2):
        now = time.time()
        _wait("a tick of the restarted leader", lambda now=now: _ticked(state, now), replicas)
    replicas.stop_all()
    charged = _charged(state)
    for r in runs:
        got = charged.get((r["id"], int(r["start"])))
        assert got == pytest.approx(_hours(r, r["end"]), rel=1e-9, abs=1e-12), (r, got)


def _charged(state: Path) -> dict[tuple[str, int], float]:
    """GPU-hours in the ledger per (job, whole second of its run's start)."""
    db = sqlite3.connect(state / "ledger.sqlite")
    try:
        return {
            (job, start): hours
            for job, start, hours in db.execute(
                "SELECT job, run_start, SUM(gpu_hours) FROM usage GROUP BY job, run_start"
            )
        }
    finally:
        db.close()


def _last_backend_time(state: Path) -> float:
    from allotment.timefmt import parse_rfc3339

    return parse_rfc3339(_status(state)["last_backend_time"])


def _hours(run: dict[str, Any], until: float) -> float:
    """What ``run`` used up to ``until`` (every node of the test's cluster weighs 1)."""
    return float(run["gpus"] * max(0.0, min(until, run["end"]) - run["start"]) / 3600)


def _holds_lock(pid: int, lock: Path) -> bool:
    """Whether ``pid`` holds an ``flock`` on ``lock`` now (/proc/locks)."""
    ino = lock.stat().st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        f = line.split()
        if len(f) > 5 and f[1] == "FLOCK" and f[4] == str(pid) and f[5].endswith(f":{ino}"):
            return True
    return False


def test_an_old_leader_stopped_past_its_lease_writes_nothing_when_it_resumes(
    replicas: Replicas,
) -> None:
    stop_the_leader_past_its_lease(replicas, file_lease(replicas.state), "lock")


def stop_the_leader_past_its_lease(replicas: Replicas, _lease_now: ReadLease, lock_name: str) -> None:
    """SIGSTOP the leader between two writes (``lock_name``: the lock in STATE/lease/ a fenced
    write holds), let a standby take over, SIGCONT it: it writes nothing and stands by."""
    state, LEASE_S = replicas.state, replicas.lease_s

    def _lease(_state: Path) -> LeaseRecord | None:
        return _lease_now()
    a = replicas.start()
    first = _wait("a leader", lambda: (c := _lease(state)) is not None and c, replicas)
    assert first.holder == a
    _wait("its first tick", lambda: _ticked(state, first.acquired_at), replicas)
    b = replicas.start()
    _wait("a standby", lambda: replicas.standbys(a), replicas)
    old = replicas.procs[a]
    lock = state / "lease" / lock_name
    while True:  # stopped between two writes (inside one, it holds the lease until it ends it)
        os.kill(old.pid, signal.SIGSTOP)
        if not _holds_lock(old.pid, lock):
            break
        os.kill(old.pid, signal.SIGCONT)
        time.sleep(0.01)
    stopped_at = time.time()
    new = _wait(
        "the standby's takeover",
        lambda: (c := _lease(state)) is not None and c.holder == b and c,
        replicas,
    )
    assert new.token == first.token + 1 and new.acquired_at - stopped_at <= 2 * LEASE_S
    _wait("a tick of the new leader", lambda: _ticked(state, new.acquired_at), replicas)
    os.kill(old.pid, signal.SIGCONT)
    _wait("the old leader to step down", lambda: "standby: " + b in replicas.log(a), replicas)
    resumed = time.time()
    _wait("another tick of the new leader", lambda: _ticked(state, resumed), replicas)
    replicas.stop_all()

    entries = _audit(state)
    took = next(
        i for i, e in enumerate(entries) if e.get("phase") == "leader" and e["token"] == new.token
    )
    assert all(e.get("token") == new.token for e in entries[took:]), (
        "the old leader wrote after the takeover"
    )
    status = json.loads((state / "status.json").read_text())
    assert (status["leader"], status["leader_token"]) == (b, new.token)
    assert "lease lost" in replicas.log(a) or "fenced:" in replicas.log(a)
