"""The ``interactive`` knob (issue 29) resolves like every other knob: a cluster's keys replace
the global ones, the rest is inherited, and unset means the declared kind ``interactive`` only."""

from __future__ import annotations

from allotment.compile.interactive import InteractiveClass
from allotment.compile.policy import resolve_policies
from allotment.config.models.policy import BoostsFile, SchedulerFile


def test_a_clusters_interactive_keys_replace_the_global_ones_and_inherit_the_rest() -> None:
    sched = SchedulerFile.model_validate({
        "interactive": {"partitions": ["interactive"], "grace": "10m", "restore_hook": "allot-restore"},
        "clusters": {"b200": {"interactive": {"grace": "2m", "shape": {"max_gpus": 8, "max_time_limit": "4h"}}}},
    })
    glob, per = resolve_policies(sched, BoostsFile(), ("h100", "b200"))
    assert glob.interactive == InteractiveClass(partitions=("interactive",), grace_s=600, restore_hook="allot-restore")
    assert per["h100"].interactive == glob.interactive
    assert per["b200"].interactive == InteractiveClass(
        partitions=("interactive",), grace_s=120, restore_hook="allot-restore", max_gpus=8, max_time_limit_s=4 * 3600)


def test_without_the_knob_a_session_is_the_declared_kind_and_gets_no_grace() -> None:
    glob, _ = resolve_policies(SchedulerFile(), BoostsFile(), ())
    assert glob.interactive.recognises("interactive") and not glob.interactive.recognises("batch")
    assert glob.interactive.grace_s == 0 and glob.interactive.restore_hook is None


def test_a_pool_by_node_names_replaces_an_inherited_count_and_expands_hostlists() -> None:
    sched = SchedulerFile.model_validate({
        "interactive": {"pool": 2},
        "clusters": {"b200": {"interactive": {"pool": ["b200-[07-08]", "b200-03", "b200-07"]}}},
    })
    glob, per = resolve_policies(sched, BoostsFile(), ("h100", "b200"))
    assert glob.interactive == InteractiveClass(pool_nodes=2) == per["h100"].interactive
    assert per["b200"].interactive == InteractiveClass(pool_names=("b200-03", "b200-07", "b200-08"))
    assert per["b200"].interactive.reserves_pool and not InteractiveClass().reserves_pool
