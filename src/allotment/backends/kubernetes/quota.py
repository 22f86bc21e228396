"""A share of GPU-time becomes a concurrent GPU quota: ``quota = absolute share x cluster GPUs``.

The one place this rule lives: ``allot compile --target kai|kueue`` and the live backend's
queue sync both call ``gpu_quotas``.  It works from the integer fair-share weights the backends
hold (``backends.policy``), normalized among the siblings that are present, so what is printed
and what the reconciler writes are the same numbers.  Quotas are rounded to 1/100 GPU (KAI
takes GPU fractions); a parent's quota is the sum of its children's, as KAI requires.
"""

from __future__ import annotations

from collections.abc import Iterable

from allotment.backends.policy import SLURM_ROOT, AccountSpec


def absolute_shares(accounts: Iterable[AccountSpec], root: str) -> dict[str, float]:
    """Fraction of the whole cluster for ``root`` (1.0) and every account below it."""
    kids: dict[str, list[AccountSpec]] = {}
    for a in accounts:
        kids.setdefault(a.parent, []).append(a)
    out = {root: 1.0}
    stack = [root]
    while stack:
        parent = stack.pop()
        children = sorted(kids.get(parent, []))
        total = sum(c.fairshare for c in children)
        for c in children:
            out[c.name] = out[parent] * c.fairshare / total
            stack.append(c.name)
    return out


def gpu_quotas(accounts: Iterable[AccountSpec], root: str, gpus: int) -> dict[str, float]:
    """GPUs each account is guaranteed at once: leaves rounded, parents the sum of children."""
    accs = tuple(accounts)
    shares = absolute_shares(accs, root)
    parents = {a.parent for a in accs}
    quota = {n: round(s * gpus, 2) for n, s in shares.items() if n not in parents}
    for name in sorted(shares, key=lambda n: -_depth(n, accs)):
        if name in parents:
            quota[name] = round(sum(quota[a.name] for a in accs if a.parent == name), 2)
    return quota


def _depth(name: str, accounts: tuple[AccountSpec, ...]) -> int:
    parent = {a.name: a.parent for a in accounts}
    d = 0
    while name in parent:
        name, d = parent[name], d + 1
    return d


def tree_quotas(accounts: Iterable[AccountSpec], gpus: int) -> dict[str, float]:
    """``gpu_quotas`` for every tree hanging from the backend's anchor (``SLURM_ROOT``)."""
    accs = tuple(a for a in accounts if a.name != SLURM_ROOT)
    out: dict[str, float] = {}
    for root in sorted(a.name for a in accs if a.parent == SLURM_ROOT):
        out |= gpu_quotas(accs, root, gpus)
    return out
