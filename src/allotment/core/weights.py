"""The within-team score's weights as the hot loop reads them (``core.priority.Scorer``).

``PriorityWeights`` (``compile.model``) is an interpreted dataclass: under mypyc every read of
one of its fields is a generic attribute lookup, and a scorer read five per construction and four
per job scored (about 0.6 G instructions over a 30-day run).  ``ScoreWeights`` copies them into a
compiled record once per scheduler; ``source`` is the object they were read from, which the score
memos compare by identity.
"""

from __future__ import annotations

from allotment.compile.model import PriorityWeights, WithinTeamMode


class ScoreWeights:
    """Read-only by convention; a plain slotted class (see ``preemption.retry.SearchState``)."""

    __slots__ = ("age", "age_cap", "age_div", "deadline", "declared", "dependencies", "fairness", "fit", "mode",
                 "short", "source")

    def __init__(self, w: PriorityWeights) -> None:
        self.source = w
        self.declared: float = w.declared
        self.deadline: float = w.deadline
        self.age: float = w.age
        self.fairness: float = w.fairness
        self.fit: float = w.fit
        self.age_cap = float(w.age_cap_s)
        self.age_div = max(1.0, self.age_cap)
        # the derivation and the dependency knobs, which every Scorer reads at construction
        # (a generic read each from the interpreted dataclass: 15,574 scorers in 3 days of
        # ``ai2-big-gangs``, stop 48)
        self.mode: WithinTeamMode = w.mode
        self.dependencies = bool(w.dependencies)
        self.short = float(w.short_prerequisite)
