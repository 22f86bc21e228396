"""``allot compile --target kai|kueue``: every manifest validates against the shipped CRD
schemas, typos fail, and the objects say what the budget tree says."""

from __future__ import annotations

import copy
import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from allotment.backends.kubernetes.kai import kai_objects
from allotment.backends.kubernetes.kueue import kueue_objects
from allotment.backends.kubernetes.render import render_kai, render_kueue
from allotment.compile.compiler import compile_repo
from allotment.compile.model import CompiledConfig
from tests.backends.configs import tree_config
from tests.k8s.schemas import errors

AT = dt.date(2026, 11, 29)
GO_DURATION = re.compile(r"^([0-9]+h)?([0-9]+m)?([0-9]+s)?$")


REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def example() -> CompiledConfig:
    return compile_repo(REPO, AT)


def _docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


@pytest.mark.parametrize("render", [render_kai, render_kueue], ids=["kai", "kueue"])
def test_every_manifest_of_the_example_validates_against_the_crd_schemas(
    example: CompiledConfig, render: Any
) -> None:
    docs = _docs(render(example))
    assert len(docs) > 20
    bad = {f"{d['kind']}/{d['metadata']['name']}": errors(d) for d in docs}
    assert {k: v for k, v in bad.items() if v} == {}


@pytest.mark.parametrize("render", [render_kai, render_kueue], ids=["kai", "kueue"])
def test_rendering_is_byte_for_byte_deterministic(example: CompiledConfig, render: Any) -> None:
    assert render(example) == render(example)


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("Queue", ("spec", "parentQuee")),
        ("Queue", ("spec", "resources", "gpu", "qouta")),
        ("SchedulingShard", ("spec", "usageDBConfig", "usageParams", "windowSise")),
        ("PriorityClass", ("valeu",)),
        ("Queue", ("metadata", "lables")),
    ],
)
def test_a_typo_in_a_field_fails_validation(kind: str, path: tuple[str, ...]) -> None:
    obj = copy.deepcopy(next(o for o in kai_objects(tree_config()) if o["kind"] == kind))
    assert errors(obj) == []
    here = obj
    for key in path[:-1]:
        here = here[key]
    here[path[-1]] = 1
    assert any(path[-1] in e for e in errors(obj))


@pytest.mark.parametrize("kind", ["ClusterQueue", "Cohort", "LocalQueue", "WorkloadPriorityClass"])
def test_a_typo_in_a_kueue_spec_fails_validation(kind: str) -> None:
    obj = copy.deepcopy(next(o for o in kueue_objects(tree_config()) if o["kind"] == kind))
    assert errors(obj) == []
    (obj.setdefault("spec", {}) if kind != "WorkloadPriorityClass" else obj)["cohrtName"] = "x"
    assert any("cohrtName" in e for e in errors(obj))


def test_a_wrongly_typed_quota_fails_validation() -> None:
    q = next(o for o in kai_objects(tree_config()) if o["kind"] == "Queue")
    q["spec"]["resources"]["gpu"]["quota"] = "eight"
    assert errors(q)


def _queues(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {
        o["metadata"]["name"]: o
        for o in objs
        if o["kind"] == "Queue" and o["metadata"]["labels"]["allotment.dev/kind"] == kind
    }


def test_kai_queues_form_the_budget_tree_with_quota_share_times_gpus() -> None:
    cfg = tree_config()  # 32 GPUs; teama1 = 0.6 x 2/3, teama2 = 0.6 x 1/3, teamb = 0.4
    q = _queues(kai_objects(cfg), "budget")
    assert set(q) == {"org", "proga", "teama1", "teama2", "teamb"}
    assert "parentQueue" not in q["org"]["spec"]
    assert {n: o["spec"].get("parentQueue") for n, o in q.items() if n != "org"} == {
        "proga": "org",
        "teama1": "proga",
        "teama2": "proga",
        "teamb": "org",
    }
    gpu = {n: o["spec"]["resources"]["gpu"] for n, o in q.items()}
    for node in cfg.nodes:
        assert gpu[node.name]["quota"] == pytest.approx(node.entitlement_gpus["gpulab"], abs=0.01)
    assert gpu["proga"]["quota"] == pytest.approx(gpu["teama1"]["quota"] + gpu["teama2"]["quota"])
    assert (gpu["teama1"]["overQuotaWeight"], gpu["teama2"]["overQuotaWeight"]) == (6667, 3333)
    assert gpu["teamb"]["limit"] == -1


def test_max_gpus_becomes_the_queue_limit(example: CompiledConfig) -> None:
    q = _queues(kai_objects(example, "h100"), "budget")
    capped = {n.name: n.max_gpus for n in example.nodes if n.max_gpus is not None}
    assert capped
    for name, cap in capped.items():
        assert q[name]["spec"]["resources"]["gpu"]["limit"] == cap


def test_every_leaf_has_one_child_queue_per_tier_with_that_minimum_runtime() -> None:
    objs = kai_objects(tree_config(), tiers_s=(900, 3600, 5400))
    tiers = _queues(objs, "tier")
    want = {"alloc-15m": "15m", "alloc-1h": "1h", "alloc-1h30m": "1h30m", "unallocated": "0s"}
    for leaf in ("teama1", "teama2", "teamb"):
        for tier, runtime in want.items():
            spec = tiers[f"{leaf}-{tier}"]["spec"]
            assert spec["parentQueue"] == leaf
            assert spec["preemptMinRuntime"] == spec["reclaimMinRuntime"] == runtime
    assert len(tiers) == 12
    pri = {o["metadata"]["name"]: o for o in objs if o["kind"] == "PriorityClass"}
    assert pri["unallocated"]["preemptionPolicy"] == "Never"
    assert pri["unallocated"]["value"] < min(pri[t]["value"] for t in want if t != "unallocated")


def test_scheduling_shard_holds_the_sliding_window_as_a_go_duration(
    example: CompiledConfig,
) -> None:
    shard = next(o for o in kai_objects(example) if o["kind"] == "SchedulingShard")
    params = shard["spec"]["usageDBConfig"]["usageParams"]
    assert params == {"windowSize": "168h", "windowType": "sliding"}
    assert shard["spec"]["kValue"] == 1.0
    for v in shard["spec"]["minRuntime"].values():
        assert GO_DURATION.match(v) and "d" not in v


def test_kueue_cohorts_mirror_the_inner_nodes_and_cluster_queues_the_leaves() -> None:
    objs = kueue_objects(tree_config())
    cohorts = {o["metadata"]["name"]: o["spec"] for o in objs if o["kind"] == "Cohort"}
    assert cohorts == {
        "org": {"fairSharing": {"weight": 10000}},
        "proga": {"fairSharing": {"weight": 6000}, "parentName": "org"},
    }
    cqs = {o["metadata"]["name"]: o["spec"] for o in objs if o["kind"] == "ClusterQueue"}
    assert {n: s["cohortName"] for n, s in cqs.items()} == {
        "teama1": "proga",
        "teama2": "proga",
        "teamb": "org",
        "unallocated": "org",
    }
    quota = {
        n: s["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"]
        for n, s in cqs.items()
    }
    assert quota == {"teama1": "12.8", "teama2": "6.4", "teamb": "12.8", "unallocated": "0"}
    assert cqs["teama1"]["fairSharing"]["weight"] == 6667
    lqs = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o["spec"]["clusterQueue"]
        for o in objs
        if o["kind"] == "LocalQueue"
    }
    assert lqs[("teamb", "teamb")] == "teamb" and lqs[("teamb", "unallocated")] == "unallocated"
    wpc = {o["metadata"]["name"]: o["value"] for o in objs if o["kind"] == "WorkloadPriorityClass"}
    assert wpc["unallocated"] == 0 and min(v for k, v in wpc.items() if k != "unallocated") > 0
