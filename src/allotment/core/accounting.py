"""Running GPUs counted the ways the rules need them: allocated GPUs per account (tiers,
reclaim), allocated GPUs per tree node (``max_gpus`` caps), GPUs per (account, user) (user
fairness), and the *preemptible* indices -- running jobs past their protection, by class and
node -- that bound a victim search before it looks at single jobs.
"""

from __future__ import annotations

from allotment.core.context import Context
from allotment.core.ids import UserGpus
from allotment.core.state import Run


class Accounting:
    def __init__(self, ctx: Context, n_nodes: int) -> None:
        self.alloc_gpus: dict[str, int] = dict.fromkeys(ctx.leaves, 0)  # charged GPUs running
        self.tree_gpus: dict[str, int] = dict.fromkeys(ctx.tree, 0)  # charged GPUs per tree node
        self.user_gpus = UserGpus()  # by (account, user) id (core.ids)
        self.user_version: dict[str, int] = {}  # per account, bumped when its users' GPUs change (core.candidates)
        self.paths = ctx.paths
        caps = {n: t.max_gpus for n, t in ctx.tree.items() if t.max_gpus is not None}
        self.cap_path: dict[str, tuple[tuple[str, int], ...]] = {
            leaf: tuple((n, caps[n]) for n in path if n in caps) for leaf, path in ctx.paths.items()
        }
        # running jobs past their protection (insertion-ordered sets)
        self.preemptible: dict[str, None] = {}
        self.unalloc: dict[str, None] = {}  # ... of unallocated work
        self.unalloc_gpus = 0
        self.alloc: dict[str, dict[str, None]] = {}  # account -> allocated ones
        self.alloc_gpus_pre: dict[str, int] = {}  # account -> their GPUs
        self.alloc_gpus_pre_total = 0
        # owner ("" for unallocated work) -> node -> its preemptible GPUs there, to bound a
        # search per node (a search for a few owners visits only their nodes)
        self.owner_nodes: dict[str, dict[int, int]] = {}
        # node -> preemptible GPUs of jobs that yield to a reservation (``Run.yields``)
        self.yield_nodes: dict[int, int] = {}
        self.yield_gpus = 0

    def ceiling(self, account: str) -> int | None:
        """The tightest max_gpus on ``account``'s path (None: uncapped)."""
        capped = self.cap_path.get(account, ())
        return min(cap for _, cap in capped) if capped else None

    def cap_excess(self, account: str, gpus: int) -> int:
        """GPUs that must stop under ``account``'s caps before ``gpus`` more can run there
        (0 or less: they fit now).  A plain loop: under mypyc ``max`` over a generator is a
        generic call and a generator object per call (2% of a compiled run)."""
        capped = self.cap_path.get(account)
        if not capped:
            return 0
        tree = self.tree_gpus
        best = tree[capped[0][0]] + gpus - capped[0][1]
        for n, cap in capped:
            e = tree[n] + gpus - cap
            if e > best:
                best = e
        return best

    def fits_caps(self, account: str, gpus: int) -> bool:
        capped = self.cap_path.get(account)
        if not capped:
            return True
        tree = self.tree_gpus
        for n, cap in capped:  # noqa: SIM110 - a loop, not all() over a generator (see cap_excess)
            if tree[n] + gpus > cap:
                return False
        return True

    def started(self, r: Run) -> None:
        if r.allocated:
            if r.account in self.alloc_gpus:
                self.alloc_gpus[r.account] += r.gpus
            for n in self.paths.get(r.account, ()):
                self.tree_gpus[n] += r.gpus
        if r.uid < 0:
            r.uid = self.user_gpus.id_of(r.account, r.spec.user)
        self.user_gpus.gpus[r.uid] += r.gpus
        self.user_version[r.account] = self.user_version.get(r.account, 0) + 1

    def stopped(self, r: Run) -> None:
        if r.allocated:
            if r.account in self.alloc_gpus:
                self.alloc_gpus[r.account] -= r.gpus
            for n in self.paths.get(r.account, ()):
                self.tree_gpus[n] -= r.gpus
        self.user_gpus.gpus[r.uid] -= r.gpus
        self.user_version[r.account] = self.user_version.get(r.account, 0) + 1
        if self.preemptible.pop(r.jid, 0) is None:
            owner = r.account if r.allocated else ""
            mine = self.owner_nodes[owner]
            for i, g in r.placement:
                mine[i] -= g
                if not mine[i]:
                    del mine[i]
            if r.allocated:
                del self.alloc[r.account][r.jid]
                self.alloc_gpus_pre[r.account] -= r.gpus
                self.alloc_gpus_pre_total -= r.gpus
                if r.yields:
                    self._add_yield(r, -1)
            else:
                del self.unalloc[r.jid]
                self.unalloc_gpus -= r.gpus

    def mark_preemptible(self, r: Run) -> None:
        if r.jid in self.preemptible:
            return
        self.preemptible[r.jid] = None
        owner = r.account if r.allocated else ""
        mine = self.owner_nodes.setdefault(owner, {})
        for i, g in r.placement:
            mine[i] = mine.get(i, 0) + g
        if r.allocated:
            self.alloc.setdefault(r.account, {})[r.jid] = None
            self.alloc_gpus_pre[r.account] = self.alloc_gpus_pre.get(r.account, 0) + r.gpus
            self.alloc_gpus_pre_total += r.gpus
            if r.yields:
                self._add_yield(r, 1)
        else:
            self.unalloc[r.jid] = None
            self.unalloc_gpus += r.gpus

    def _add_yield(self, r: Run, sign: int) -> None:
        self.yield_gpus += sign * r.gpus
        for i, g in r.placement:
            got = self.yield_nodes.get(i, 0) + sign * g
            if got:
                self.yield_nodes[i] = got
            else:
                del self.yield_nodes[i]
