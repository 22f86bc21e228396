"""A restarted reconciler decides as one that never stopped: what it remembers of jobs (the job
a requeued job made room for, first submissions, debug backfill that yields) and the usage
frozen for the fair-share epoch are saved in the state dir, and a memory file it did not write
is refused in one line."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from allotment.backends.simulated import SimulatedBackend
from allotment.reconcile.active import EpochUsage
from allotment.reconcile.first_submit import FirstSubmissions
from allotment.reconcile.job_memory import JobMemory
from allotment.reconcile.memory_file import MEMORY_FILE, Memory, read_memory, save_memory
from allotment.reconcile.reconciler import Options, Reconciler
from allotment.reconcile.source import GitSource
from allotment.reconcile.state_errors import StateFileError
from tests.reconcile.conftest import T0, Clock
from tests.reconcile.repo import make_repo

TEAMS = ("teama1", "teama2", "teamb")


def _workload(seed: int) -> dict[int, list[tuple[str, int, str]]]:
    """step -> jobs submitted then: (account, gpus, qos); teamb fills the cluster first."""
    rnd = random.Random(seed)
    plan: dict[int, list[tuple[str, int, str]]] = {0: [("teamb", 8, "alloc-20s")] * 4}
    for step in range(1, 60):
        if rnd.random() < 0.5:
            acct = rnd.choice(TEAMS)
            plan.setdefault(step, []).append(
                (acct, rnd.choice([1, 2, 4, 8]), rnd.choice(["alloc-20s", "unallocated"]))
            )
    return plan


def _run(tmp: Path, seed: int, *, restart: bool) -> list[tuple[float, str, str, str]]:
    """Tick a reconciler in active mode over the workload; with ``restart`` a new process (a
    new Reconciler on the same state dir) makes every tick.  The applied actions, in order."""
    repo = tmp / "repo"
    make_repo(repo, fairshare_period="120s")
    sim = SimulatedBackend([(f"n{i}", 8) for i in range(1, 5)], now=T0)
    clock, state = Clock(), tmp / "state"
    opts = Options(tiers_s=(20,), interval_s=5.0)

    def start() -> Reconciler:
        return Reconciler(sim, GitSource(str(repo), "main", state), state, opts, clock=clock)

    rec = start()
    rec.tick()  # the policy in place: associations and QOS exist
    out: list[tuple[float, str, str, str]] = []
    work = _workload(seed)
    for step in range(90):
        for acct, gpus, qos in work.get(step, []):
            sim.submit(acct, gpus, qos=qos)
        for j in list(sim.state.jobs.values()):  # each run lasts 40-160 s of work
            if j.start is not None and sim.state.now - j.start >= 40 + 30 * (int(j.id) % 5):
                sim.finish(j.id)
        if restart:
            rec.close()
            rec = start()
        result = rec.tick()
        out += [
            (clock.t, r.action.kind, r.action.target, r.code)
            for r in result.results
            if r.action.kind in ("requeue", "cancel", "set_priority")
        ]
        clock.t += 5
        sim.advance(5)
    rec.close()
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_a_reconciler_restarted_before_every_tick_decides_as_one_that_never_stopped(
    tmp_path: Path, seed: int
) -> None:
    never = _run(tmp_path / "never", seed, restart=False)
    again = _run(tmp_path / "again", seed, restart=True)
    assert any(kind == "requeue" and code == "applied" for _, kind, _, code in never)
    assert again == never


def test_the_memory_survives_a_save_and_is_not_rewritten_when_unchanged(tmp_path: Path) -> None:
    m = Memory(
        evicted_by=JobMemory({"7": ("9", T0)}),
        submitted=FirstSubmissions(JobMemory({"7": (T0 - 100.0, T0)})),
        yields={"12"},
        usage=EpochUsage(T0 - 60.0, {"teama1": 3.5}),
    )
    save_memory(tmp_path, m)
    path = tmp_path / MEMORY_FILE
    first = path.stat().st_mtime_ns, path.stat().st_ino
    back = read_memory(tmp_path)
    assert back.evicted_by.entries() == {"7": ("9", T0)}
    assert back.submitted.memory.entries() == {"7": (T0 - 100.0, T0)}
    assert back.yields == {"12"} and back.usage == EpochUsage(T0 - 60.0, {"teama1": 3.5})
    save_memory(tmp_path, back)
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == first


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{not json", "file"),
        ('{"version": 2, "evicted_by": {}, "first_submit": {}, "yields": [], "epoch": null,'
         ' "epoch_usage": {}}', "version"),
        ('{"version": 1, "evicted_by": {"7": ["9", "yesterday"]}, "first_submit": {},'
         ' "yields": [], "epoch": null, "epoch_usage": {}}', "evicted_by.7.1"),
    ],
)
def test_a_memory_file_the_reconciler_did_not_write_is_refused_in_one_line(
    tmp_path: Path, text: str, why: str
) -> None:
    (tmp_path / MEMORY_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(StateFileError) as err:
        read_memory(tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{tmp_path / MEMORY_FILE}: ") and why in msg
    assert err.value.exit_code == 2 and (tmp_path / MEMORY_FILE).read_text() == text
