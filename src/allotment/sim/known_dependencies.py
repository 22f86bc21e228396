"""The dependency pass over the jobs the scheduler knows: submitted and not gone.

Why.  A prerequisite inherits urgency from its same-team dependants and its declared priority
is raised to theirs (``core.priority.dependency_pass``).  The reconciler's ``decide()`` reads
them from its snapshot -- the running, pending and waiting jobs of that tick: a job it has not
been sent yet lends nothing.  The simulator used to run the pass once over the whole workload,
so a job inherited from dependants submitted days later (in ``ai2`` all but 35 of 9,830 edges
point at a job submitted after its prerequisite): decisions ``decide()`` would not take at the
same state (``tests/sim/test_walk_equivalence.py`` had to leave dependencies out), and the cost
of scoring a waiting run grew with the tail of its stream still to come, so with the run's
length (the first 7 days of a 90-day ``ai2`` draw cost about 1.7x those of a 7-day draw).

How.  The known jobs' same-team edges are kept as an undirected graph; a job's arrival or end
marks the component it touches, and before a pass each marked component is passed through
``dependency_pass`` again -- the same function ``decide()`` calls, on the same jobs, so the
same dependants and the same declared priorities.  A component holds the known members of one
stream or pipeline.  The map the scheduler reads is one ``dict`` for the whole run, changed in
place between passes, entry by entry: a new map at each change (the first version) made every
memo keyed on it start again -- each queue's kept order, each prerequisite's merged dependants --
and a 30-day ``ai2`` run took 6.5x the CPU, since its waiting chains grow through the run.  So
the core's memos check an entry's own list by identity (``core.inherited``), and the runner
makes each queued job of a changed component anew (``ClusterState.dependants_changed``), which moves its
queue's version, as an arrival does.

Most changes are a run joining the end of its stream's waiting chain.  Then every job of the
chain keeps its dependants and gains that run (``_joined_the_end``), and its new list says so
(``DependantList.grown``): the core extends the chain head's merged parts by one job instead of
merging them again along the whole chain, whose length grows through a contended run.
"""

from __future__ import annotations

from allotment.core.dependant_list import DependantList
from allotment.core.jobs import JobSpec
from allotment.core.priority import dependency_pass, one_dependant


class KnownDependencies:
    """The dependants map and the raised declared priorities of the known jobs."""

    def __init__(self) -> None:
        self.known: dict[str, JobSpec] = {}  # every job submitted and not gone, as the core knows it
        self.edges: dict[str, set[str]] = {}  # known job -> its known same-team neighbours, both ways
        self.named_by: dict[str, set[str]] = {}  # an id not known -> the known jobs that name it
        self.dependants: dict[str, DependantList] = {}  # what the scheduler reads: one map, changed in place
        self.declared: dict[str, int] = {}  # known jobs whose effective declared priority is raised
        self._marked: set[str] = set()  # known jobs whose component changed since the last refresh
        self._arrived: set[str] = set()  # jobs submitted since the last refresh
        self._changed: set[str] = set()  # known jobs whose dependants may have changed since the last refresh
        self._dropped: list[str] = []  # jobs gone since the last refresh that are in the map

    def arrive(self, spec: JobSpec) -> None:
        """``spec`` is submitted: linked to its known prerequisites and to the known jobs that
        named it before it came (a dependant may be submitted first)."""
        jid = spec.id
        self.known[jid] = spec
        self._arrived.add(jid)
        for d in spec.depends_on:
            p = self.known.get(d)
            if p is None:
                self.named_by.setdefault(d, set()).add(jid)
            elif p.account == spec.account:
                self._link(d, jid)
        for w in sorted(self.named_by.pop(jid, ())):
            if self.known[w].account == spec.account:
                self._link(jid, w)

    def leave(self, jid: str) -> None:
        """``jid`` ended, was cancelled or rejected: it lends and inherits nothing any more, and
        the jobs it joined are looked at again."""
        spec = self.known.pop(jid, None)
        if spec is None:
            return
        for d in spec.depends_on:
            waiting = self.named_by.get(d)
            if waiting is not None:
                waiting.discard(jid)
                if not waiting:
                    del self.named_by[d]
        near = self.edges.pop(jid, ())
        # a job nobody known waits for (a chain's first) lends nothing and inherits what
        # nobody else does: its neighbours' lists and priorities stand (looked at, not changed)
        first = not any(n in spec.depends_on for n in near)
        for n in near:
            mine = self.edges[n]
            mine.discard(jid)
            if not mine:
                del self.edges[n]
            self._marked.add(n)
            if not first:
                self._changed.add(n)
        self._marked.discard(jid)
        self._changed.discard(jid)
        self._arrived.discard(jid)
        self.declared.pop(jid, None)
        if jid in self.dependants:
            self._dropped.append(jid)  # out of the map at the next refresh, between passes

    def refresh(self) -> list[str]:
        """Run the dependency pass again over each marked component and put its entries in the
        map, in place; the jobs of those components (for the caller to make each queued job's
        record anew -- what it inherits changed, and the core's kept orders follow a queue's
        records, not the map -- and to give a running job its declared priority).

        Two changes need no pass over the component: a run that joined the end of a chain
        (``_joined_the_end``: the chain's lists are made along it, each the one before with
        that run), and a component whose only change is that a job nobody of it waits for left
        (a first run ended: nobody's dependants or priority changed, and its lists stand)."""
        deps = self.dependants
        for j in self._dropped:
            deps.pop(j, None)
        self._dropped.clear()
        arrived, self._arrived = self._arrived, set()
        changed, self._changed = self._changed, set()
        if not self._marked:
            return []
        chains: dict[str, list[str]] = {}  # each job of a chain a run joined the end of -> the chain, from that run up
        for tail in sorted(arrived):
            if tail in self._marked and tail not in chains:
                chain = self._joined_the_end(tail, arrived, changed)
                if chain is not None:
                    for j in chain:
                        chains[j] = chain
        seen: set[str] = set()
        looked: list[str] = []
        for seed in sorted(self._marked):
            if seed in seen:
                continue
            chain = chains.get(seed)
            if chain is not None:
                comp = sorted(chain)  # the whole component (``_joined_the_end``)
                seen.update(comp)
                self._extend(chain)
                looked.extend(comp)
                continue
            comp = sorted(self._component(seed))
            seen.update(comp)
            if not any(j in arrived or j in changed for j in comp):
                looked.extend(comp)  # only a job nobody here waits for left
                continue
            graph = dependency_pass([self.known[j] for j in comp])
            for j in comp:
                new = graph.dependants.get(j)
                if new is None:
                    deps.pop(j, None)
                else:
                    deps[j] = new  # a new list: the memos that read it compare it by identity
                self._declare(j, graph.declared.get(j, self.known[j].priority))
                looked.append(j)
        self._marked.clear()
        return looked

    def _extend(self, chain: list[str]) -> None:
        """The dependency pass over ``chain`` (from the run that joined its end up to its first
        job), as ``core.priority.dependency_pass`` makes it along a chain (each job's list from
        its one dependant's: ``one_dependant``), with each list marked as the one before plus
        that run."""
        deps = self.dependants
        tail = below = self.known[chain[0]]
        after: DependantList | None = None
        eff = tail.priority
        deps.pop(tail.id, None)
        self._declare(tail.id, eff)
        for j in chain[1:]:
            new = one_dependant(below, after)
            old = deps.get(j)
            if old is not None:
                new.grown(old, tail)
            deps[j] = new
            spec = self.known[j]
            if spec.priority > eff:
                eff = spec.priority
            self._declare(j, eff)
            below, after = spec, new

    def _declare(self, jid: str, eff: int) -> None:
        if eff == self.known[jid].priority:
            self.declared.pop(jid, None)
        else:
            self.declared[jid] = eff

    def declared_of(self, spec: JobSpec) -> int:
        """``spec``'s effective declared priority as of the last refresh."""
        return self.declared.get(spec.id, spec.priority)

    def _link(self, prerequisite: str, dependant: str) -> None:
        self.edges.setdefault(prerequisite, set()).add(dependant)
        self.edges.setdefault(dependant, set()).add(prerequisite)
        self._marked.add(prerequisite)
        self._marked.add(dependant)

    def _joined_the_end(self, tail: str, arrived: set[str], changed: set[str]) -> list[str] | None:
        """``tail`` and the jobs it waits for, up to the first, if it joined the end of a chain
        and that is all that changed there since the last refresh: nobody known waits for it;
        it waits for one job, that one for one more, up to the chain's first, each waited for
        by one job only; no other job of it came, and none lost a neighbour.  Then that is its
        whole component, and every job of it has the dependants it had at the last refresh and
        ``tail``: its new list says so (``DependantList.grown``), and the core extends the merged
        parts by one job instead of merging them again along the whole chain.  None otherwise."""
        ends = self.edges.get(tail, ())
        if len(ends) != 1 or tail in changed:
            return None
        (up,) = ends
        if up not in self.known[tail].depends_on:
            return None  # its one neighbour waits for it
        chain = [tail]
        inside = {tail}
        while up not in inside:  # (a cycle is not a chain)
            if up in changed or up in arrived:
                return None
            chain.append(up)
            inside.add(up)
            spec = self.known[up]
            near = self.edges[up]
            ups = [n for n in near if n in spec.depends_on]
            if len(near) - len(ups) != 1 or len(ups) > 1:
                return None  # more than one dependant, or more than one prerequisite
            if not ups:
                return chain
            up = ups[0]
        return None

    def _component(self, seed: str) -> set[str]:
        comp = {seed}
        todo = [seed]
        while todo:
            for n in self.edges.get(todo.pop(), ()):
                if n not in comp:
                    comp.add(n)
                    todo.append(n)
        return comp

