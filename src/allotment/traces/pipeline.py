"""``allot trace import``: source file -> canonical trace, in one streaming pass.

Numbered steps, each the same for every format:

1. the importer streams ``RawJob`` records, counting skips and collecting positioned errors;
2. records are sorted by (submit, id) in bounded memory (``sorting.external_sort``);
3. errors found reading the source are kept, with those of the next steps, to be raised at
   once in step 7 (so a bad time bound and a bad line elsewhere come out together);
4. times are rebased so the first submit is 0 and checked against the bounds (``bounds``);
   names become config names (``names``), or what ``--account-map`` says;
5. fill rules complete what the source does not say (``fill_rules``);
6. with a config (``--repo``), each job must replay on its cluster (``job_fit``); each job is
   written to a temporary file and counted (``summary.ImportStats``);
7. duplicate ids are checked (positions are the source's lines); with no error at all the
   temporary file is renamed to the output, otherwise removed and every error raised.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from allotment.core.jobs import JobSpec
from allotment.errors import TraceError
from allotment.traces.bounds import time_problem
from allotment.traces.canonical import AtomicWriter, encode, encode_header
from allotment.traces.diagnostics import DiagnosticCollector, TooManyErrors
from allotment.traces.fill_rules import FillRules
from allotment.traces.idcheck import IdIndex, id_digest
from allotment.traces.importers.base import ImportContext, Importer, NodeGroupShape, RawJob
from allotment.traces.job_fit import JobFit
from allotment.traces.names import account_mapper, gpu_type_mapper, user_mapper
from allotment.traces.sorting import DEFAULT_CHUNK, external_sort
from allotment.traces.summary import ImportResult, ImportStats


@dataclass(frozen=True, slots=True)
class Window:
    """A slice of a trace, in seconds after its first submit: ``[since, until)``.

    Jobs submitted before ``since`` but still running then are kept, starting at the window
    with the work they had left (``keep_running``), so the slice opens on a realistically busy
    cluster rather than an empty one.  The slice is rebased to start at 0.
    """

    since: float = 0.0
    until: float | None = None
    keep_running: bool = True


@dataclass(frozen=True, slots=True)
class ImportChecks:
    """What the importer knows of the config the trace is meant for.

    ``account_map`` charges a source account (its name in the source, before normalization) to
    the named budget leaf: the documented way to fold accounts a config does not have into one it
    does.  With ``fit``, every imported job must replay on that cluster (``job_fit``): an unknown
    account, GPU type or a job too large is an error at its source line, not a silent loss.
    """

    account_map: Mapping[str, str] = field(default_factory=dict)
    fit: JobFit | None = None


def _rebased_problem(submit: float) -> str | None:
    problem = time_problem("submit", submit)
    return None if problem is None else f"{problem}, counted from the first submit"


def _key(r: RawJob) -> tuple[float, str]:
    return (r.submit, r.id)


def import_trace(
    importer: Importer,
    path: str | Path,
    output: str | Path,
    *,
    fill: FillRules,
    display_name: str | None = None,
    sort_chunk: int = DEFAULT_CHUNK,
    window: Window | None = None,
    checks: ImportChecks | None = None,
) -> ImportResult:
    """Convert ``path`` to a canonical trace at ``output``; raise TraceDiagnostics on bad input.

    ``window`` keeps a slice of the trace (seconds after its first submit); see :class:`Window`.
    ``checks`` maps source accounts and checks jobs against a config; see :class:`ImportChecks`.
    """
    src = Path(path)
    shown = display_name or str(path)
    ctx = ImportContext(diags=DiagnosticCollector(shown))
    ordered = external_sort(importer.read(src, ctx), _key, chunk=sort_chunk)
    try:
        first = next(ordered, None)  # the whole source has been read once this returns
        return _write(
            importer,
            shown,
            src,
            output,
            ctx,
            first,
            ordered,
            fill,
            window or Window(),
            checks or ImportChecks(),
        )
    except TooManyErrors:
        ctx.diags.raise_if_any(stopped_early=True)
        raise  # unreachable: the collector holds errors
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:
        # a truncated gzip, a binary file, a NUL byte: one line, no traceback
        raise TraceError(f"cannot read {shown}: {exc}") from exc
    finally:
        ordered.close()  # removes the sort's temporary files whatever happened


def _write(
    importer: Importer,
    shown: str,
    src: Path,
    output: str | Path,
    ctx: ImportContext,
    first: RawJob | None,
    rest: Iterator[RawJob],
    fill: FillRules,
    window: Window,
    checks: ImportChecks,
) -> ImportResult:
    fmt = importer.name
    accounts, users, gpu_types = account_mapper(), user_mapper(), gpu_type_mapper()
    stats = ImportStats()
    ids = IdIndex()
    t0 = (first.submit if first is not None else 0.0) + window.since
    start_iso = _shift(ctx.start_iso, t0) if first is not None else None
    header: dict[str, Any] = {"source": f"{fmt}:{src.name}", "generator": "allot trace import"}
    if start_iso:
        header["start"] = start_iso
    with AtomicWriter(output) as out:
        out.write_line(encode_header(header))
        if first is not None:
            for raw in _chain(first, rest):
                submit, work = raw.submit - t0, raw.work
                if submit < 0:  # before the window: keep only what still runs at its start
                    if submit + work <= 0 or not window.keep_running:
                        ctx.skip("before the --since window")
                        continue
                    ctx.note("running when the --since window opens (clipped to its rest)")
                    submit, work = 0.0, submit + work
                if window.until is not None and submit >= window.until - window.since:
                    ctx.skip("after the --until window")
                    continue
                if ctx.refuse(raw.line, _rebased_problem(submit)):
                    continue
                account = checks.account_map.get(raw.account) or accounts(raw.account)
                user = users(raw.user) if raw.user else ""
                filled = fill.apply(raw, account=account, user=user)  # rules see these names
                job = JobSpec(
                    id=raw.id,
                    submit=submit,
                    account=account,
                    gpus=raw.gpus,
                    work=work,
                    user=user,
                    gpus_per_node=raw.gpus_per_node,
                    min_runtime=filled.min_runtime,
                    resumable=filled.resumable,
                    checkpoint_interval=filled.checkpoint_interval,
                    priority=raw.priority,
                    kind=filled.kind,
                    gpu_type=gpu_types(raw.gpu_type) if raw.gpu_type else None,
                )
                if checks.fit is not None:
                    bad = [ctx.refuse(raw.line, p.message) for p in checks.fit.problems(job)]
                    if bad:
                        continue
                ids.add_digest(id_digest(job.id))  # spilled a run at a time (traces/idcheck.py)
                stats.add(job)
                out.write_line(encode(job))
        repeated = ids.repeated_digests()
        if repeated:
            _report_duplicates(importer, src, ctx, repeated)
        ctx.diags.raise_if_any()  # inside the writer: an exception removes the temporary file
    renamed = {raw: name for raw, name in accounts.mapping().items() if raw != name}
    return ImportResult(
        format=fmt,
        source=shown,
        output=str(output),
        records=ctx.records,
        stats=stats,
        skipped=dict(ctx.skipped),
        notes=dict(ctx.notes),
        cluster=tuple(
            NodeGroupShape(gpu_types(g.gpu_type), g.gpus_per_node, g.count) for g in ctx.cluster
        ),
        cluster_source=ctx.cluster_source,
        start_iso=start_iso,
        renamed_accounts=renamed,
    )


def _report_duplicates(
    importer: Importer, src: Path, ctx: ImportContext, repeated: set[int]
) -> None:
    """Second pass over the source, only when ids repeat: find the source lines to name."""
    again = ImportContext(diags=DiagnosticCollector(ctx.diags.file))
    first: dict[str, int] = {}
    for raw in importer.read(src, again):
        if id_digest(raw.id) not in repeated:
            continue
        if raw.id in first:
            ctx.diags.add(
                raw.line, 1, f"duplicate job id {raw.id!r}: line {first[raw.id]} has it too"
            )
        else:
            first[raw.id] = raw.line


def _chain(first: RawJob, rest: Iterator[RawJob]) -> Iterator[RawJob]:
    yield first
    yield from rest


def _shift(iso: str | None, seconds: float) -> str | None:
    if iso is None:
        return None
    t = dt.datetime.fromisoformat(iso) + dt.timedelta(seconds=seconds)
    return t.isoformat()
