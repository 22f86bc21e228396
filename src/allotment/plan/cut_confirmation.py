"""Which line a team's drop is judged against: a team the change cuts is flagged when the cut
reaches its delivery at all; any other team when it loses more than ``flag_delivered_drop`` of
what it got (issue 26, item 3; docs/plan.md, "Detection, stop 38").

Why two lines.  The teams whose entitlement a pull request lowers are named by its diff before
anything is simulated, and so is the side of their expected effect: their delivery falls, or the
cut does not bind (a team that runs less than it is owed).  What a reviewer asks of such a team
is "does this cut reach it?", so its test is the one-sided "delivered fell" (the whole 90%
interval below zero), fixed in advance by the entitlement move: a confirmation, not a search
over sides or lines.  Its error, a cut flagged that does not reach the team, stays at 5%
family-wise among the cut teams (Holm, ``plan/holm.py``).  The untouched teams keep the 5%
materiality line: a flag there is an alarm nobody asked for, and its rule, p-values and Holm
family are exactly those of before, so the false-alarm rate cannot rise by this rule.  Measured
on the small tree, the 5% line detected a 10% cut of a 1.2-node team in fewer than half the
plans: its realized drop (about 7.5% of what it got) sits too near the line for five seeds.

A cut, for this rule, is a fall of the compiled entitlement by at least ``flag_delivered_drop``
of it, read from the diff before any simulation: the same materiality line, applied to the move
the pull request states.  A smaller cut (a share 50 -> 51 next to it lowers a team's entitlement
by 1%) could not make a drop beyond that line, and "its delivery fell" would then flag a change
that matters to nobody on one seed list and not on the next; such a team is judged as untouched.
So is a fall by a rounding error (doubling every share of the root moves no absolute share).

Which of the two lines judged a team is recorded with it (:class:`Judgment`, ``judge``), in the
plan's JSON and next to a flag in the comment and the HTML report: a "⚠️" reads "the cut reached
its delivery" for one team and "it lost more than 5% of what it got" for another, and a reader
must not have to re-derive which from the entitlement columns (stop 39).
"""

from __future__ import annotations

from dataclasses import dataclass

CUT_TOLERANCE = 1e-9  # relative: the least fall that is not the compiler's rounding
CUT_CONFIRMATION = "cut-confirmation"  # the change cuts the team: is the whole interval below 0?
DELIVERED_DROP = "delivered-drop"  # any other team: is it below -threshold of what it got?


@dataclass(frozen=True, slots=True)
class Judgment:
    """The line a team's paired change was judged against, as the plan records it.

    ``rule`` is ``CUT_CONFIRMATION`` or ``DELIVERED_DROP`` (it also names the team's Holm
    family); ``threshold`` is the base policy's ``flag_delivered_drop`` (it decides who is cut,
    and is the drop line of the others); ``line`` is the value, in delivered GPU-hours per week,
    that the whole 90% interval must lie below for a flag."""

    rule: str
    threshold: float
    line: float

    @property
    def cut(self) -> bool:
        return self.rule == CUT_CONFIRMATION


# a TeamImpact built without a judgment (a hand-made value in tests): the untouched teams' rule at
# the default threshold, against zero
DEFAULT_JUDGMENT = Judgment(DELIVERED_DROP, 0.05, 0.0)


def judge(delivered_before: float, entitlement_before: float, entitlement_after: float,
          threshold: float) -> Judgment:
    """The rule and line that judge a team: the one owner of that choice."""
    cut = is_cut(entitlement_before, entitlement_after, threshold)
    return Judgment(CUT_CONFIRMATION if cut else DELIVERED_DROP, threshold,
                    drop_line(delivered_before, threshold, cut))


def is_cut(entitlement_before: float, entitlement_after: float, threshold: float) -> bool:
    """Does the change lower this entitlement by at least ``threshold`` of it (the policy's
    ``flag_delivered_drop``), and by more than a rounding error?"""
    return entitlement_after <= entitlement_before * (1.0 - max(threshold, CUT_TOLERANCE))


def drop_line(delivered_before: float, threshold: float, cut: bool) -> float:
    """The value, in the team's delivered GPU-hours per week, that the whole interval of its
    paired change must lie below for a flag: 0 for a cut team (its delivery falls), otherwise
    ``-threshold`` of what it got."""
    return 0.0 if cut else -threshold * delivered_before
