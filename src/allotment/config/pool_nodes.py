"""The nodes an ``interactive.pool`` reserves on one cluster, and what is wrong with them
(docs/design/interactive.md, "The dedicated pool").  One owner for both readers: the file check
(``config.policy_checks``, ``file:line:col``) and ``allot simulate --set interactive.pool=...``.

A pool is a count N (the cluster's last N nodes by name) or a list of node names or hostlists.
Every listed node must be a node of each cluster the setting applies to (a typo would reserve
nothing and say nothing), and a pool must leave a node for other work: work the policy may not
stop never borrows the pool, so it would wait for ever.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from allotment.config.hostlist import expand_hostlist


@dataclass(frozen=True, slots=True)
class PoolProblem:
    """One thing wrong with a pool on a cluster; ``item``: the list entry at fault (None: the
    pool as a whole)."""

    item: int | None
    message: str


def pool_problems(pool: int | Sequence[str], cluster: str, nodes: Sequence[str]) -> list[PoolProblem]:
    """Everything wrong with ``pool`` on ``cluster``, whose nodes are ``nodes``."""
    if isinstance(pool, int):
        if pool >= len(nodes):
            return [PoolProblem(None, f"interactive.pool {pool} leaves no node of cluster '{cluster}' "
                                      f"({len(nodes)}) for other work: at most {len(nodes) - 1}")]
        return []
    out: list[PoolProblem] = []
    known = set(nodes)
    named: set[str] = set()
    for j, expr in enumerate(pool):
        try:
            listed = expand_hostlist(expr)
        except ValueError as exc:
            out.append(PoolProblem(j, str(exc)))
            continue
        unknown = [n for n in listed if n not in known]
        if unknown:
            out.append(PoolProblem(j, f"unknown node '{unknown[0]}' in cluster '{cluster}'"))
        named.update(n for n in listed if n in known)
    if nodes and named >= known:
        out.append(PoolProblem(None, f"interactive.pool names every node of cluster '{cluster}' "
                                     f"({len(nodes)}): leave one for other work"))
    return out


def pool_names(pool: Sequence[str]) -> tuple[str, ...]:
    """The node names a listed pool holds, hostlists expanded, sorted, each once (what compile
    keeps; the core reserves those its cluster has, and the file check refused any other)."""
    return tuple(sorted({n for expr in pool for n in expand_hostlist(expr)}))
