"""The minimum-runtime contract: the one place that says how long a job is protected and whether
it is charged (docs/design/preemption.md, docs/concepts.md "Minimum runtime").

A job declares a minimum runtime (or none: the policy's ``default_min_runtime_s`` fills it); the
policy caps it at ``min_runtime_cap_s``.  A clamped minimum runtime of 0 makes the job
*unallocated*: free, never charged, preemptible at once.  Anything above 0 is *allocated*: charged
to its account and protected from preemption until ``protected_until``.  The simulator, the
reconciler (``reconcile.active``) and ``allot explain`` all call these functions.

With ``unallocated: false`` (``Policy.unallocated_enabled``) there is no unallocated work: a job
whose clamped minimum runtime is 0 is rejected at submission (``refusal``), never run as free work.
"""

from __future__ import annotations

from allotment.compile.model import Policy


def min_runtime(declared_s: float | None, policy: Policy) -> float:
    """The declared minimum runtime clamped to ``[0, min_runtime_cap_s]`` (the default if None)."""
    d = float(policy.default_min_runtime_s) if declared_s is None else float(declared_s)
    return max(0.0, min(d, float(policy.min_runtime_cap_s)))


def is_allocated(min_runtime_s: float) -> bool:
    """Allocated (charged, protected) work has a positive clamped minimum runtime."""
    return min_runtime_s > 0


def protected_until(start: float, min_runtime_s: float, remaining_s: float) -> float:
    """When a job started at ``start`` becomes preemptible: after its minimum runtime, or when it
    would end anyway if that is sooner; unallocated work is preemptible from its start."""
    if min_runtime_s <= 0:
        return start
    return start + min(min_runtime_s, max(0.0, remaining_s))


UNALLOCATED_OFF_WHY = "minimum runtime 0 (unallocated work) is disabled by the policy (unallocated: false)"


def refusal(min_runtime_s: float, policy: Policy) -> str | None:
    """Why a job with this clamped minimum runtime is rejected at submission, or None."""
    if min_runtime_s <= 0 and not policy.unallocated_enabled:
        return UNALLOCATED_OFF_WHY
    return None
