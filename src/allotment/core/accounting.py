"""Running GPUs counted the ways the rules need them: allocated GPUs per account (tiers,
reclaim), allocated GPUs per tree node (``max_gpus`` caps), GPUs per (account, user) (user
fairness), and the *preemptible* indices -- running jobs past their protection, by class and
node -- that bound a victim search before it looks at single jobs.
"""

from __future__ import annotations

from allotment.core.context import Context
from allotment.core.ids import AccountId, Names, TreeNodeId, UserGpus
from allotment.core.state import Run


class Cap:
    """A ``max_gpus`` on an account's path: the tree node (by id) and its limit."""

    __slots__ = ("limit", "node")

    def __init__(self, node: TreeNodeId, limit: int) -> None:
        self.node, self.limit = node, limit


class Accounting:
    def __init__(self, ctx: Context, n_nodes: int) -> None:
        self.alloc_gpus: dict[str, int] = dict.fromkeys(ctx.leaves, 0)  # charged GPUs running
        self.user_gpus = UserGpus()  # by (account, user) id (core.ids)
        # by account id (core.ids; the funded leaves first): the tree nodes on its path, the caps
        # on them, and a version bumped when its users' GPUs change (core.candidates)
        self.accounts = Names(ctx.leaves)
        self.tree = Names(ctx.tree)
        self.tree_running: list[int] = [0] * len(self.tree.names)  # charged GPUs per tree node id
        self.path_of: list[tuple[TreeNodeId, ...]] = []
        self.caps_of: list[tuple[Cap, ...]] = []
        self.user_version: list[int] = []
        self._paths, self._caps = ctx.paths, {n: t.max_gpus for n, t in ctx.tree.items() if t.max_gpus is not None}
        for name in self.accounts.names:
            self._account_added(name)
        # running jobs past their protection (insertion-ordered sets)
        self.preemptible: dict[str, None] = {}
        self.unalloc: dict[str, None] = {}  # ... of unallocated work
        self.unalloc_gpus = 0
        self.alloc: dict[str, dict[str, None]] = {}  # account -> allocated ones
        self.alloc_gpus_pre: dict[str, int] = {}  # account -> their GPUs
        self.alloc_gpus_pre_total = 0
        # account -> declared priority -> how many of its preemptible allocated jobs have it: the
        # lowest is what the victim search's bound reads (``victims._lowest_declared``), kept here
        # rather than recomputed per search over every such job (264 M instructions of a
        # Philly-shaped 27-day run, stop 44)
        self.alloc_declared: dict[str, dict[int, int]] = {}
        # owner ("" for unallocated work) -> node -> its preemptible GPUs there, to bound a
        # search per node (a search for a few owners visits only their nodes)
        self.owner_nodes: dict[str, dict[int, int]] = {}
        # node -> the preemptible GPUs there, whoever owns them (the sum of owner_nodes's)
        self.pre_on_node: list[int] = [0] * n_nodes
        # node -> preemptible GPUs of jobs that yield to a reservation (``Run.yields``)
        self.yield_nodes: dict[int, int] = {}
        self.yield_gpus = 0

    def account_id(self, account: str) -> AccountId:
        """The account's id, given (with an empty path if the tree does not fund it) on first sight."""
        aid = self.accounts.id_of(account)
        if aid == len(self.path_of):
            self._account_added(account)
        return AccountId(aid)

    def _account_added(self, account: str) -> None:
        path = tuple(TreeNodeId(self.tree.id_of(n)) for n in self._paths.get(account, ()))
        self.path_of.append(path)
        names = self._paths.get(account, ())
        self.caps_of.append(tuple(Cap(i, self._caps[n]) for i, n in zip(path, names, strict=True) if n in self._caps))
        self.user_version.append(0)

    def tree_gpus(self, node: str) -> int:
        """Charged GPUs running under tree node ``node`` (by name: for the edges and tests)."""
        return self.tree_running[self.tree.id_of(node)]

    def ceiling(self, account: str) -> int | None:
        """The tightest max_gpus on ``account``'s path (None: uncapped)."""
        capped = self.caps_of[self.account_id(account)]
        return min(c.limit for c in capped) if capped else None

    def cap_excess(self, account: str, gpus: int) -> int:
        """GPUs that must stop under ``account``'s caps before ``gpus`` more can run there
        (0 or less: they fit now).  A plain loop: under mypyc ``max`` over a generator is a
        generic call and a generator object per call (2% of a compiled run)."""
        capped = self.caps_of[self.account_id(account)]
        if not capped:
            return 0
        tree = self.tree_running
        best = tree[capped[0].node] + gpus - capped[0].limit
        for c in capped:
            e = tree[c.node] + gpus - c.limit
            if e > best:
                best = e
        return best

    def fits_caps(self, account: str, gpus: int) -> bool:
        return self.fits_caps_of(self.account_id(account), gpus)

    def fits_caps_of(self, aid: AccountId, gpus: int) -> bool:
        """``fits_caps`` by the account's id (the pass's, per candidate)."""
        tree = self.tree_running
        for c in self.caps_of[aid]:  # noqa: SIM110 - a loop, not all() over a generator (see cap_excess)
            if tree[c.node] + gpus > c.limit:
                return False
        return True

    def fits_caps_over(self, aid: AccountId, gpus: int, over: int) -> bool:
        """Would ``gpus`` more fit every cap on the account's path with ``over`` GPUs beyond
        each (``core.debug_overdraft``)?"""
        tree = self.tree_running
        for c in self.caps_of[aid]:  # noqa: SIM110 - a loop, not all() over a generator (see cap_excess)
            if tree[c.node] + gpus > c.limit + over:
                return False
        return True

    def started(self, r: Run) -> None:
        if r.aid < 0:
            r.aid = self.account_id(r.account)
        if r.allocated:
            if r.account in self.alloc_gpus:
                self.alloc_gpus[r.account] += r.gpus
            for n in self.path_of[r.aid]:
                self.tree_running[n] += r.gpus
        if r.uid < 0:
            r.uid = self.user_gpus.id_of(r.account, r.spec.user)
        self.user_gpus.gpus[r.uid] += r.gpus
        self.user_version[r.aid] += 1

    def stopped(self, r: Run) -> None:
        if r.allocated:
            if r.account in self.alloc_gpus:
                self.alloc_gpus[r.account] -= r.gpus
            for n in self.path_of[r.aid]:
                self.tree_running[n] -= r.gpus
        self.user_gpus.gpus[r.uid] -= r.gpus
        self.user_version[r.aid] += 1
        if self.preemptible.pop(r.jid, 0) is None:
            owner = r.account if r.allocated else ""
            mine = self.owner_nodes[owner]
            on = self.pre_on_node
            for i, g in r.placement:
                on[i] -= g
                mine[i] -= g
                if not mine[i]:
                    del mine[i]
            if r.allocated:
                del self.alloc[r.account][r.jid]
                _count_out(self.alloc_declared[r.account], r.declared)
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
        on = self.pre_on_node
        for i, g in r.placement:
            on[i] += g
            mine[i] = mine.get(i, 0) + g
        if r.allocated:
            self.alloc.setdefault(r.account, {})[r.jid] = None
            counts = self.alloc_declared.setdefault(r.account, {})
            counts[r.declared] = counts.get(r.declared, 0) + 1
            self.alloc_gpus_pre[r.account] = self.alloc_gpus_pre.get(r.account, 0) + r.gpus
            self.alloc_gpus_pre_total += r.gpus
            if r.yields:
                self._add_yield(r, 1)
        else:
            self.unalloc[r.jid] = None
            self.unalloc_gpus += r.gpus

    def redeclare(self, r: Run, declared: int) -> None:
        """``r``'s effective declared priority becomes ``declared`` (a same-team dependant came or
        went: ``core.cluster.ClusterState.dependants_changed``); its team's count of preemptible allocated
        jobs by declared priority moves with it."""
        if r.allocated and r.jid in self.preemptible:
            counts = self.alloc_declared[r.account]
            _count_out(counts, r.declared)
            counts[declared] = counts.get(declared, 0) + 1
        r.declared = declared

    def lowest_declared(self, account: str, none: int) -> int:
        """The lowest declared priority among ``account``'s preemptible allocated jobs (``none``
        if it has none).  A loop over the few priorities present, not ``min`` over a generator
        (generic under mypyc)."""
        counts = self.alloc_declared.get(account)
        out = none
        if counts:
            for d in counts:
                if d < out:
                    out = d
        return out

    def _add_yield(self, r: Run, sign: int) -> None:
        self.yield_gpus += sign * r.gpus
        for i, g in r.placement:
            got = self.yield_nodes.get(i, 0) + sign * g
            if got:
                self.yield_nodes[i] = got
            else:
                del self.yield_nodes[i]


def _count_out(counts: dict[int, int], declared: int) -> None:
    """One job fewer at ``declared`` (a count that reaches 0 leaves the map: ``lowest_declared``
    reads its keys)."""
    left = counts[declared] - 1
    if left:
        counts[declared] = left
    else:
        del counts[declared]
