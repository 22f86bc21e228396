"""One job's same-team dependants (``core.priority.dependants``), sharing its chain's tail.

Along a chain of runs (each waiting for the one before) a job's dependants are its successor
followed by the successor's own: held as tuples, a chain of L runs cost L^2/2 slots -- 15
million at 90 days of ``ai2``, 114 MiB, growing faster than the days (issue 27, item 4).  A
``DependantList`` is either that pair (the first dependant and the list it is followed by, one
slot a job) or, where dependants join, a plain sorted tuple: the same jobs in the same order as
the tuple ``dependants_by_search`` gives (``tests/core/test_priority.py`` compares them), read
by iteration, ``len`` and truth, and the memos that key on it compare it by identity.
"""

from __future__ import annotations

from collections.abc import Iterator

from allotment.core.jobs import JobSpec

__all__ = ["DependantList"]


class DependantList:
    """The dependants of one job, sorted by id: ``first`` then every job of ``rest``, or
    ``flat`` (``first`` None)."""

    __slots__ = ("first", "flat", "grew", "n", "rest")

    def __init__(self, flat: tuple[JobSpec, ...] = (), first: JobSpec | None = None,
                 rest: DependantList | None = None) -> None:
        self.flat = flat
        self.first = first
        self.rest = rest
        self.n: int = len(flat) if first is None else 1 + (0 if rest is None else len(rest))
        # the list this one is, but for one job added after all of them along a chain (the
        # simulator's dependency pass sets it when a run joins the end of a waiting chain), and
        # that job: what was merged for the old list extends by one job (``core.inherited``)
        # instead of being merged again along the whole chain.  Only the last step is kept
        # (``grown``), so a chain's lists never hold their history alive.
        self.grew: tuple[DependantList, JobSpec] | None = None

    @staticmethod
    def before(first: JobSpec, rest: DependantList | None) -> DependantList:
        """``first`` followed by ``rest`` (its id must sort before all of ``rest``'s)."""
        return DependantList((), first, rest)

    def grown(self, old: DependantList, added: JobSpec) -> None:
        """Say this list is ``old`` with ``added`` after all of its jobs along the chain (the
        caller's claim: ``sim.known_dependencies`` makes it only when that holds)."""
        old.grew = None
        self.grew = (old, added)

    def first_id(self) -> str:
        first = self.first
        return first.id if first is not None else self.flat[0].id

    def __len__(self) -> int:
        return self.n

    def __bool__(self) -> bool:
        return self.n > 0

    def __iter__(self) -> Iterator[JobSpec]:
        return iter(self.specs())

    def specs(self) -> tuple[JobSpec, ...]:
        """The jobs as a tuple: ``flat`` itself, or a chain's walked (a loop, not a generator:
        the array path extends its lists with every dependant of a queue, pass after pass)."""
        if self.first is None:
            return self.flat
        out: list[JobSpec] = []
        node: DependantList | None = self
        while node is not None:
            first = node.first
            if first is None:
                out.extend(node.flat)
                break
            out.append(first)
            node = node.rest
        return tuple(out)

    def __eq__(self, other: object) -> bool:
        """The same jobs in the same order (a tuple of them is equal too: the plain form)."""
        if isinstance(other, DependantList):
            return self.specs() == other.specs()
        if isinstance(other, tuple):
            return self.specs() == other
        return NotImplemented

    def __repr__(self) -> str:
        return f"DependantList({[s.id for s in self]!r})"
