"""The ai2-pipelines scenario: ai2 plus data prep -> train -> eval pipelines (issue 28, item 2)."""

from __future__ import annotations

from pathlib import Path

from allotment.core.jobs import JobSpec
from allotment.sim.chains import chains_of
from allotment.sim.workloads import from_trace
from allotment.traces.canonical import sorted_items, write_trace
from allotment.traces.scenarios import get_scenario
from tests.core.builders import make_config

TREE = {"lm": {"pre": 3, "post": 2}, "vision": 2, "safety": 1}


def _generate(name: str, seed: int, days: float = 4.0) -> tuple[JobSpec, ...]:
    config = make_config(TREE, nodes=16, gpus_per_node=8)
    return get_scenario(name)(config, cluster="c1", days=days, seed=seed).jobs


def _pipeline_jobs(jobs: tuple[JobSpec, ...]) -> list[JobSpec]:
    return [j for j in jobs if "-p" in j.id and j.id.rsplit("-", 1)[1][:1].isdigit()]


def test_same_seed_same_pipelines_other_seed_other_pipelines() -> None:
    a = _generate("ai2-pipelines", 3)
    assert a == _generate("ai2-pipelines", 3)
    assert a != _generate("ai2-pipelines", 4)


def test_it_is_ai2_plus_pipelines() -> None:
    """ai2's own jobs are unchanged: the pipelines draw from a random stream of their own."""
    base, with_pipes = _generate("ai2", 2), _generate("ai2-pipelines", 2)
    pipes = _pipeline_jobs(with_pipes)
    assert pipes and not _pipeline_jobs(base)
    assert sorted(set(with_pipes) - set(pipes), key=lambda j: (j.submit, j.id)) == list(base)


def test_pipelines_have_prep_train_eval_with_fan_in_fan_out_and_deadlines() -> None:
    pipes = _pipeline_jobs(_generate("ai2-pipelines", 1))
    by_id = {j.id: j for j in pipes}
    trains = [j for j in pipes if j.id.endswith("-2train")]
    assert trains and all(j.kind == "train" and j.priority == 1 for j in trains)
    assert all(all(by_id[d].id.rsplit("-", 1)[1].startswith("1prep") for d in t.depends_on) for t in trains)
    assert any(len(t.depends_on) > 1 for t in trains)  # fan-in: several prep jobs
    evals_of = {t.id: [j for j in pipes if j.depends_on == (t.id,)] for t in trains}
    assert any(len(e) > 1 for e in evals_of.values())  # fan-out: several evals of one run
    assert any(j.id.endswith("-4merge") and len(j.depends_on) > 1 for j in pipes)  # and fan-in again
    with_deadline = [j for j in pipes if j.deadline is not None]
    assert with_deadline and all(j.deadline > j.submit for j in with_deadline)  # type: ignore[operator]
    assert len({j.id.rsplit("-", 1)[0] for j in with_deadline}) < len(trains)  # some pipelines, not all


def test_every_edge_is_valid() -> None:
    """Every dependency names a job of the workload of the same team, a pipeline's prerequisite is
    submitted no later than its dependant, and there is no cycle (a topological order exists).

    (ai2's own streams do not keep the submit order in the initial backlog, submitted at random
    in the first 10 minutes: a job there may be submitted before the one it waits for.  Left as
    it is: changing it would change every ai2 workload.)"""
    jobs = _generate("ai2-pipelines", 5)
    by_id = {j.id: j for j in jobs}
    assert len(by_id) == len(jobs)
    pipes = {j.id for j in _pipeline_jobs(jobs)}
    for j in jobs:
        for d in j.depends_on:
            assert d != j.id and d in by_id and by_id[d].account == j.account
            assert (d in pipes) == (j.id in pipes)  # pipelines and ai2's streams do not mix
            if j.id in pipes:
                assert by_id[d].submit <= j.submit
    indegree = {j.id: len(j.depends_on) for j in jobs}
    after: dict[str, list[str]] = {}
    for j in jobs:
        for d in j.depends_on:
            after.setdefault(d, []).append(j.id)
    ready = [i for i, n in indegree.items() if n == 0]
    seen = 0
    while ready:
        i = ready.pop()
        seen += 1
        for k in after.get(i, ()):
            indegree[k] -= 1
            if indegree[k] == 0:
                ready.append(k)
    assert seen == len(jobs)


def test_a_pipeline_is_one_chain(tmp_path: Path) -> None:
    """Each pipeline is one chain of the metrics (sim/chains.py), and survives a trace file."""
    jobs = _generate("ai2-pipelines", 1, days=2)
    chains = chains_of(j for j in jobs if j.depends_on or any(j.id in k.depends_on for k in jobs))
    for j in _pipeline_jobs(jobs):
        first = j.id.rsplit("-", 1)[0]
        assert chains[j.id].name.startswith(first)
        assert chains[j.id].jobs == sum(1 for k in jobs if k.id.startswith(first + "-"))
    config = make_config(TREE, nodes=16, gpus_per_node=8)
    path = tmp_path / "p.jsonl"
    write_trace(path, sorted_items(jobs, ()), header={"source": "test"})
    assert from_trace(path, config, "c1").jobs == jobs
