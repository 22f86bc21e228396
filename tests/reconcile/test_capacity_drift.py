"""Capacity drift is reported, not silent: a cluster that differs from the inventory (nodes
missing or extra, other GPU counts) gives a ``CapacityDrift`` condition with the difference, a
metric on ``/metrics`` and a line on the live page; with the sim backend and real processes."""

from __future__ import annotations

import datetime as dt
import json
import threading
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from allotment.backends.protocol import NodeObs, Observation
from allotment.cli.main import main
from allotment.compile.model import Cluster
from allotment.legible.serve import make_server
from allotment.reconcile.capacity_drift import GpuCountDiff, compare
from tests.reconcile.repo import commit_all

INVENTORY = "inventory/clusters/gpulab.yaml"


def _cluster(tmp: Path) -> Cluster:
    from allotment.compile.compiler import compile_config
    from allotment.config.loader import load_config
    from tests.reconcile.repo import write_repo

    write_repo(tmp)
    files = {p.relative_to(tmp).as_posix(): p.read_bytes() for p in tmp.rglob("*.yaml")}
    return compile_config(load_config(files), dt.date(2026, 12, 1)).clusters["gpulab"]


def test_missing_extra_and_other_gpu_counts_are_each_named(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path / "repo")  # n[1-4] x 8
    nodes = (
        NodeObs("n1", 8, 0), NodeObs("n2", 4, 0), NodeObs("n3", 8, 0, down=True),
        NodeObs("x9", 8, 0), NodeObs("control-plane", 0, 0),
    )
    d = compare(cluster, Observation(0.0, nodes, ()))
    assert d.drifted
    assert (d.missing, d.extra, d.differs) == (("n4",), ("x9",), (GpuCountDiff("n2", 8, 4),))
    assert (d.inventory_gpus, d.observed_gpus, d.inventory_nodes, d.observed_nodes) == (32, 28, 4, 4)
    assert d.message() == (
        "inventory 32 GPUs on 4 nodes, cluster 28 GPUs on 4 nodes: 1 node(s) missing from the"
        " cluster: n4; 1 node(s) not in the inventory: x9; 1 node(s) with other GPU counts:"
        " n2 4 (inventory 8)"
    )
    same = compare(cluster, Observation(0.0, tuple(NodeObs(f"n{i}", 8, 0) for i in range(1, 5)), ()))
    assert not same.drifted and same.message() == "inventory 32 GPUs on 4 nodes, cluster 32 GPUs on 4 nodes"


def _scrape(state: Path) -> tuple[dict[str, float], str]:
    srv = make_server(state, "127.0.0.1", 0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        with urllib.request.urlopen(url + "/metrics", timeout=30) as r:
            text = r.read().decode()
        with urllib.request.urlopen(url + "/", timeout=30) as r:
            page = r.read().decode()
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()
    values = {
        s.name + "".join(f"/{v}" for k, v in sorted(s.labels.items()) if k != "cluster"): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
        if s.name.startswith(("allotment_capacity_drift", "allotment_observed_capacity"))
    }
    return values, page


def _condition(state: Path) -> dict[str, str]:
    raw = json.loads((state / "status.json").read_text())
    return next(c for c in raw["conditions"] if c["type"] == "CapacityDrift")  # type: ignore[no-any-return]


def test_a_shrunk_inventory_is_reported_as_capacity_drift(config_repo: Path, tmp_path: Path) -> None:
    state = tmp_path / "st"
    argv = ["reconcile", "--backend", "sim", "--source", str(config_repo), "--state", str(state), "--once"]
    assert main(argv) == 0  # the sim cluster is built from the inventory: n[1-4] x 8
    assert _condition(state)["status"] == "False"
    values, page = _scrape(state)
    assert values["allotment_capacity_drift_gpus"] == 0 and 'id="capacity-drift"' not in page

    inv = config_repo / INVENTORY
    inv.write_text(inv.read_text().replace("nodes: n[1-4]", "nodes: n[1-3]"))
    commit_all(config_repo, "n4 leaves the inventory; the cluster still has it")
    assert main(argv) == 0  # reported, not a failure: the reconciler still drives the cluster
    cond = _condition(state)
    assert (cond["status"], cond["reason"]) == ("True", "InventoryMismatch")
    assert cond["message"] == (
        "inventory 24 GPUs on 3 nodes, cluster 32 GPUs on 4 nodes: 1 node(s) not in the inventory: n4"
    )
    values, page = _scrape(state)
    assert values["allotment_capacity_drift_gpus"] == 8
    assert values["allotment_observed_capacity_gpus"] == 32
    assert values["allotment_capacity_drift_nodes/extra"] == 1
    assert values["allotment_capacity_drift_nodes/missing"] == 0
    assert 'id="capacity-drift"' in page and "1 node(s) not in the inventory: n4" in page

    inv.write_text(inv.read_text().replace("nodes: n[1-3]", "nodes: n[1-4]"))
    commit_all(config_repo, "n4 back")
    assert main(argv) == 0
    assert _condition(state)["status"] == "False"
