"""Dense integer ids for the names the hot loops look up per job and per queue, assigned once per
run in the order names are first seen, with each id's values in lists indexed by it.

Why: a pass looks a job's user, account and queue up a few million times a day of simulated
time; a string or tuple key is hashed and compared on each lookup (a tuple's hash is not even
kept), an int indexes a list.  The names stay at the edges: events, snapshots, explain and
``decide`` see names, and every table maps an id back to its name.  An id never changes what is
decided: it is only ever an index, never compared or sorted by (orders still end in names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NewType

UserId = NewType("UserId", int)  # one (account, user) pair: user fairness is within a team
NO_USER = UserId(-1)  # a job not yet given its id (``Scorer`` then looks its pair up by name)


class UserGpus:
    """Running GPUs per (account, user) pair, by the pair's id.  ``gpus`` is as long as there are
    ids: a pair seen without running work reads 0."""

    __slots__ = ("gpus", "ids", "names")

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str], UserId] = {}
        self.names: list[tuple[str, str]] = []  # id -> (account, user)
        self.gpus: list[int] = []

    @classmethod
    def of(cls, running: Mapping[tuple[str, str], int]) -> UserGpus:
        """A table holding ``running`` GPUs per (account, user) (for callers at the edges:
        explain, tests)."""
        out = cls()
        for (account, user), g in running.items():
            out.set(account, user, g)
        return out

    def id_of(self, account: str, user: str) -> UserId:
        """The pair's id, given on first sight."""
        k = (account, user)
        got = self.ids.get(k)
        if got is None:
            got = self.ids[k] = UserId(len(self.names))
            self.names.append(k)
            self.gpus.append(0)
        return got

    def set(self, account: str, user: str, gpus: int) -> None:
        self.gpus[self.id_of(account, user)] = gpus

    def running(self, account: str, user: str) -> int:
        """The pair's running GPUs, by name (for the edges; the hot loops index ``gpus``)."""
        got = self.ids.get((account, user))
        return 0 if got is None else self.gpus[got]


AccountId = NewType("AccountId", int)  # one account (a leaf of the tree, or one the tree does not fund)
TreeNodeId = NewType("TreeNodeId", int)  # one node of the budget tree
NO_ACCOUNT = AccountId(-1)  # not given yet, or a queue of many accounts (the baselines' one queue)


class Names:
    """Names <-> dense ids: ``known`` first, in their order, then others on first sight."""

    __slots__ = ("ids", "names")

    def __init__(self, known: Iterable[str] = ()) -> None:
        self.ids: dict[str, int] = {}
        self.names: list[str] = []
        for name in known:
            self.id_of(name)

    def id_of(self, name: str) -> int:
        got = self.ids.get(name)
        if got is None:
            got = self.ids[name] = len(self.names)
            self.names.append(name)
        return got
