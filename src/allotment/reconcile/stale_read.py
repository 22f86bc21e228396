"""A tick whose read went stale before it acted holds its preemptions back one tick.

The reconciler decides on one read of the cluster and acts a moment later.  A start the
backend launches in between (the previous tick's, which Slurm ran after this tick's ``squeue``)
is pending in the read and running at the action: the core planned with its GPUs free and the
job still to place, and whatever it chose to take from others for that job, or to fit others
on the GPUs it believed free, may be needless.  The fidelity gate's CI run of 2026-12-07 (seed
11, docs/fidelity.md, the eleventh pass): f016, decided at 68.5 s, was launched by Slurm at
70.97 s; the 70.5 s tick read it pending, placed it again elsewhere and requeued f014 for f017
on GPUs f016 did not in fact leave free -- 12 preemptions on the cluster against the
simulator's 6 (its pass sees the launch where it happened).

How the reconciler knows: when a cluster plan both starts jobs and takes GPUs (a requeue, a
cancel, or a session's notice, which announces one), it reads the cluster once more after the
dry run, just before it applies.  If a job it starts is no longer pending there (launched, or
gone), the read it decided on was stale: the plan's requeues, cancels and notices are not
applied (``deferred`` in the audit log) and the next tick decides them again on its own read.
Starts, priorities, drains and resumes go ahead (they take nothing from anyone: a start placed
on GPUs that are not free waits in the backend, and the next tick places it again).  A plan
that takes nothing, or starts nothing, is applied as it is, without the second read.

Never two ticks in a row: on a cluster that launches jobs on its own (Kubernetes' scheduler),
some start may race every read, and a preemption held back for ever is a contract broken.  So
the tick after a deferring one applies whatever it decides: a preemption waits at most one
reconcile interval for this rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from allotment.backends.actions import Action, ActionResult, ClusterAction
from allotment.backends.protocol import Observation
from allotment.reconcile.active import is_start

TAKING = frozenset({"requeue", "cancel", "notify"})  # the actions a stale read may make needless
DEFERRED_WHY = "deferred: the tick's read was stale, a job it started was no longer pending"


@dataclass(frozen=True, slots=True)
class StaleRead:
    """What a tick applies after its dry run: ``apply`` the actions to carry out, ``deferred``
    the preemptions held back to the next tick, ``launched`` the starts that showed the read
    stale (their jobs, in the order of the actions)."""

    apply: tuple[Action, ...]
    deferred: tuple[ClusterAction, ...]
    launched: tuple[str, ...]

    def deferred_results(self) -> tuple[ActionResult, ...]:
        why = f"{DEFERRED_WHY}: {', '.join(self.launched)}"
        return tuple(ActionResult(a, "deferred", why) for a in self.deferred)


def started(actions: Sequence[Action]) -> tuple[str, ...]:
    """The jobs a plan starts (``active``'s ``set_priority`` actions of rule ``start``)."""
    return tuple(a.target for a in actions if is_start(a))


def takes(actions: Sequence[Action]) -> bool:
    return any(isinstance(a, ClusterAction) and a.kind in TAKING for a in actions)


def overtaken(jobs: Sequence[str], fresh: Observation) -> tuple[str, ...]:
    """Those of ``jobs`` that a fresh read no longer shows pending: launched, or gone."""
    out = []
    for j in jobs:
        job = fresh.job(j)
        if job is None or job.state != "pending":
            out.append(j)
    return tuple(out)


def hold_back(actions: Sequence[Action], launched: Sequence[str]) -> StaleRead:
    """A tick's actions split by the rule: with no start ``launched`` since the read, all of
    them; else all but the preemptions, which are deferred."""
    if not launched:
        return apply_all(actions)
    held = tuple(a for a in actions if isinstance(a, ClusterAction) and a.kind in TAKING)
    keep = tuple(a for a in actions if not (isinstance(a, ClusterAction) and a.kind in TAKING))
    return StaleRead(keep, held, tuple(launched))


def apply_all(actions: Sequence[Action]) -> StaleRead:
    """Every action: how a policy change is applied (its dry run reads what it changes)."""
    return StaleRead(tuple(actions), (), ())


class StaleReadGuard:
    """The rule from tick to tick: reads again only for a plan that starts and takes, and
    remembers whether the last plan it split deferred anything, so that no two in a row do."""

    def __init__(self, observe: Callable[[], Observation]) -> None:
        self.observe = observe
        self.deferred_last = False

    def split(self, actions: Sequence[Action]) -> StaleRead:
        starts = started(actions)
        if self.deferred_last or not starts or not takes(actions):
            self.deferred_last = False
            return apply_all(actions)
        out = hold_back(actions, overtaken(starts, self.observe()))
        self.deferred_last = bool(out.deferred)
        return out
