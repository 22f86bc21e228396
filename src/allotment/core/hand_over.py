"""Handing a reservation over from one holder to the next (knob ``hand_over``;
docs/design/reservation.md, "Handing a hold over").

With the knob off a reservation is decided afresh each round (``Scheduler._decide_holds``): the
first queue in round order with a holder gets it, so a better-ranked queue's gang takes it from
the last holder whatever that holder's drain had reached.  On ``ai2-big-gangs`` (h100, seed 1,
30 days) the one reservation stood 714 of 720 h and 615 holds were passed on before their gang
started (386 h); a displaced 256-GPU holder's plan, when it next held, lay on average as far
after its plan when displaced as the time it went without the hold (3.1 h, its nodes refilled
meanwhile).  Two rules on that hand-over, each measured in docs/results.md (stop 45):

* ``sooner`` -- the last holder keeps its hold unless the new holder's drain ends no later than
  the last holder's planned start (the new one would start first, so passing it on costs the
  last holder nothing it would not have waited anyway);
* ``claim`` -- a holder the hold passed from keeps its claim on the nodes it drains, as a hold
  of its own after the round's reservations, off their nodes (a later hold in ``Holds``: it binds
  the starts of queues ranked no better than its holder's), until it holds again, starts or stops
  qualifying;
* ``both`` -- the two;
* ``claim-over`` -- ``claim``, binding only the starts of over-served teams (tier 1).

Who may keep: the last round's holder that still may hold one (``reservation.may_hold``), within
its caps and limits, whose queue's tier is no worse than the new holder's (a team that rose above
what it is owed gives way to one below it, as with the knob off).  What is remembered between
passes is the last round's holders (``Scheduler.kept``, carried by ``decide()`` in
``Snapshot.kept_holds`` like the knob ``keep_hold``'s memory); simulation only, like ``keep_hold``.
"""

from __future__ import annotations

FORMS = ("off", "sooner", "claim", "both", "claim-over")

OVER_SERVED: tuple[int, int, str] = (1, -1, "")  # below every tier-1 queue's round key (tier, rank, name)


def keeps_first(form: str, last_at: float, new_at: float) -> bool:
    """With ``form``, does the last holder, planned to start at ``last_at``, keep the hold from a
    new holder planned at ``new_at``?  Under ``sooner``/``both``: yes unless the new one starts
    no later."""
    return form in ("sooner", "both") and new_at > last_at


def keeps_claim(form: str) -> bool:
    """With ``form``, does a holder the hold passed from keep a hold of its own after the others?"""
    return form in ("claim", "both", "claim-over")


def claim_floor(form: str) -> tuple[int, int, str] | None:
    """The lowest round key a claim binds (``Hold.floor``; None: as a later hold, its holder's):
    under ``claim-over``, only tier-1 queues -- over-served teams' work may not start on the
    displaced holder's nodes past its planned start, under-served teams' may, as with no claim."""
    return OVER_SERVED if form == "claim-over" else None
