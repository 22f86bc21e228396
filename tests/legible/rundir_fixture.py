"""Make a run dir exactly as ``allot simulate --save DIR`` does: the real simulator and the real
writer (``sim.rundir.save_run``), so the views are tested against the format they will read."""

from __future__ import annotations

from pathlib import Path

from allotment.compile.model import CompiledConfig
from allotment.legible.run_index import write_index
from allotment.sim.anchor import t0_of
from allotment.sim.event_file import EventFile
from allotment.sim.rundir import RunSource, save_run
from allotment.sim.runner import simulate
from allotment.sim.workloads import from_scenario


def make_run_dir(out: Path, config: CompiledConfig, *, cluster: str = "b200", days: float = 2.0,
                 seed: int = 0, policy: str = "budgets", overrides: dict[str, str] | None = None) -> Path:
    """Simulate the bundled ai2 scenario and save it as a run dir in ``out``."""
    workload = from_scenario(config, "ai2", cluster=cluster, days=days, seed=seed)
    log = out.with_name(out.name + ".events.jsonl")
    with EventFile(log) as events:
        result = simulate(config, workload, cluster=cluster, days=days, seed=seed, policy=policy, on_event=events,
                          overrides=overrides or {})
        assert result.header is not None
        events.finish(result.header)
    src = RunSource(scenario="ai2", trace=None, days=days, t0=t0_of(config.at).isoformat(), overrides=overrides or {})
    save_run(out, config, workload, result, src, events=log)
    assert write_index(out)  # as cmd_simulate does after save_run
    log.unlink()
    return out
