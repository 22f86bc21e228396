"""Whose clock decides: the backend's.

Job start times come from the backend (slurmctld's clock), so "how long has this job run" and
"how much did it use" are only right when "now" is on the same clock.  With the reconciler's
clock an hour ahead, jobs a minute old looked past their 10-minute protection and were requeued,
and the ledger charged an hour for every minute.  So the reconciler decides with the backend's
``backend_now`` and compares it with its own clock: beyond ``max_skew_s`` something is wrong
with one of them (NTP down, a VM resumed), and it refuses to act (Stalled, reason ``ClockSkew``)
rather than guess which.  ``--max-clock-skew`` sets the bound (default 60 s).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from allotment.backends.protocol import Observation

DEFAULT_MAX_SKEW_S = 60.0


@dataclass(frozen=True, slots=True)
class ClockCheck:
    skew_s: float  # backend clock minus ours (positive: the backend is ahead)
    max_skew_s: float

    @property
    def ok(self) -> bool:
        return abs(self.skew_s) <= self.max_skew_s

    def message(self) -> str:
        side = "ahead of" if self.skew_s > 0 else "behind"
        return (
            f"backend clock is {abs(self.skew_s):.0f} s {side} ours (bound {self.max_skew_s:g} s);"
            " no job or node action and no usage recorded until the clocks agree"
        )


def on_backend_clock(
    obs: Observation, local_now: float, max_skew_s: float
) -> tuple[Observation, ClockCheck]:
    """The observation with ``at`` on the backend's clock (when it reports one), and the skew."""
    if obs.backend_now is None:
        return obs, ClockCheck(0.0, max_skew_s)
    return replace(obs, at=obs.backend_now), ClockCheck(obs.backend_now - local_now, max_skew_s)
