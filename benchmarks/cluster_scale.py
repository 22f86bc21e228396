"""How the simulator's cost grows with the cluster at equal contention (issue 27, item 3: "no
faster than linearly with cluster size, 1,024 -> 8,192 GPUs").

Usage: PYTHONPATH=<build>/src python benchmarks/cluster_scale.py [--repo .] [--scales 1,8]
           [--days 3] [--scenario ai2] [--seed 1] [--policy budgets] [--cluster h100]
           [--no-skip] [--out DIR]

``--no-skip`` runs the plain reference walk; ``--out DIR`` writes each scale's metrics JSON
(``DIR/x<k>.json``, as ``allot simulate --json``) and event log (``DIR/x<k>.events``, as
``--events``), so two builds' decisions at every scale can be compared with ``cmp`` (the CPU
printed then includes writing the log).

For each scale ``k`` the repository's configuration (budgets, inventory, policies) is copied to a
temporary directory with ``--cluster``'s node count multiplied by ``k`` (node names widened to
enough digits; its maintenance windows dropped, at every scale alike, since they name nodes by
the old width).  The scenario generators size the offered load by the cluster's capacity and the
budget tree splits it by shares, so ``k`` times the GPUs brings ``k`` times the jobs at the same
contention (a team's absolute ``max_gpus`` caps do not scale: the few there are bind less at
larger ``k``).  Printed per scale: jobs, CPU seconds of ``simulate()`` (``time.process_time``,
scenario generation excluded) and CPU per job; linear growth in cluster size means CPU per job
flat from scale to scale, which the last column compares with the first scale's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import tempfile
import time
from pathlib import Path

from allotment.compile.compiler import compile_repo
from allotment.sim.event_file import EventFile
from allotment.sim.rundir import metrics_json
from allotment.sim.runner import simulate
from allotment.traces.scenarios import get_scenario


def scaled_repo(repo: Path, cluster: str, k: int, into: Path) -> Path:
    """A copy of ``repo``'s configuration with ``cluster`` ``k`` times as large."""
    out = into / f"x{k}"
    for d in ("budgets", "inventory", "policies"):
        shutil.copytree(repo / d, out / d)
    f = out / "inventory" / "clusters" / f"{cluster}.yaml"
    text = f.read_text()
    count = int(re.search(r"^    count: (\d+)$", text, re.M).group(1))  # type: ignore[union-attr]
    text = re.sub(r"^    count: \d+$", f"    count: {count * k}", text, flags=re.M)
    text = re.sub(r"^    digits: \d+$", f"    digits: {len(str(count * max(k, 8)))}", text, flags=re.M)
    text = re.sub(r"^maintenance:\n(?:  .*\n|    .*\n)*", "", text, flags=re.M)
    f.write_text(text)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, default=Path("."))
    ap.add_argument("--scales", default="1,8")
    ap.add_argument("--days", type=float, default=3.0)
    ap.add_argument("--scenario", default="ai2")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--policy", default="budgets")
    ap.add_argument("--cluster", default="h100")
    ap.add_argument("--no-skip", action="store_true", help="the reference walk")
    ap.add_argument("--out", type=Path, help="write x<k>.json and x<k>.events here")
    args = ap.parse_args()
    first = None
    print("scale  GPUs  jobs  simulate CPU s  CPU us/job  per job / first")
    with tempfile.TemporaryDirectory() as tmp:
        for k in (int(x) for x in args.scales.split(",")):
            repo = scaled_repo(args.repo, args.cluster, k, Path(tmp))
            config = compile_repo(repo, dt.date(2026, 11, 29))
            gpus = config.clusters[args.cluster].gpus
            w = get_scenario(args.scenario)(config, cluster=args.cluster, days=args.days, seed=args.seed)
            jobs = len(w.jobs)
            c = time.process_time()
            if args.out is None:
                simulate(config, w, cluster=args.cluster, days=args.days, seed=args.seed, policy=args.policy,
                         reference=args.no_skip)
            else:
                args.out.mkdir(parents=True, exist_ok=True)
                with EventFile(args.out / f"x{k}.events") as log:
                    r = simulate(config, w, cluster=args.cluster, days=args.days, seed=args.seed,
                                 policy=args.policy, reference=args.no_skip, on_event=log)
                    assert r.header is not None
                    log.finish(r.header)
                (args.out / f"x{k}.json").write_text(metrics_json(r.metrics))
            cpu = time.process_time() - c
            per = cpu / max(1, jobs) * 1e6
            first = per if first is None else first
            print(f"{k:>5}  {gpus:>5}  {jobs:>6}  {cpu:>13.2f}  {per:>10.1f}  {per / first:>15.2f}", flush=True)


if __name__ == "__main__":
    main()
