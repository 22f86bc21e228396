"""Per-team metrics: owed hours stop at the team's own max_gpus ceiling; per-team waits."""

from __future__ import annotations

from allotment.core.jobs import JobSpec
from allotment.sim.runner import simulate
from allotment.traces.scenarios.workload import Workload
from tests.core.builders import make_config


def _jobs(account: str, n: int, gpus: int, work: float, start: int = 0) -> list[JobSpec]:
    return [
        JobSpec(id=f"{account}{i:03d}", submit=0.0, account=account, gpus=gpus, work=work, min_runtime=600, user="u")
        for i in range(start, start + n)
    ]


def test_owed_stops_at_the_teams_own_ceiling() -> None:
    # a and b are entitled to 16 GPUs each; a's managers capped it at 8
    config = make_config({"a": 1, "b": 1}, nodes=4, max_gpus={"a": 8})
    w = Workload.of(_jobs("a", 20, 4, 3600.0) + _jobs("b", 20, 4, 3600.0))
    m = simulate(config, w, days=0.25).metrics
    hours = 0.25 * 24
    assert m["teams"]["a"]["owed"] <= 8 * hours + 1e-6
    assert m["teams"]["a"]["owed"] > 7 * hours  # demand is there all the time: owed is the cap
    assert m["teams"]["a"]["ratio"] >= 0.95  # it ran its 8 GPUs: not counted as short-changed
    assert m["teams"]["b"]["owed"] > 8 * hours  # b is owed its full entitlement


def test_each_team_reports_its_own_wait_percentiles() -> None:
    config = make_config({"a": 1, "b": 1}, nodes=1)
    # a's four 4-GPU jobs queue behind each other on 8 GPUs; b has a single job
    w = Workload.of(_jobs("a", 4, 4, 3600.0) + _jobs("b", 1, 2, 60.0))
    m = simulate(config, w).metrics
    a, b = m["teams"]["a"]["wait"], m["teams"]["b"]["wait"]
    assert a["n"] == 4 and b["n"] == 1
    assert a["p90"] > b["p90"]
    assert a["p90"] >= 3000.0  # the last of a's jobs waited for one to end
