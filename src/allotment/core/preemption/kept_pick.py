"""A gang's failed pick, kept within one pass (the fast walk only; ``victims.still_picks``).

Why: on a Philly-shaped trace most victim searches left after the bare failures are kept
(``NoVictims.bare``) pick ``n`` nodes, take their cheapest victims and fail the summed-distance
check (``victims._lowers_distance``): 25,700 of the 27-day cut's searches, 22,600 of them the same
job's same pick again in the same pass, after other jobs started elsewhere.  Each redoes the
whole search (every host's jobs classified and sorted: half the victim search's instructions).

What the answer reads: the ``n`` best options (``victims._options``: per node, the worst class,
the larger gangs it breaks under ``gang_sparing`` -- their placement and GPUs, fixed for a run --
and lost work of the victims that free it) and, for the pick, the accounting of the accounts it
moves.  An option reads its node's free GPUs and jobs, each job's classification (its account's
donor excess, the requester's terms, ``VictimView.t``, its protection), and nothing of other
nodes.  So while the pass inputs (``t``, what is owed, the measures) and the requester's debug
end (``Starting.debug_end``: all a search reads of ``now``) are the same, and the requester's
terms and the accounts the pick moves too, a node has the option it had unless a job started or
stopped there or its health changed (``ClusterState.touched``), a protection ended there
(``ClusterState.grown``), or a donor whose excess changed (or that turned donor, or stopped
being one) holds preemptible work there (``Accounting.owner_nodes``).  ``still_picks`` reads
those nodes: if none is chosen and the option each has now is worse than the worst chosen
(``worst``), the same victims are picked and fail the same check.  The reference walk
(``--no-skip``) searches every time.
"""

from __future__ import annotations


class KeptPick:
    """What a search that picked victims and failed the distance check read (a plain slotted
    class; read-only by convention)."""

    __slots__ = ("allocs", "debug_end", "donors", "grown", "inputs", "nodes", "own", "reserve", "touched", "worst")

    def __init__(self, nodes: frozenset[int], worst: tuple[int, int, float, int],
                 donors: list[tuple[str, float]], allocs: list[tuple[str, int]], own: bool, reserve: bool) -> None:
        self.nodes = nodes  # the chosen nodes
        self.worst = worst  # the worst chosen option's key: (worst class, gang GPUs broken, lost work, node)
        self.donors = donors  # (account, GPUs over what it is owed) of each donor
        self.allocs = allocs  # (account, allocated GPUs) of the requester and each victim's account
        self.own = own  # the search's terms: its own team's work, jobs that yield to a reservation
        self.reserve = reserve
        # the state it was made on (set by the caller, ``Starting``): pass inputs, a debug job's
        # end if it started now (the one thing of the time a search reads besides the epoch),
        # marks of ClusterState.touched and ClusterState.grown
        self.inputs = -1
        self.debug_end: float | None = None
        self.touched = -1
        self.grown = -1
