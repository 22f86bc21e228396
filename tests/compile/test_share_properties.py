"""Invariants of the share arithmetic on random trees (docs/concepts.md, "Shares")."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings

from allotment.compile.compiler import compile_config
from allotment.compile.render import to_json
from allotment.config.loader import load_config
from tests.compile.trees import AT, repos

SETTINGS = settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(repos())
def test_active_sibling_shares_sum_to_one(files: dict[str, bytes]) -> None:
    config = compile_config(load_config(files), AT)
    for parent in config.nodes:
        kids = config.children(parent.name)
        active = [k for k in kids if k.active]
        if active:
            assert math.isclose(sum(k.share for k in active), 1.0)
        assert all(k.share == 0.0 for k in kids if not k.active)


@SETTINGS
@given(repos())
def test_funded_leaves_split_each_usable_cluster_exactly(files: dict[str, bytes]) -> None:
    config = compile_config(load_config(files), AT)
    root = config.node(config.root)
    for c, cluster in config.clusters.items():
        leaves = config.leaves()
        total = sum(n.absolute[c] for n in leaves)
        gpus = sum(n.entitlement_gpus[c] for n in leaves)
        hours = sum(n.entitlement_gpu_hours[c] for n in leaves)
        if root.absolute[c] == 0.0:
            assert total == 0.0
            assert any("no active budget can use cluster" in w.message for w in config.warnings)
        else:
            assert math.isclose(total, 1.0)
            assert math.isclose(gpus, cluster.gpus)
            assert math.isclose(hours, cluster.reference_gpu_hours_per_window)


@SETTINGS
@given(repos())
def test_each_inner_node_holds_exactly_what_its_children_hold(files: dict[str, bytes]) -> None:
    config = compile_config(load_config(files), AT)
    for n in config.nodes:
        kids = config.children(n.name)
        for c in config.clusters:
            assert n.absolute[c] >= 0.0
            if c not in n.clusters or not n.active:
                assert n.absolute[c] == 0.0
            if kids:
                assert math.isclose(n.absolute[c], sum(k.absolute[c] for k in kids), abs_tol=1e-12)


@settings(max_examples=30, deadline=None)
@given(repos())
def test_compiling_twice_gives_identical_json(files: dict[str, bytes]) -> None:
    a = to_json(compile_config(load_config(files), AT))
    b = to_json(compile_config(load_config(dict(reversed(list(files.items())))), AT))
    assert a == b
