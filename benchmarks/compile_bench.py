"""Benchmark: validate + compile a generated budget tree of 10,000 nodes and 50,000 users.

    .venv/bin/python benchmarks/compile_bench.py [--runs 7] [--nodes 10000] [--users 50000]

Writes the tree to a temporary folder, then times, separately and together: reading the files
(``read_repo_files``), validating (``load_config``) and compiling (``compile_config``).  Prints
the median and min of ``--runs`` runs per phase; the target is validate + compile under 1 s.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from allotment.compile.compiler import compile_config
from allotment.config.files import read_repo_files
from allotment.config.loader import load_config

AT = dt.date(2026, 6, 1)


def generate(n_nodes: int, n_users: int) -> dict[str, bytes]:
    """Root -> programs -> projects -> leaves, fan-out ~sqrt-ish, users spread over leaves; one
    user in 50 also belongs to a second leaf (with that leaf as its default)."""
    programs, projects_per = 10, 10
    n_leaves = n_nodes - 1 - programs - programs * projects_per
    files: dict[str, bytes] = {
        "inventory/gpu_types.yaml": b"gpu_types:\n  h100: {billing_weight: 1.0}\n"
        b"  b200: {billing_weight: 2.0}\n",
        "inventory/clusters/h100.yaml": b"node_groups:\n  - {name: main, gpu_type: h100, "
        b"gpus_per_node: 8, count: 128, prefix: h100-n}\n",
        "inventory/clusters/b200.yaml": b"node_groups:\n  - {name: main, gpu_type: b200, "
        b'gpus_per_node: 8, nodes: "b200-n[01-11]"}\n',
        "policies/scheduler.yaml": b"lookback: 7d\nmin_runtime_cap: 8h\n",
    }
    leaves: list[tuple[str, str]] = []  # (path, name)
    root = "org"
    prog_names = [f"p{i}" for i in range(programs)]
    files[f"budgets/{root}/budget.yaml"] = _inner("boss@org.example", prog_names, 0)
    leaf_i = 0
    for pi, p in enumerate(prog_names):
        proj_names = [f"p{pi}j{j}" for j in range(projects_per)]
        files[f"budgets/{root}/{p}/budget.yaml"] = _inner(f"{p}@org.example", proj_names, pi)
        for ji, j in enumerate(proj_names):
            count = n_leaves // (programs * projects_per) + (
                1 if pi * projects_per + ji < n_leaves % (programs * projects_per) else 0
            )
            names = [f"t{leaf_i + k}" for k in range(count)]
            leaf_i += count
            files[f"budgets/{root}/{p}/{j}/budget.yaml"] = _inner(f"{j}@org.example", names, ji)
            leaves.extend((f"budgets/{root}/{p}/{j}/{t}", t) for t in names)
    members: dict[str, list[str]] = {path: [] for path, _ in leaves}
    extra: dict[str, list[str]] = {path: [] for path, _ in leaves}
    for u in range(n_users):
        path = leaves[u % len(leaves)][0]
        members[path].append(f"u{u}")
        if u % 50 == 0:
            other = leaves[(u * 7 + 1) % len(leaves)][0]
            if other != path:
                members[other].append(f"u{u}")
                extra[other].append(f"u{u}")
    for path, name in leaves:
        body = f"owners: [{name}@org.example]\nmembers:\n" + "".join(
            f"  - {m}\n" for m in members[path]
        )
        if extra[path]:
            body += "default_for:\n" + "".join(f"  - {m}\n" for m in extra[path])
        files[f"{path}/budget.yaml"] = body.encode()
    return files


def _inner(owner: str, children: list[str], seed: int) -> bytes:
    lines = [f"owners: [{owner}]", "children:"]
    for i, c in enumerate(children):
        lines.append(f"  {c}:")
        lines.append(f"    share: {1 + (seed * 7 + i * 3) % 10}")
        if i % 17 == 5:
            lines.append("    clusters: [h100]")
    return ("\n".join(lines) + "\n").encode()


def _time(fn: Callable[[], Any], runs: int) -> tuple[float, float, float, Any]:
    """Median wall time, min wall time, median CPU time of this process, last result.  CPU time
    is reported because the machine is shared: wall time includes waiting for a core.  Each run
    starts from a collected heap, as a fresh ``allot`` process would."""
    walls, cpus, result = [], [], None
    for _ in range(runs):
        result = None
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), min(walls), statistics.median(cpus), result


def _time_cli(root: Path, runs: int) -> tuple[float, float]:
    """``allot validate --repo ROOT`` end to end in a fresh process: median and min wall time."""
    allot = Path(sys.executable).parent / "allot"
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([str(allot), "validate", "-q", "--repo", str(root)], check=True)
        walls.append(time.perf_counter() - t0)
    return statistics.median(walls), min(walls)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--users", type=int, default=50_000)
    args = ap.parse_args(argv)
    files = generate(args.nodes, args.users)
    # The headline first, while the heap holds nothing but the input files.
    both = _time(lambda: compile_config(load_config(files), AT), args.runs)
    load = _time(lambda: load_config(files), args.runs)
    loaded = load[-1]
    comp = _time(lambda: compile_config(loaded, AT), args.runs)
    config = comp[-1]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        read = _time(lambda: read_repo_files(root), args.runs)
        assert read[-1] == dict(sorted(files.items()))
        cli = _time_cli(root, max(3, args.runs // 2))
    print(
        f"tree: {len(config.nodes)} nodes, {len(config.users)} users, {len(files)} files, "
        f"{sum(map(len, files.values())) / 1e6:.1f} MB; {args.runs} runs; "
        f"python {sys.version.split()[0]}"
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for label, (med, low, cpu, _) in (
        ("validate + compile", both),
        ("validate (load)", load),
        ("compile", comp),
        ("read files (disk)", read),
    ):
        print(f"{label:20s} wall median {med:.3f} s  min {low:.3f} s  cpu median {cpu:.3f} s")
    print(
        f"{'allot validate (CLI)':20s} wall median {cli[0]:.3f} s  min {cli[1]:.3f} s  "
        "(fresh process: start-up, imports, read, validate, compile)"
    )
    print("target: validate + compile < 1 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
