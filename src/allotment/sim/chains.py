"""Which chain of dependent jobs each job belongs to: the jobs joined by ``depends_on`` edges.

A chain is a weakly connected part of the dependency graph (data prep -> train -> eval, with
fan-in and fan-out, is one chain), named by its first member in (submit, id) order and sized by
its members in the workload.  The simulator writes both on a member's ``submit`` event, so the
metrics (``chain makespan``: the chain's first submit to its members' last end,
docs/metrics.md) come from the event log alone, and a chain whose members were not all
submitted in the run, or not all ended, is known to be unfinished.

Why components, not a field a user sets: a trace says only ``depends_on`` (Slurm's
``--dependency``), so this is the one grouping every workload has.  The ``ai2`` scenario's
closed-loop streams (each experiment waits for the one ``k`` places before it) are chains too:
they span the run and are almost never finished within it (docs/results.md, issue 28)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from allotment.core.jobs import JobSpec


@dataclass(frozen=True, slots=True)
class Chain:
    """A job's chain: its name (first member by (submit, id)) and how many jobs it has."""

    name: str
    jobs: int


def chains_of(linked: Iterable[JobSpec]) -> Mapping[str, Chain]:
    """Job id -> its chain, for every job on a dependency edge among ``linked`` (edges to jobs
    outside ``linked`` are ignored, as the simulator ignores them)."""
    specs = sorted(linked, key=lambda j: (j.submit, j.id))
    ids = {j.id for j in specs}
    parent = {j.id: j.id for j in specs}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    order = {j.id: i for i, j in enumerate(specs)}
    for j in specs:
        for d in j.depends_on:
            if d in ids and d != j.id:
                a, b = root(j.id), root(d)
                if a != b:  # the earlier member stays the root: the root is the chain's name
                    if order[a] < order[b]:
                        parent[b] = a
                    else:
                        parent[a] = b
    sizes: dict[str, int] = {}
    for j in specs:
        r = root(j.id)
        sizes[r] = sizes.get(r, 0) + 1
    out: dict[str, Chain] = {}
    named: dict[str, Chain] = {}
    for j in specs:
        r = root(j.id)
        if sizes[r] < 2:
            continue  # names only jobs outside the workload: on no edge the run knows
        c = named.get(r)
        if c is None:
            c = named[r] = Chain(r, sizes[r])
        out[j.id] = c
    return out
