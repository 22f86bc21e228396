"""``within_team`` in policies/scheduler.yaml reaches the compiled weights, per cluster too."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from allotment.compile.compiler import compile_repo
from allotment.compile.model import BELOW, PriorityWeights, WeightSet
from tests.config.corpus import materialize


def test_within_team_knobs_compile_into_the_priority_weights(tmp_path: Path) -> None:
    repo = materialize("boost-expired-warns", tmp_path / "repo")
    sched = repo / "policies" / "scheduler.yaml"
    sched.write_text(sched.read_text().replace(
        "clusters:\n  small:\n",
        "within_team:\n  mode: adaptive\n  below:\n    fit: 0.4\nclusters:\n  small:\n"
        "    within_team:\n      mode: fifo\n      dependencies: false\n"))
    config = compile_repo(repo, dt.date(2026, 6, 1))
    assert config.policy.priority_weights == PriorityWeights(mode="adaptive", below=dataclasses.replace(BELOW, fit=0.4))
    small = config.policy_for("small").priority_weights
    assert (small.mode, small.dependencies, small.below.fit, small.above) == ("fifo", False, 0.4, WeightSet())
