"""Period 0 wakes on usage crossings (core.usage_crossings): with ``fairshare_period: 0s`` a
reclaim that becomes justified between events happens then, not at the next event."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from allotment.compile.model import Policy
from allotment.core.context import build_context
from allotment.core.jobs import JobSpec
from allotment.core.usage import UsageLedger, WindowView
from allotment.core.usage_crossings import next_crossing
from allotment.sim.runner import SimResult, simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config

HOUR = 3600.0


def _job(i: str, account: str, gpus: int, submit: float, work: float, mr: float = 600.0) -> JobSpec:
    return JobSpec(id=i, submit=submit, account=account, gpus=gpus, work=work, min_runtime=mr, user="u")


def _run(period_s: int) -> SimResult:
    # one 8-GPU node, a and b at 50/50 (4 GPUs each), a 2 h window.  b ran the whole node for
    # the first hour; a then runs it with two long 4-GPU jobs.  b's 4-GPU job, arriving at 4,000 s,
    # may reclaim one of a's only once a has been served more than b by the 10% margin: a's
    # window usage grows while b's first hour leaves the window's far end from 7,200 s on.
    # a's jobs are past protection by then, and nothing else happens until they end at 90,000 s.
    config = make_config({"a": 1, "b": 1}, nodes=1,
                         policy=Policy(lookback_s=int(2 * HOUR), fairshare_period_s=period_s))
    jobs = [_job("b0", "b", 8, 0.0, HOUR, mr=HOUR),
            _job("a1", "a", 4, 10.0, 90_000.0), _job("a2", "a", 4, 10.0, 90_000.0),
            _job("b1", "b", 4, 4000.0, HOUR)]
    return simulate(config, Workload.of(jobs, ()), keep_events=True)


def _start(res: SimResult, job: str) -> float:
    return next(e.t for e in res.events if e.event == "start" and e.job == job)


def test_with_period_zero_a_reclaim_happens_when_usage_crosses_not_at_the_next_event() -> None:
    # a's usage reaches 1.1x b's at about 7,330 s (a: 8 GPU-h by 7,200 s and growing; b: 8 GPU-h,
    # leaving from 7,200 s); before, the wake was lost and b1 waited for a's jobs to end
    res = _run(0)
    assert 7200.0 < _start(res, "b1") <= 7600.0
    assert [e.rule for e in res.events if e.event == "preempt"] == ["reclaim"]


def test_with_a_period_the_reclaim_waits_for_the_epoch_that_sees_the_crossing() -> None:
    # the same with a 300 s period: the first epoch boundary past the crossing (7,500 s)
    res = _run(300)
    assert _start(res, "b1") == 7500.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), st.floats(0, 20_000), st.floats(1, 5_000), st.integers(1, 8)),
                min_size=1, max_size=6),
       st.floats(1.0, 30_000.0))
def test_no_comparison_turns_before_the_crossing_it_reports(charges: list[tuple[str, float, float, int]],
                                                            now: float) -> None:
    # the measures just after now and just before the reported crossing keep every reclaim
    # comparison's sign: the wake is never late
    ledger = UsageLedger(2 * HOUR)
    edges = sorted([(t, a, g) for a, t, d, g in charges] + [(t + d, a, -g) for a, t, d, g in charges])
    for t, a, g in edges:
        (ledger.start if g > 0 else ledger.stop)(a, t, abs(g))
    config = make_config({"a": 1, "b": 1}, nodes=1)
    ctx = build_context(config, "c1")
    view = WindowView(ledger, now)
    owed = {"a": 4.0, "b": 4.0}
    nxt = next_crossing(ctx, view.trend, owed, 0.1, now, view.next_break())
    assert nxt > now
    if edges[-1][0] > now:
        return  # a charge changes after now: the ledger's future is not the view's line
    end = min(nxt - 2e-6, now + 30_000.0)

    def signs(t: float) -> tuple[bool, bool]:
        ma, mb = ledger.window_gpu_hours("a", t) / 4.0, ledger.window_gpu_hours("b", t) / 4.0
        return ma > mb * 1.1 + 1e-9, mb > ma * 1.1 + 1e-9

    first = signs(now + 1e-6)
    steps = 50
    for k in range(1, steps + 1):
        t = now + (end - now) * k / steps
        if t > now + 1e-3:
            assert signs(t) == first or abs(t - end) < 1e-3
