"""Importers on the real shared traces: counts agree with the traces' own READMEs."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

from allotment.traces.canonical import read_trace
from allotment.traces.fill_rules import rules_for
from allotment.traces.importers import AlibabaImporter, SwfImporter
from allotment.traces.pipeline import import_trace


def _swf_job_lines(path: Path) -> list[list[int]]:
    with gzip.open(path, "rt") as fh:
        return [[int(x) for x in line.split()] for line in fh if line.strip() and line[0] != ";"]


def test_swf_nasa_keeps_every_job_with_a_run_time(swf_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "nasa.jsonl"
    r = import_trace(SwfImporter(), swf_path, out, fill=rules_for("swf"))
    rows = _swf_job_lines(swf_path)
    assert r.records == len(rows) == 18_239  # README: 18,239 jobs
    zero = sum(1 for f in rows if f[3] == 0)
    assert r.skipped == {"zero run time": zero}
    trace = read_trace(out)
    assert len(trace.jobs) == r.imported == 18_239 - zero
    # processors -> GPUs one for one by default; group 1 / 2 -> accounts group1 / group2
    first = trace.jobs[0]
    assert (first.id, first.gpus, first.work, first.account, first.user) == (
        "1",
        128,
        1451,
        "group1",
        "u1",
    )
    groups = Counter(f[12] for f in rows if f[3] > 0)
    assert Counter(j.account for j in trace.jobs) == {f"group{g}": n for g, n in groups.items()}
    assert r.start_iso == "1993-10-01T07:00:03+00:00"  # UnixStartTime 749458803
    assert sum(g.gpus_per_node * g.count for g in r.cluster) == 128  # MaxProcs


def test_swf_gpus_per_proc_scales_and_rounds_up(swf_path: Path, tmp_path: Path) -> None:
    r = import_trace(
        SwfImporter(gpus_per_proc=0.25), swf_path, tmp_path / "t.jsonl", fill=rules_for("swf")
    )
    jobs = read_trace(tmp_path / "t.jsonl").jobs
    procs = {str(f[0]): f[4] for f in _swf_job_lines(swf_path) if f[3] > 0}
    assert all(j.gpus == max(1, -(-procs[j.id] // 4)) for j in jobs)
    assert sum(g.gpus_per_node * g.count for g in r.cluster) == 32


def test_alibaba_openb_pods_become_jobs(alibaba_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "ali.jsonl"
    r = import_trace(AlibabaImporter(), alibaba_path, out, fill=rules_for("alibaba-gpu"))
    assert r.records == 8152  # README: 8152 pods
    assert r.skipped["CPU-only pod"] == 1088  # README: 1088 CPU-only
    gpu_pods = 8152 - 1088
    assert r.imported + sum(v for k, v in r.skipped.items() if k != "CPU-only pod") == gpu_pods
    # README: 6212 GPUs on 1213 GPU nodes
    assert sum(g.gpus_per_node * g.count for g in r.cluster) == 6212
    assert sum(g.count for g in r.cluster) == 1213
    jobs = read_trace(out).jobs
    by_account = Counter(j.account for j in jobs)
    assert set(by_account) <= {"ls", "be", "burstable", "guaranteed"}
    # the documented QoS rule: best effort is unallocated, Guaranteed protected for its whole run
    assert all(j.min_runtime == 0 for j in jobs if j.account == "be")
    assert all(
        j.min_runtime == j.work and not j.resumable for j in jobs if j.account == "guaranteed"
    )
    assert all(j.gpus_per_node == j.gpus for j in jobs)
    assert jobs[0].submit == 0


def test_alibaba_fractional_pods_can_be_skipped(alibaba_path: Path, tmp_path: Path) -> None:
    rounded = import_trace(
        AlibabaImporter(), alibaba_path, tmp_path / "a.jsonl", fill=rules_for("alibaba-gpu")
    )
    skipped = import_trace(
        AlibabaImporter(fractional="skip"),
        alibaba_path,
        tmp_path / "b.jsonl",
        fill=rules_for("alibaba-gpu"),
    )
    n = rounded.notes["GPU-sharing pod rounded up to 1 GPU"]
    assert n > 0
    assert skipped.skipped["GPU-sharing pod (fractional GPU)"] == n
    assert skipped.imported == rounded.imported - n
