"""Boosts: manual, expiring bumps of the within-team score (``Policy.boosts``), matched to a job
by its id, its user or its account (``boost_of``, the one matching rule).

Which boosts are active depends only on the epoch, and a run makes thousands of passes per epoch:
``BoostsAt`` keeps the active boosts and their index for the last epoch asked (the fast walk's;
the reference asks ``active_boosts`` every pass).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from allotment.core.context import Context


def active_boosts(ctx: Context, t: float) -> dict[str, float]:
    """Boost amounts by target (``job:ID``, ``user:NAME``, ``account:LEAF``) not expired at ``t``."""
    out: dict[str, float] = {}
    for b in ctx.policy.boosts:
        if t < ctx.boost_expiry_s(b.expires):
            out[b.target] = out.get(b.target, 0.0) + b.amount
    return out


class BoostIndex:
    """Active boosts by the name after their target's kind: ``job:ID`` under ``jobs[ID]``, and
    so on (other kinds match nothing).  Made once per epoch (``BoostsAt``) or ``Scorer``, so that matching a job
    builds no ``job:ID`` strings (each new string is hashed again: 4% of a compiled 10-day run)."""

    __slots__ = ("accounts", "jobs", "users")

    def __init__(self, boosts: Mapping[str, float]) -> None:
        self.jobs: dict[str, float] = {}
        self.users: dict[str, float] = {}
        self.accounts: dict[str, float] = {}
        for target, amount in boosts.items():
            kind, _, name = target.partition(":")  # "job:" + id == target exactly then
            if kind == "job":
                self.jobs[name] = amount
            elif kind == "user":
                self.users[name] = amount
            elif kind == "account":
                self.accounts[name] = amount


def boost_of(boosts: Mapping[str, float] | BoostIndex, job_id: str, user: str, account: str) -> float:
    """The one boost-matching rule: a job gets its own, its user's and its account's boosts
    (``boosts`` as ``active_boosts`` gives them, or indexed once by ``BoostIndex``)."""
    idx = boosts if isinstance(boosts, BoostIndex) else BoostIndex(boosts)
    return idx.jobs.get(job_id, 0.0) + idx.users.get(user, 0.0) + idx.accounts.get(account, 0.0)


class BoostsAt:
    """``active_boosts(ctx, t)`` and its ``BoostIndex``, kept for the last ``t`` asked: the same
    mapping object while the epoch stays (what ``InheritedParts`` compares first)."""

    __slots__ = ("_index", "_t", "boosts", "ctx")

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._t = math.nan  # no epoch yet (nan equals nothing)
        self.boosts: dict[str, float] = {}
        self._index: BoostIndex | None = None

    def at(self, t: float) -> dict[str, float]:
        if t != self._t:
            self.boosts, self._t, self._index = active_boosts(self.ctx, t), t, None
        return self.boosts

    def index(self, boosts: Mapping[str, float]) -> BoostIndex | None:
        """The index of ``boosts`` if they are the kept ones (None: the scorer makes its own)."""
        if boosts is not self.boosts:
            return None
        if self._index is None:
            self._index = BoostIndex(self.boosts)
        return self._index
