"""``allot explain JOB``: why a job waits, runs or was preempted, in words first, then the detail
(allocation path, within-team score, what it waits for, its history).  It only reports what the
scheduler recorded: a saved run (``--run DIR``, from ``allot simulate --save DIR``) or the live
reconciler's state (``--state DIR``, Slurm job ids); it never re-runs anything.

With ``--run`` the config repository (``--repo``) must be the one the run was made from (its
``inputs_sha256`` is checked): the within-team score needs the policy's weights."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

from allotment.cli.common import add_repo_argument
from allotment.errors import UsageError


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("job", help="job id (a Slurm job id with --state)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--run", type=Path, metavar="DIR", help="a saved run (allot simulate --save DIR)")
    src.add_argument("--state", type=Path, metavar="DIR", help="the live reconciler's state dir")
    add_repo_argument(p)
    p.add_argument("--at", dest="time", metavar="TIME",
                   help="moment: seconds or a span (26h) from the run's start, or an ISO time (default: now / the run's end)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.run is not None:
        return _run_dir(args)
    from allotment.legible.explain_live import explain_live, render_live
    from allotment.legible.livestate import applied_config, read_state

    st = read_state(args.state)
    facts = explain_live(st, applied_config(st), args.job)
    print(json.dumps(facts, sort_keys=True, indent=2) if args.format == "json" else render_live(facts), end="\n" if args.format == "json" else "")
    return 0


def _run_dir(args: argparse.Namespace) -> int:
    from allotment.compile.compiler import compile_repo
    from allotment.legible.explain import explain_run, facts_json
    from allotment.legible.explain_words import render_text
    from allotment.legible.rundir import read_run
    from allotment.legible.words import parse_time

    rd = read_run(args.run)
    day = dt.date.fromisoformat(str(rd.compiled.get("at")))
    config = compile_repo(Path(args.repo), day, None)
    want = str(rd.meta.get("config_sha256", ""))
    if want and config.inputs_sha256 != want:
        raise UsageError(
            f"--repo {args.repo}: config {config.inputs_sha256[:12]} is not the one {args.run} was made "
            f"with ({want[:12]}); check out that revision or pass --repo"
        )
    facts = explain_run(rd, config, args.job, parse_time(args.time, rd.t0) if args.time else None)
    if args.format == "json":
        print(json.dumps(facts_json(facts, rd), sort_keys=True, indent=2))
    else:
        print(render_text(facts, rd), end="")
    return 0
