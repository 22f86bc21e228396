"""When a victim search that found nothing need not run again: the fast walk's memo of failed
searches (``core.walk``; the reference searches every time).

A failure is reused for the same pending job (the very ``Pend``: a requeued job is a new one) --
or, for a search for unallocated work only, which reads nothing of the job but its shape, for any
job of that shape -- the same search (reservation, kind) and the same pass inputs, either on the
very same state (``ClusterState.version`` and ``queued_version``, at the same time, for the same
queue key: what the slicing rule reads) or, when the failure is ``lasting``
(``preemption.view.NoVictims``: fewer than ``n`` nodes could hold the job even if every job it may
take there went), while nothing could make it succeed.  What a lasting failure depends on is the
free and takeable GPUs node by node: ``ClusterState.grown`` (a ``NodeLog``) lists the nodes where
they may have grown -- a job stopped there (other than unallocated work a search could take: its
GPUs turn free), a job there became preemptible, its health changed -- and
``victims.still_fails`` re-reads only those nodes, with the search's terms as they are now (a
requester that turned under-served, which reads donors, searches again); a failure that read
donors also needs ``ClusterState.donor_growth`` unchanged (an account with preemptible work that
comes to run over what it is owed may turn donor, on every node it holds at once).  Starts grow nothing: they turn free
GPUs into the new job's, which no search can take more of than it could take of them free.  In a
busy pass most rounds differ from the last only by starts and by stops on nodes the blocked jobs
cannot use, and every blocked candidate would otherwise search again after each one.
"""

from __future__ import annotations

from collections.abc import Hashable

from allotment.core.preemption.view import NoVictims
from allotment.core.state import Pend

_FORGET_AT = 1 << 16  # a NodeLog longer than this is dropped (its readers then search again)
_NOTHING: list[int] = []  # nothing grew (callers only read it)
_MOST = 512  # more grown nodes than this are not re-read one by one: the search runs again


class NodeLog:
    """The nodes where something grew what a victim search could free or take, in order
    (written by ``ClusterState``; read through marks, positions in the whole log, so that the
    log can drop its past: a mark older than what it keeps reads as unknown)."""

    __slots__ = ("base", "nodes")

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.base = 0  # the mark of nodes[0]

    def mark(self) -> int:
        return self.base + len(self.nodes)

    def add(self, placement: tuple[tuple[int, int], ...]) -> None:
        if len(self.nodes) > _FORGET_AT:
            self.forget()
        for i, _ in placement:
            self.nodes.append(i)

    def add_node(self, i: int) -> None:
        self.nodes.append(i)

    def since(self, mark: int) -> list[int] | None:
        """The nodes added since ``mark`` (with repeats), or None if the log dropped some."""
        if mark < self.base:
            return None
        if mark == self.base + len(self.nodes):
            return _NOTHING
        return self.nodes[mark - self.base:]

    def forget(self) -> None:
        """Drop what the log holds: no mark made so far is read again."""
        self.base += len(self.nodes)
        self.nodes = []


class SearchState:
    """What a failed search's answer is tied to.  Read-only by convention, and a plain slotted
    class rather than a frozen dataclass: one is made per victim search, and under mypyc a
    frozen dataclass's ``__init__`` still runs as interpreted Python (it was 8% of a compiled
    run); a plain class gets a native one."""

    __slots__ = ("donor_growth", "grown", "inputs", "now", "queue", "queued", "version")

    def __init__(self, inputs: int, grown: int, donor_growth: int, version: int, queued: int, now: float,
                 queue: tuple[int, int, str]) -> None:
        self.inputs = inputs  # the scheduler's pass-inputs id (epoch, usage, capacity)
        self.grown = grown  # a mark of ClusterState.grown
        self.donor_growth = donor_growth  # ClusterState.donor_growth
        self.version = version  # ClusterState.version
        self.queued = queued  # ClusterState.queued_version (the slicing rule reads the queues ...)
        self.now = now  # ... the time (a start's end against its victims'; slicing.ends_within) ...
        self.queue = queue  # ... and the key the round visits the queue under


class _Failed:
    """A remembered failure (a plain class for the reason ``SearchState`` is one)."""

    __slots__ = ("at", "job", "why")

    def __init__(self, job: Pend | None, at: SearchState, why: NoVictims) -> None:
        self.job = job  # None: the answer holds for any job with the same key
        self.at = at
        self.why = why


class FailedSearches:
    """Failed searches by key (the caller's: a job id and tag, or a shape and tag for searches
    that read nothing else of the job); ``log`` is the state's ``NodeLog``.  When the pass inputs
    change, a lasting failure that read no donors is kept for one more set of inputs (it read
    nothing of them: what each account is owed only through whether the requester may reclaim,
    which ``victims.still_fails`` reads again, and the usage only through the donors); every
    other one is forgotten."""

    def __init__(self, log: NodeLog) -> None:
        self._by: dict[Hashable, _Failed] = {}
        self._inputs = -1
        self._log = log

    def grown_since(self, key: Hashable, job: Pend | None, inputs: int, grown: int, donor_growth: int, version: int,
                    queued: int, now: float, queue: tuple[int, int, str]) -> list[int] | None:
        """If this very search failed and that answer may still hold now (the state's
        ``SearchState`` fields, passed one by one: this runs for every search the walk would
        make, most of them answered here), the nodes that grew since (empty: it holds as it
        is; else it holds if ``victims.still_fails`` says so for them, with ``why``); None:
        search."""
        f = self._by.get(key)
        if f is None or f.job is not job:
            return None
        why, was = f.why, f.at
        same = was.inputs == inputs
        if same and was.version == version and was.queued == queued and was.now == now and was.queue == queue:
            return _NOTHING
        if not why.lasting or (why.reclaim and (not same or was.donor_growth != donor_growth)):
            return None
        if was.grown == grown:
            return _NOTHING
        nodes = self._log.since(was.grown)
        return None if nodes is None or len(nodes) > _MOST else nodes

    def why(self, key: Hashable) -> NoVictims:
        """The answer remembered for ``key`` (after ``grown_since`` found one)."""
        return self._by[key].why

    def remember(self, key: Hashable, job: Pend | None, at: SearchState, why: NoVictims) -> None:
        if at.inputs != self._inputs:  # new inputs: keep what the last ones proved and does not read them
            last = self._inputs
            self._by = {k: f for k, f in self._by.items() if f.at.inputs == last and f.why.lasting and not f.why.reclaim}
            self._inputs = at.inputs
        self._by[key] = _Failed(job, at, why)
