"""A backend with something done on the cluster once between a tick's read and its actions,
for the stale-read tests (``reconcile.stale_read``) on the simulated backend and the real Slurm.

A wrapper, not a subclass: the same race on any real backend.  The dry run is the first call
the reconciler makes after it planned, so the hook runs just before it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from allotment.backends.actions import Action, ActionResult, ClusterAction


class Raced:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.between: Callable[[], None] | None = None  # run once, at the next cluster dry run

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def apply(
        self, actions: Sequence[Action], *, dry_run: bool = False
    ) -> tuple[ActionResult, ...]:
        if dry_run and self.between is not None and any(
            isinstance(a, ClusterAction) for a in actions
        ):
            hook, self.between = self.between, None
            hook()
        result: tuple[ActionResult, ...] = self.inner.apply(actions, dry_run=dry_run)
        return result
