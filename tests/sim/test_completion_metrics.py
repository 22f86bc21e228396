"""Job completion time and chain makespan (docs/metrics.md) on a run small enough to work out by hand.

One team on one 8-GPU node, passes every 10 s, every job protected for its whole run (no
preemption), horizon 2 h (7200 s)."""

from __future__ import annotations

import json

from allotment.core.jobs import JobSpec
from allotment.sim.events import event_from_json, metrics_from_events
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config


def _job(jid: str, submit: float, gpus: int, work: float, *deps: str) -> JobSpec:
    return JobSpec(id=jid, submit=submit, account="a", gpus=gpus, work=work, min_runtime=work, depends_on=deps)


def _run() -> SimResult:
    config = make_config({"a": 1}, nodes=1)
    jobs = [
        _job("P", 0.0, 8, 100.0),  # data prep ...
        _job("T", 0.0, 8, 1000.0, "P"),  # ... -> train ...
        _job("E1", 0.0, 4, 500.0, "T"),  # ... -> two evals side by side (fan-out)
        _job("E2", 0.0, 4, 500.0, "T"),
        _job("X", 5000.0, 8, 100.0),  # on no chain
        _job("Y", 6000.0, 8, 10000.0),  # still running at the horizon ...
        _job("Z", 6000.0, 8, 100.0, "Y"),  # ... so its chain never ends
        _job("F1", 5100.0, 8, 100.0),  # an experiment, and a follow-up submitted while it runs: a chain
        _job("F2", 5150.0, 8, 100.0, "F1"),  # not submitted whole, so not a pipeline
    ]
    return simulate(config, Workload.of(jobs), days=2 / 24, keep_events=True)


def test_completion_time_is_submit_to_end_and_unfinished_jobs_are_counted_apart() -> None:
    """P 0-100, T 100-1100 (held until P ended), E1 and E2 1100-1600, X 5000-5100, F1 5100-5200
    (its pass at 5100 comes after X's end), F2 5200-5300 (held from 5150); Y runs past the
    horizon and Z waits for it.  Completion times 100, 1100, 1600, 1600, 100, 100, 150: mean
    4750 / 7 = 678.5714, nearest-rank p50 150 (4th of 7), p90 1600 (7th of 7); Y and Z
    unfinished."""
    m = _run().metrics
    assert m["completion"] == {"mean": 678.5714, "p50": 150.0, "p90": 1600.0, "n": 7, "unfinished": 2}


def test_chain_makespan_is_first_submit_to_last_end_of_every_member() -> None:
    """Chains: {P, T, E1, E2} (submitted 0, last end 1600: makespan 1600), {F1, F2} (5100 to
    5300: 200) and {Y, Z}, never finished.  X is on no chain.  Submitted whole (every member at
    one instant; ``pipelines``): {P, T, E1, E2} and {Y, Z}, not {F1, F2}."""
    m = _run().metrics
    assert m["chains"] == {"mean": 900.0, "p50": 200.0, "p90": 1600.0, "n": 2, "unfinished": 1}
    assert m["pipelines"] == {"mean": 1600.0, "p50": 1600.0, "p90": 1600.0, "n": 1, "unfinished": 1}


def test_the_event_log_alone_gives_the_same_figures() -> None:
    """The chain (named by its first member by (submit, id): E1) is written on each member's
    submit event, so a saved log reproduces both figures."""
    r = _run()
    assert r.events is not None and r.header is not None
    submits = {e.job: (e.chain, e.chain_jobs) for e in r.events if e.event == "submit"}
    assert submits == {"P": ("E1", 4), "T": ("E1", 4), "E1": ("E1", 4), "E2": ("E1", 4), "X": (None, None),
                       "Y": ("Y", 2), "Z": ("Y", 2), "F1": ("F1", 2), "F2": ("F1", 2)}
    again = metrics_from_events(r.header, [event_from_json(json.loads(json.dumps(e.to_json()))) for e in r.events])
    keys = ("completion", "chains", "pipelines")
    assert [again[k] for k in keys] == [r.metrics[k] for k in keys]
