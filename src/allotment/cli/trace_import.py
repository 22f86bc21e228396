"""``allot trace import``: its options and the run, the CLI side of ``traces.pipeline``.

Kept apart from ``cmd_trace`` (which wires ``import``, ``generate`` and ``check``) because the
import has most of the options: source formats, fill rules, the window, the account map, the
config checks and ``--repo-out``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from allotment.cli.common import (
    add_at_argument,
    at_date,
    load_compiled,
    positive_float,
    positive_int,
)
from allotment.cli.out_paths import check_out_path
from allotment.config.models.common import NAME_PATTERN, OWNER_PATTERN
from allotment.durations import parse_duration
from allotment.errors import UsageError
from allotment.traces.fill_rules import FillRules, load_fill_rules, rules_for
from allotment.traces.importers import (
    FORMATS,
    AlibabaImporter,
    CsvImporter,
    Importer,
    SacctImporter,
    SwfImporter,
    parse_map,
)
from allotment.traces.job_fit import JobFit, job_fit
from allotment.traces.pipeline import ImportChecks, Window, import_trace
from allotment.traces.repo_out import (
    RepoOutOptions,
    commit_repo,
    discard_repo,
    render_repo,
    write_repo,
)
from allotment.traces.summary import ImportResult, render_summary

_ACCOUNT_FROM = {
    "swf": ("group", "queue", "partition", "user"),
    "sacct": ("account", "partition", "qos", "user"),
    "alibaba-gpu": ("qos", "single"),
}


def _duration(text: str) -> float:
    try:
        return float(parse_duration(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register_import(tsub: argparse._SubParsersAction[Any]) -> None:
    imp = tsub.add_parser("import", help="convert a real trace to the canonical format")
    imp.add_argument(
        "file", metavar="FILE", type=Path, help="source trace (gzip is read transparently)"
    )
    imp.add_argument("--format", required=True, choices=FORMATS, help="source format")
    imp.add_argument(
        "-o",
        "--output",
        required=True,
        type=Path,
        help="canonical trace to write (.jsonl or .jsonl.gz)",
    )
    imp.add_argument(
        "--fill",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="default for a field the source lacks: min_runtime=2h|0|policy|work, "
        "resumable=true, checkpoint_interval=30m|none, kind=auto|debug|... (repeatable)",
    )
    imp.add_argument(
        "--fill-rules", type=Path, metavar="FILE", help="YAML fill rules (docs/trace-format.md)"
    )
    imp.add_argument(
        "--account-from",
        metavar="FIELD",
        help="swf: group|queue|partition|user; sacct: account|partition|qos|user; "
        "alibaba-gpu: qos|single",
    )
    imp.add_argument(
        "--gpus-per-proc",
        type=positive_float,
        default=1.0,
        help="swf: GPUs per processor; gpus = ceil(procs x this), at least 1 (default 1)",
    )
    imp.add_argument(
        "--fractional",
        choices=("round", "skip"),
        default="round",
        help="alibaba-gpu: GPU-sharing pods rounded up to 1 GPU or skipped (default round)",
    )
    imp.add_argument(
        "--node-list", type=Path, help="alibaba-gpu: node list CSV (default: found next to FILE)"
    )
    imp.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=COL,...",
        help="csv: canonical field = CSV column (submit, work or start+end, gpus, account, ...)",
    )
    imp.add_argument(
        "--delimiter", default=None, help="csv/sacct: field separator (default , and |)"
    )
    imp.add_argument(
        "--since",
        type=_duration,
        metavar="DURATION",
        help="keep the trace from this long after its first submit (e.g. 110d); jobs still "
        "running then start at 0 with the work they had left",
    )
    imp.add_argument(
        "--until",
        type=_duration,
        metavar="DURATION",
        help="drop jobs submitted this long or later after the first submit (e.g. 140d)",
    )
    imp.add_argument(
        "--summary-json", type=Path, metavar="FILE", help="also write the import summary as JSON"
    )
    imp.add_argument(
        "--account-map",
        action="append",
        default=[],
        metavar="SOURCE=LEAF",
        help="charge the source account SOURCE (as written in FILE) to budget leaf LEAF "
        "(repeatable)",
    )
    add_fit_arguments(imp)
    ro = imp.add_argument_group("--repo-out: a config repository matching the trace")
    ro.add_argument(
        "--repo-out", type=Path, metavar="DIR", help="write inventory, budgets and policies here"
    )
    ro.add_argument(
        "--shares",
        choices=("usage", "equal"),
        default="usage",
        help="leaf shares proportional to historical GPU-hours, or equal (default usage)",
    )
    ro.add_argument(
        "--gpus",
        type=positive_int,
        help="cluster size in GPUs (default: node list, else peak demand)",
    )
    ro.add_argument("--gpus-per-node", type=positive_int, help="GPUs per node (default 8)")
    ro.add_argument(
        "--cluster",
        default=None,
        help="cluster name to write (default imported); with --repo, the cluster to check "
        "against (default: the largest)",
    )
    ro.add_argument("--org", default="imported", help="budget root name (default imported)")
    ro.add_argument(
        "--owner", default="platform@example.com", help="owner e-mail written into every file"
    )
    add_at_argument(imp)
    imp.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    imp.set_defaults(func=run_import)


def add_fit_arguments(p: argparse.ArgumentParser, *, found: bool = False) -> None:
    """``--repo`` of the trace commands; ``found``: without it, the config repository holding
    the current folder is used when there is one, as ``allot validate`` finds it."""
    default = (
        "the one holding the current folder, found upwards as allot validate does; none: "
        "no config checks" if found else "no config checks"
    )
    p.add_argument(
        "--repo",
        metavar="DIR",
        type=Path,
        default=None,
        help="config repository the trace is for: check each job's account, GPU type and "
        f"size against it (default: {default})",
    )


def _importer(args: argparse.Namespace) -> Importer:
    fmt = args.format
    allowed = _ACCOUNT_FROM.get(fmt)
    if args.account_from is not None and (allowed is None or args.account_from not in allowed):
        choices = ", ".join(allowed) if allowed else "nothing (use --map account=COL)"
        raise UsageError(f"--account-from for {fmt} takes {choices}, got {args.account_from!r}")
    if args.map and fmt != "csv":
        raise UsageError("--map is only for --format csv")
    if args.delimiter is not None and fmt == "csv" and len(args.delimiter) != 1:
        raise UsageError(f"--delimiter for csv is one character, got {args.delimiter!r}")
    if args.delimiter == "":
        raise UsageError("--delimiter must not be empty")
    if fmt == "swf":
        return SwfImporter(
            gpus_per_proc=args.gpus_per_proc,
            account_from=args.account_from or "group",
            gpus_per_node=args.gpus_per_node or 8,
        )
    if fmt == "alibaba-gpu":
        if args.node_list is not None and not args.node_list.is_file():
            raise UsageError(f"--node-list {args.node_list}: no such file")
        return AlibabaImporter(
            fractional=args.fractional,
            account_from=args.account_from or "qos",
            node_list=args.node_list,
        )
    if fmt == "sacct":
        return SacctImporter(
            account_from=args.account_from or "account", delimiter=args.delimiter or "|"
        )
    if not args.map:
        raise UsageError(
            "--format csv needs --map submit=COL,work=COL,gpus=COL,account=COL[,user=COL]"
        )
    return CsvImporter(mapping=parse_map(args.map), delimiter=args.delimiter or ",")


def _fill(args: argparse.Namespace) -> FillRules:
    rules = rules_for(args.format)
    if args.fill_rules is not None:
        rules = load_fill_rules(args.fill_rules)
    return rules.with_overrides(args.fill)


def _window(args: argparse.Namespace) -> Window | None:
    if args.since is None and args.until is None:
        return None
    since = args.since or 0.0
    if args.until is not None and args.until <= since:
        raise UsageError(f"--until must be later than --since ({args.until:g}s <= {since:g}s)")
    return Window(since=since, until=args.until)


def _account_map(args: argparse.Namespace) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in args.account_map:
        source, sep, leaf = pair.partition("=")
        if not sep or not source.strip() or not re.fullmatch(NAME_PATTERN, leaf.strip()):
            raise UsageError(
                f"--account-map {pair!r}: expected SOURCE=LEAF with LEAF a budget name "
                "(lowercase letters, digits, - and _)"
            )
        out[source.strip()] = leaf.strip()
    return out


def fit_from_args(args: argparse.Namespace) -> JobFit | None:
    """The config checks of ``--repo`` (None without it)."""
    if args.repo is None:
        return None
    return job_fit(load_compiled(args), args.cluster)


def _check_repo_names(args: argparse.Namespace) -> None:
    """Names written into the repository must be config names; say so before any work."""
    for flag, value, pattern in (
        ("--cluster", args.cluster or "imported", NAME_PATTERN),
        ("--org", args.org, NAME_PATTERN),
        ("--owner", args.owner, OWNER_PATTERN),
    ):
        if not re.fullmatch(pattern, value):
            what = (
                "an e-mail or @handle"
                if flag == "--owner"
                else "lowercase letters, digits, - and _"
            )
            raise UsageError(f"{flag} {value!r}: expected {what}")


def _partial(path: Path) -> Path:
    return path.with_name(f".partial-{os.getpid()}-{path.name}")


def run_import(args: argparse.Namespace) -> int:
    if not args.file.is_file():
        raise UsageError(f"{args.file}: no such file")
    importer = _importer(args)
    fill = _fill(args)
    window = _window(args)
    if args.repo is not None and args.repo_out is not None:
        raise UsageError(
            "--repo checks against an existing config, --repo-out writes one: not both"
        )
    checks = ImportChecks(account_map=_account_map(args), fit=fit_from_args(args))
    if args.repo_out is not None:
        _check_repo_names(args)
        if args.repo_out.exists() and (not args.repo_out.is_dir() or any(args.repo_out.iterdir())):
            raise UsageError(f"--repo-out {args.repo_out}: exists and is not an empty folder")
    out: Path = args.output
    if out.is_dir():
        raise UsageError(f"-o {out}: is a folder; name the trace file to write")
    check_out_path(out, "-o", make_parents=True)
    tmp_trace = _partial(out)
    tmp_repo: Path | None = None
    try:
        result = import_trace(
            importer,
            args.file,
            tmp_trace,
            fill=fill,
            display_name=str(args.file),
            window=window,
            checks=checks,
        )
        if args.repo_out is not None:
            opts = RepoOutOptions(
                shares=args.shares,
                gpus=args.gpus,
                gpus_per_node=args.gpus_per_node,
                cluster=args.cluster or "imported",
                org=args.org,
                owner=args.owner,
            )
            tmp_repo = write_repo(
                args.repo_out, render_repo(result, opts), at=at_date(args), commit=False
            )
        if args.summary_json is not None:
            _write_json(args.summary_json, _summary_dict(result, out))
        os.replace(tmp_trace, out)
        if tmp_repo is not None:
            commit_repo(tmp_repo, args.repo_out)
            tmp_repo = None
    finally:
        tmp_trace.unlink(missing_ok=True)
        if tmp_repo is not None:
            discard_repo(tmp_repo)
    if not args.quiet:
        text = render_summary(result).replace(str(tmp_trace), str(out))
        sys.stdout.write(text)
        if args.repo_out is not None:
            print(f"wrote config repository {args.repo_out} (validated by compiling it)")
    return 0


def _summary_dict(r: ImportResult, out: Path) -> dict[str, Any]:
    s = r.stats
    return {
        "format": r.format,
        "source": r.source,
        "output": str(out),
        "records": r.records,
        "imported": r.imported,
        "skipped": dict(sorted(r.skipped.items())),
        "kept_with_changes": dict(sorted(r.notes.items())),
        "span_seconds": s.last_end,
        "last_submit_seconds": s.last_submit,
        "start": r.start_iso,
        "accounts": len(s.account_gpu_seconds),
        "users": s.users,
        "gpu_hours": round(s.gpu_seconds / 3600, 3),
        "largest_job_gpus": s.max_job_gpus,
        "peak_demand_gpus": s.peak_demand_gpus,
        "kinds": dict(sorted(s.kinds.items())),
        "unallocated_jobs": s.unallocated,
        "cluster_gpus": sum(g.gpus_per_node * g.count for g in r.cluster) or None,
    }


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
