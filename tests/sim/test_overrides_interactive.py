"""``allot simulate --set interactive.grace=... --set interactive.restore_hook=...`` (issue 29):
the session knobs reach the policy's interactive class; a hook name is checked as the schema
checks it (``config.restore_hook``), so a path or a command line is refused."""

from __future__ import annotations

import pytest

from allotment.compile.interactive import InteractiveClass
from allotment.compile.model import Policy
from allotment.errors import UsageError
from allotment.sim.overrides import apply_overrides


def test_grace_and_hook_set_the_interactive_class_and_keep_its_recognition() -> None:
    base = Policy(interactive=InteractiveClass(partitions=("interactive",)))
    p = apply_overrides(base, {"interactive.grace": "10m", "interactive.restore_hook": "allot-restore"})
    assert p.interactive == InteractiveClass(partitions=("interactive",), grace_s=600, restore_hook="allot-restore")
    assert apply_overrides(p, {"interactive.restore_hook": "none"}).interactive.restore_hook is None


@pytest.mark.parametrize("hook", ["/usr/bin/x", "x y", "../x", "-x", "x" * 65])
def test_a_hook_that_is_a_path_or_a_command_line_is_refused(hook: str) -> None:
    with pytest.raises(UsageError, match=r"interactive\.restore_hook"):
        apply_overrides(Policy(), {"interactive.restore_hook": hook})


def test_pool_sets_the_count_of_reserved_nodes_and_refuses_anything_but_a_whole_number() -> None:
    p = apply_overrides(Policy(interactive=InteractiveClass(grace_s=600)), {"interactive.pool": "2"})
    assert p.interactive == InteractiveClass(grace_s=600, pool_nodes=2)
    for bad in ("-1", "1.5", "n[1-", ""):
        with pytest.raises(UsageError, match=r"interactive\.pool"):
            apply_overrides(Policy(), {"interactive.pool": bad})


def test_pool_by_node_names_replaces_a_count_and_is_checked_against_the_cluster() -> None:
    nodes = ("n1", "n2", "n3", "n4")
    base = Policy(interactive=InteractiveClass(pool_nodes=2))
    p = apply_overrides(base, {"interactive.pool": "n[3-4],n1"}, "c", nodes)
    assert p.interactive == InteractiveClass(pool_names=("n1", "n3", "n4"))
    assert apply_overrides(p, {"interactive.pool": "1"}).interactive == InteractiveClass(pool_nodes=1)
    with pytest.raises(UsageError, match=r"--set interactive\.pool: unknown node 'two' in cluster 'c'"):
        apply_overrides(Policy(), {"interactive.pool": "two"}, "c", nodes)
    with pytest.raises(UsageError, match=r"names every node of cluster 'c' \(4\)"):
        apply_overrides(Policy(), {"interactive.pool": "n[1-4]"}, "c", nodes)
    with pytest.raises(UsageError, match=r"leaves no node of cluster 'c' \(4\)"):
        apply_overrides(Policy(), {"interactive.pool": "4"}, "c", nodes)
