"""The one definition of a job's kind (issue 29, item 3): the policy's debug rule first, then
the policy's interactive class, then the declared kind; a label alone never makes a class."""

from __future__ import annotations

from allotment.compile.interactive import InteractiveClass
from allotment.sim.job_kind import job_kind


def _kind(declared: str, min_runtime: float, gpus: int, interactive: InteractiveClass | None = None) -> str:
    """On a cluster of 8-GPU nodes, under a 15-minute debug threshold."""
    return job_kind(declared, min_runtime, gpus, debug_threshold_s=900.0, node_gpus=8,
                    interactive=interactive if interactive is not None else InteractiveClass())


def test_a_short_protected_one_node_job_is_debug_whatever_its_label() -> None:
    assert _kind("train", 600.0, 4) == "debug"
    assert _kind("interactive", 600.0, 4) == "debug"


def test_a_debug_label_the_policy_does_not_treat_as_debug_counts_as_batch() -> None:
    assert _kind("debug", 3600.0, 1) == "batch"
    assert _kind("debug", 600.0, 16) == "batch"  # two nodes


def test_a_session_is_what_the_policy_interactive_class_recognises() -> None:
    assert _kind("interactive", 3600.0, 1) == "interactive"
    assert _kind("interactive", 3600.0, 1, InteractiveClass(kinds=("notebook",))) == "batch"
    assert _kind("inference", 3600.0, 1) == "inference"


def test_the_shape_test_needs_a_time_limit_the_simulator_does_not_have() -> None:
    shape = InteractiveClass(kinds=(), max_gpus=8, max_time_limit_s=4 * 3600)
    assert shape.recognises(None, gpus=2, time_limit_s=3600.0)
    assert not shape.recognises(None, gpus=2)  # unknown time limit: no match
    assert not shape.recognises(None, gpus=16, time_limit_s=3600.0)
    assert InteractiveClass(kinds=(), partitions=("interactive",)).recognises("train", partition="interactive")
