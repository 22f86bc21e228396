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
donors also needs the donors of now to be among those it read (``Failure.donors``: an account
that turns donor makes its preemptible work takeable on every node it holds at once; one that
stops being a donor only takes work away), and is kept into new pass inputs on that test --
within one set of inputs, ``ClusterState.donor_growth`` unchanged spares computing the donors
(stop 45: 35,000 of the Philly-shaped 54-day cut's searches were such failures searched again
after new inputs, which move every account's measure a little and seldom its donor set).  A ``bare``
failure (no reclaim could pass the distance check, and the requester's own and unallocated work
could not free ``n`` nodes: ``victims._without_reclaim``) is kept across states and pass inputs
too: ``victims.still_bare`` asks the proof again on the accounting as it is and re-reads the
grown nodes for that work alone (stop 43: 30,000 of the 71,000 searches of the Philly-shaped
27-day cut were such failures, each redone after every start).  Starts grow nothing: they turn free
GPUs into the new job's, which no search can take more of than it could take of them free.  In a
busy pass most rounds differ from the last only by starts and by stops on nodes the blocked jobs
cannot use, and every blocked candidate would otherwise search again after each one.
"""

from __future__ import annotations

from typing import TypeVar

from allotment.core.preemption.kept_pick import KeptPick
from allotment.core.preemption.terms import Donor
from allotment.core.preemption.view import NoVictims
from allotment.core.state import Pend

_FORGET_AT = 1 << 16  # a NodeLog longer than this is dropped (its readers then search again)
_NOTHING: list[int] = []  # nothing grew (callers only read it)
K = TypeVar("K", str, int)  # a failure table's key: a job id, or a shape id
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


class Failure:
    """A remembered failure (a plain class for the reason ``SearchState`` is one): of the search
    for ``job`` that kept off the reserved nodes ``held`` and may or may not take yielding jobs
    (``reserve``); ``job`` None: of any job with the same shape key."""

    __slots__ = ("at", "donors", "held", "job", "pick", "reserve", "why")

    def __init__(self, job: Pend | None, at: SearchState, why: NoVictims, held: frozenset[int] | None = None,
                 reserve: bool = False, pick: KeptPick | None = None, donors: dict[str, Donor] | None = None) -> None:
        self.job = job  # None: the answer holds for any job with the same key
        self.at = at
        self.why = why
        self.held = held
        self.reserve = reserve
        self.pick = pick  # a pick that failed the distance check (``kept_pick``), if that was why
        # a lasting failure that read donors (``why.reclaim``): the donors whose work it counted
        # (the search's ``Terms.donors``, read only); it holds while the donors of now are among
        # them (``victims.still_fails``).  None: it holds only while ``donor_growth`` is unchanged
        # within the same pass inputs
        self.donors = donors


class FailedSearches:
    """Failed searches: a job's by its id, then by the reserved nodes it kept off and whether it
    could take yielding jobs (``find``: a few per job, scanned -- an id is a string whose hash is
    kept, where a tuple key was hashed and compared element by element on every lookup: 7% of a
    busy compiled run); searches that read nothing of the job but its shape by that shape's id
    (``Pend.shape``), then by the reserved nodes (``find_shape``; the shape as a tuple key was
    hashed anew on every one of 1.3 M lookups in a 30-day run).  ``log`` is the state's ``NodeLog``.  When the pass inputs change, a
    lasting failure that read no donors is kept for one more set of inputs (it read nothing of
    them: what each account is owed only through whether the requester may reclaim, which
    ``victims.still_fails`` reads again, and the usage only through the donors), and so is a bare
    one (``victims.still_bare`` asks its proof again with the inputs of the day); every other
    one is forgotten.  So is a lasting one that read donors and keeps them (``Failure.donors``:
    it is kept while the donors of the day are among them)."""

    def __init__(self, log: NodeLog) -> None:
        self._jobs: dict[str, list[Failure]] = {}
        self._shapes: dict[int, list[Failure]] = {}
        self._inputs = -1
        self._log = log

    def find(self, jid: str, held: frozenset[int] | None, reserve: bool) -> Failure | None:
        """The failure remembered for ``jid``'s search with these terms, if any."""
        return _find(self._jobs.get(jid), held, reserve)

    def entries(self) -> list[Failure]:
        """Every failure remembered (what a test compares to see a search answered, not redone)."""
        out = [f for got in self._jobs.values() for f in got]
        out.extend(f for got in self._shapes.values() for f in got)
        return out

    def find_shape(self, shape: int, held: frozenset[int] | None) -> Failure | None:
        """The failure remembered for a search of unallocated work, off the reserved nodes
        ``held``, by a job of the shape with id ``shape``."""
        return _find(self._shapes.get(shape), held, False)

    def grown_since(self, f: Failure | None, job: Pend | None, inputs: int, grown: int, donor_growth: int, version: int,
                    queued: int, now: float, queue: tuple[int, int, str]) -> list[int] | None:
        """If this very search failed (``f``, from ``find``) and that answer may still hold now
        (the state's ``SearchState`` fields, passed one by one: this runs for every search the
        walk would make, most of them answered here), the nodes that grew since (empty: it
        holds as it is; else it holds if ``victims.still_fails`` says so for them, with
        ``f.why``); None: search."""
        if f is None or f.job is not job:
            return None
        why, was = f.why, f.at
        same = was.inputs == inputs
        if same and was.version == version and was.queued == queued and was.now == now and was.queue == queue:
            return _NOTHING
        if not why.lasting or (why.reclaim and f.donors is None and (not same or was.donor_growth != donor_growth)):
            return None  # (a bare failure is not lasting: it is asked again through ``bare_grown``)
        if was.grown == grown:
            return _NOTHING
        nodes = self._log.since(was.grown)
        return None if nodes is None or len(nodes) > _MOST else nodes

    def donors_to_check(self, f: Failure, inputs: int, donor_growth: int) -> dict[str, Donor] | None:
        """For a lasting failure ``grown_since`` let through, the donors the donors of now must be
        among (``victims.still_fails``'s ``within``), when they may differ from the failure's: it
        read donors, and the pass inputs or ``donor_growth`` moved since; None: no such test."""
        was = f.at
        if f.why.reclaim and (was.inputs != inputs or was.donor_growth != donor_growth):
            return f.donors
        return None

    def bare_grown(self, f: Failure, job: Pend) -> list[int] | None:
        """For a bare failure (``NoVictims.bare``) of this very job, remembered on any earlier
        state and pass inputs, the nodes that grew since (with repeats; empty: none), which
        ``victims.still_bare`` reads with the proof asked again; None: search."""
        if f.job is not job:
            return None
        nodes = self._log.since(f.at.grown)
        return None if nodes is None or len(nodes) > _MOST else nodes

    def remember(self, jid: str, held: frozenset[int] | None, reserve: bool, job: Pend, at: SearchState,
                 why: NoVictims, pick: KeptPick | None = None, donors: dict[str, Donor] | None = None) -> None:
        """Remember that ``job``'s search (``find``'s terms) failed with ``why`` on state ``at``
        (``pick``: having picked victims that fail the distance check; ``donors``: a lasting
        failure's, ``Failure.donors``)."""
        self._new_inputs(at.inputs)
        _put(self._jobs, jid, Failure(job, at, why, held, reserve, pick, donors))

    def remember_shape(self, shape: int, held: frozenset[int] | None, at: SearchState, why: NoVictims) -> None:
        """Remember that a search of unallocated work for the shape with id ``shape``, off the
        reserved nodes ``held``, failed."""
        self._new_inputs(at.inputs)
        _put(self._shapes, shape, Failure(None, at, why, held))

    def _new_inputs(self, inputs: int) -> None:
        if inputs == self._inputs:
            return
        last = self._inputs  # new inputs: keep what the last ones proved and does not read them
        self._jobs = _kept(self._jobs, last)
        self._shapes = _kept(self._shapes, last)
        self._inputs = inputs


def _find(got: list[Failure] | None, held: frozenset[int] | None, reserve: bool) -> Failure | None:
    """The failure among ``got`` (one key's) for a search with these terms, if any."""
    if got is not None:
        for f in got:
            if f.reserve == reserve and same_nodes(f.held, held):
                return f
    return None


def _put(table: dict[K, list[Failure]], key: K, f: Failure) -> None:
    """Remember ``f`` under ``key``, in place of one for the same terms."""
    got = table.get(key)
    if got is None:
        table[key] = [f]
        return
    for k, old in enumerate(got):
        if old.reserve == f.reserve and same_nodes(old.held, f.held):
            got[k] = f
            return
    got.append(f)


def _kept(table: dict[K, list[Failure]], last: int) -> dict[K, list[Failure]]:
    """``table`` with only the failures kept into new pass inputs after ``last``."""
    out: dict[K, list[Failure]] = {}
    for key, got in table.items():
        kept = [f for f in got if _keeps(f, last)]
        if kept:
            out[key] = kept
    return out


def same_nodes(a: frozenset[int] | None, b: frozenset[int] | None) -> bool:
    """Are two searches' reserved node sets (None: none) the same?  By identity first: the fast
    walk plans each set once (``Scheduler._plan_hold``), so equal sets are mostly one object.
    Then by size and hash, read natively (a frozenset keeps its hash once computed; equal sets
    have equal hashes): of the distinct sets compared in a day of ``ai2-big-gangs``, none was
    equal, two thirds differed in size and the rest in content, and the generic ``==`` was 115 M
    instructions in 3 days (stop 48, docs/benchmarks.md)."""
    if a is b:
        return True
    if a is None or b is None or len(a) != len(b) or hash(a) != hash(b):
        return False
    return a == b


def _keeps(f: Failure, last: int) -> bool:
    """Is ``f`` kept into new pass inputs after ``last``?"""
    return f.at.inputs == last and (f.why.bare or (f.why.lasting and (not f.why.reclaim or f.donors is not None)))
