"""A job source hands out a workload's jobs in ``(submit, id)`` order from a position that can be
forked (``traces/job_stream.py``, ``traces/trace_stream.py``): what lets a paused simulation of a
trace file be copied (``sim/switch.py``) while neither copy holds the file's jobs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from allotment.core.jobs import JobSpec
from allotment.errors import TraceError
from allotment.traces.scenarios.workload import Workload
from allotment.traces.writer import encode


def _jobs(n: int, seed: int) -> list[JobSpec]:
    """Jobs with many submit ties; some depend on an earlier one."""
    rnd = random.Random(seed)
    out: list[JobSpec] = []
    t = 0.0
    for i in range(n):
        t += rnd.choice([0.0, 0.0, 1.0, 7.5])
        deps = (out[rnd.randrange(len(out))].id,) if out and rnd.random() < 0.2 else ()
        out.append(JobSpec(id=f"j{rnd.randrange(10**4):04d}-{i}", submit=t, account="a",
                           gpus=rnd.choice([1, 2]), work=60.0, depends_on=deps))
    return out


def _write(path: Path, jobs: list[JobSpec]) -> None:
    """In submit order, but ids within an instant in reverse: the source must reorder them."""
    lines = sorted(jobs, key=lambda j: (j.submit, [-ord(c) for c in j.id]))
    path.write_text("".join(encode(j) + "\n" for j in lines))


def _drain(source: object) -> list[JobSpec]:
    out = []
    while (j := source.next_job()) is not None:  # type: ignore[attr-defined]
        out.append(j)
    return out


@pytest.mark.parametrize(("seed", "block"), [(1, 128), (2, 128), (1, 4), (2, 1)])
def test_a_fork_of_a_trace_file_source_at_any_position_hands_out_what_the_source_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, block: int
) -> None:
    """At any position, within a block of the file's reads or at its edge (blocks of 1 and 4
    jobs: each ends where an instant does, so their edges fall between ties too)."""
    from allotment.traces import trace_stream as ts
    from allotment.traces.trace_stream import trace_stream

    monkeypatch.setattr(ts, "BLOCK", block)

    jobs = _jobs(60, seed)
    path = tmp_path / "t.jsonl"
    _write(path, jobs)
    want = list(Workload.of(jobs).jobs)
    source = trace_stream(path)
    assert source.count == len(jobs)
    assert [j.id for j in source.linked] == [j.id for j in want if j.depends_on or
                                             any(j.id in k.depends_on for k in jobs)]
    for k in range(len(want) + 1):
        s = source.rewound()
        taken = [s.next_job() for _ in range(k)]
        fork = s.fork()
        assert taken == want[:k]
        assert _drain(fork) == want[k:]
        assert _drain(s) == want[k:]  # the fork did not move the source


def test_a_fork_of_a_workload_in_memory_hands_out_what_the_source_would() -> None:
    from allotment.traces.job_stream import job_source

    want = list(Workload.of(_jobs(30, 3)).jobs)
    source = job_source(Workload.of(want))
    for k in range(len(want) + 1):
        s = source.rewound()
        for _ in range(k):
            s.next_job()
        assert _drain(s.fork()) == want[k:] == _drain(s)


def test_a_trace_changed_while_it_is_replayed_is_refused(tmp_path: Path) -> None:
    from allotment.traces.trace_stream import trace_stream

    path = tmp_path / "t.jsonl"
    _write(path, _jobs(20, 4))
    source = trace_stream(path)
    assert source.next_job() is not None
    with path.open("a") as f:
        f.write(encode(JobSpec(id="late", submit=10**6, account="a", gpus=1, work=60.0)) + "\n")
    with pytest.raises(TraceError, match="changed while it was being simulated"):
        _drain(source.fork())


def _holds(root: object, target: object) -> bool:
    """Whether ``target`` is reachable from ``root`` through containers (lists, tuples, dicts,
    the source's slots)."""
    import gc

    seen: set[int] = set()
    todo = [root]
    while todo:
        o = todo.pop()
        if o is target:
            return True
        if id(o) in seen or isinstance(o, (str, int, float, JobSpec)):
            continue
        seen.add(id(o))
        todo.extend(gc.get_referents(o))
    return False


def test_a_taken_workload_lets_each_job_go_as_it_hands_it_out() -> None:
    """``allot simulate`` without ``--save`` hands its workload over (issue 27 item 4): a job on
    no dependency edge is then held by nothing of the source once handed out, a job on one only
    by ``linked`` (the run reads those before they arrive); a fork hands out what the source
    would; the jobs cannot be read again."""
    from allotment.traces.job_stream import TakenJobs

    jobs = _jobs(40, 5)
    want = list(Workload.of(jobs).jobs)
    source = TakenJobs.of(Workload.of(jobs))
    assert source.count == len(want)
    assert [j.id for j in source.linked] == [j.id for j in want if j.depends_on or
                                             any(j.id in k.depends_on for k in jobs)]
    linked = {id(j) for j in source.linked}
    for k, job in enumerate(want):
        fork = source.fork()
        assert _drain(fork) == want[k:]
        assert fork.count == len(want)
        got = source.next_job()
        assert got is job
        assert _holds(source, got) == (id(got) in linked)
    assert source.next_job() is None
    with pytest.raises(RuntimeError, match="cannot be read again"):
        source.rewound()
