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
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from allotment.cli.common import add_repo_argument
from allotment.errors import UsageError

if TYPE_CHECKING:
    from allotment.legible.run_index import MomentIndex
    from allotment.legible.rundir import RunDir


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


def _read(path: Path) -> tuple[RunDir, MomentIndex | None]:
    """The run through its moment index when it has a matching one (``legible/run_index.py``),
    else read whole; an index that does not match is said in one line, then read whole."""
    from allotment.legible.run_index import IndexUnusable, TraceJobs, open_index
    from allotment.legible.rundir import read_run, read_run_head

    try:
        index = open_index(path) if path.is_dir() else None
        if index is not None:
            return read_run_head(path, TraceJobs(path / "trace.jsonl"), index.last_t), index
    except IndexUnusable as exc:
        print(f"note: {exc}; reading the whole run", file=sys.stderr)
    return read_run(path), None


def _run_dir(args: argparse.Namespace) -> int:
    from allotment.compile.compiler import compile_repo
    from allotment.legible.explain import explain_run, facts_json
    from allotment.legible.explain_words import render_text
    from allotment.legible.run_index import IndexUnusable
    from allotment.legible.rundir import read_run
    from allotment.legible.words import parse_time

    rd, index = _read(args.run)
    day = dt.date.fromisoformat(str(rd.compiled.get("at")))
    config = compile_repo(Path(args.repo), day, None)
    want = str(rd.meta.get("config_sha256", ""))
    if want and config.inputs_sha256 != want:
        raise UsageError(
            f"--repo {args.repo}: config {config.inputs_sha256[:12]} is not the one {args.run} was made "
            f"with ({want[:12]}); check out that revision or pass --repo"
        )
    when = parse_time(args.time, rd.t0) if args.time else None

    def say(rd: RunDir, index: MomentIndex | None) -> str:
        facts = explain_run(rd, config, args.job, when, index)
        if args.format == "json":
            return json.dumps(facts_json(facts, rd), sort_keys=True, indent=2) + "\n"
        return render_text(facts, rd)

    try:
        out = say(rd, index)
    except IndexUnusable as exc:  # a trace line the index's sha256 vouched for, unreadable
        print(f"note: {exc}; reading the whole run", file=sys.stderr)
        out = say(read_run(args.run), None)
    print(out, end="")
    return 0
