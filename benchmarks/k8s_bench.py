"""Kubernetes backend benchmark (issue 13): a full reconciler tick against a real kube-apiserver
with 64 nodes x 8 GPUs and 500 pods (150 two-pod gangs and 200 single pods; 400 bound and
running on 500 of the 512 GPUs, 100 pending, so the core orders the queue), including every API call (queues, priority classes, users, nodes, pods),
the core, the ledger, the audit log and status.json.

Needs a running test API server (``bash tests/k8s/apiserver.sh up``); it wipes the objects the
tests use.  Prints the median of ``--repeat`` steady-state ticks (and min/max) in milliseconds.

    bash tests/k8s/apiserver.sh up
    ALLOTMENT_KUBECONFIG=/tmp/allotment-k8s/kubeconfig .venv/bin/python benchmarks/k8s_bench.py
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--kubeconfig", default=os.environ.get("ALLOTMENT_KUBECONFIG"))
    a = p.parse_args()
    if not a.kubeconfig:
        sys.exit("set --kubeconfig or ALLOTMENT_KUBECONFIG (bash tests/k8s/apiserver.sh up)")
    sys.path.insert(0, str(ROOT))
    from tests.k8s.cluster import Cluster
    from tests.reconcile.repo import commit_all, make_repo

    from allotment.backends.kubernetes.backend import KubernetesBackend
    from allotment.backends.kubernetes.client import KubeClient
    from allotment.reconcile.reconciler import Options, Reconciler
    from allotment.reconcile.source import GitSource

    kube = KubeClient.from_kubeconfig(a.kubeconfig)
    cluster = Cluster(kube)
    cluster.reset()
    nodes = [f"n{i}" for i in range(1, 65)]
    for name in nodes:
        cluster.add_node(name)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "budgets"
        make_repo(repo)
        (repo / "inventory/clusters/gpulab.yaml").write_text(
            "node_groups:\n  - name: main\n    gpu_type: gpu\n    gpus_per_node: 8\n"
            "    nodes: n[1-64]\n"
        )
        commit_all(repo, "64 nodes")
        tiers = (900, 3600, 14400)
        rec = Reconciler(
            KubernetesBackend(kube),
            GitSource(str(repo), "main", Path(tmp) / "state"),
            Path(tmp) / "state",
            Options(tiers_s=tiers),
        )
        t = time.perf_counter()
        r = rec.tick()
        ms = 1000 * (time.perf_counter() - t)
        print(f"first tick (policy sync onto an empty cluster): {ms:.0f} ms, {r.counts()}")
        rng = random.Random(13)
        qos = ["alloc-15m", "alloc-1h", "alloc-4h"]
        free = dict.fromkeys(nodes, 8)
        started = time.time() - 600  # inside every tier: the ticks decide, they do not evict
        t = time.perf_counter()
        for i in range(350):
            gang = 2 if i < 150 else 1
            bound = i < 250  # 150 gangs (300 pods) + 100 singles = 400 running pods
            gpus = 2 if gang == 1 and bound else 1  # 500 of 512 GPUs busy: the rest must wait
            acct = rng.choice(["teama1", "teama2", "teamb"])
            job = cluster.submit(acct, gpus, rng.choice(qos), pods=gang)
            if bound:
                hosts = [h for h in nodes if free[h] >= gpus][:gang]
                for h in hosts:
                    free[h] -= gpus
                cluster.bind(job, hosts, started=started)
        print(f"populated 500 pods in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        r = rec.tick()
        ms = 1000 * (time.perf_counter() - t)
        print(f"first tick with the pods: {ms:.0f} ms, {r.counts()} {r.error or ''}")
        samples = []
        for _ in range(a.repeat):
            t = time.perf_counter()
            r = rec.tick()
            samples.append(time.perf_counter() - t)
            assert r.error is None, r.error
        ms = [s * 1000 for s in samples]
        print(
            f"full tick, 500 pods on 64 nodes (steady state): median {statistics.median(ms):.0f} ms"
            f" (min {min(ms):.0f}, max {max(ms):.0f}, n={len(ms)}), last {r.counts()}"
        )
        rec.close()
    cluster.reset()


if __name__ == "__main__":
    main()
