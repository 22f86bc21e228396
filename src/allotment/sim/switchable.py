"""Whether a run of one config can be continued under another (``sim/switch.py``), and if not,
why: what a switch cannot carry over.

* another set of teams, or renamed ones: the jobs each side replays differ (``plan``'s
  ``for_side``), and the running ones would belong to no team;
* other nodes or maintenance: running jobs sit on the base's nodes, and the event queue holds the
  base's maintenance;
* another lookback, time axis (epoch) or billing weights: the usage ledger holds the past charges
  as the base counted them.

Kept apart from ``sim/switch.py`` so that a plan can decide which runs it needs (their cache
keys) without importing the simulator.
"""

from __future__ import annotations

from allotment.compile.model import CompiledConfig
from allotment.core.context import build_context


def switch_refusal(base: CompiledConfig, head: CompiledConfig, cluster: str,
                   renames: tuple[tuple[str, str], ...] = ()) -> str | None:
    """Why a run of ``base`` cannot be continued under ``head`` on ``cluster`` (None: it can)."""
    if renames:
        return "teams are renamed"
    if cluster not in head.clusters:
        return "the cluster is not in the head"
    if {n.name for n in base.leaves()} != {n.name for n in head.leaves()}:
        return "the teams differ"
    if base.clusters[cluster] != head.clusters[cluster]:
        return "the cluster's nodes or maintenance differ"
    b, h = build_context(base, cluster), build_context(head, cluster)
    if b.policy.lookback_s != h.policy.lookback_s:
        return "the lookback window differs"
    if b.epoch != h.epoch:
        return "the time axis differs"
    if dict(b.billing_weight) != dict(h.billing_weight):
        return "the billing weights differ"
    return None
