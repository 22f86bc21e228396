"""``/metrics`` of a replica (``allot reconcile --leader-elect --probe-port N``): whether it
leads and when the lease it last saw expires, so an alert can say "no replica leads"
(deploy/prometheus/allotment-rules.yaml, ``AllotmentNoLeader``).

Why on the replica and not on ``allot serve``'s /metrics: serve reads the state dir, where the
status names the leader of the last tick even after that leader died; only the replicas know
who leads now.  A scrape of every replica (the Deployment's pods) sums ``allotment_leader`` to 1
while one leads; 0, or no series at all (every replica gone), is the alert.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from allotment.reconcile.leadership import Leadership


class _Lease(Collector):
    def __init__(self, leadership: Leadership, now: float) -> None:
        self.leadership, self.now = leadership, now

    def collect(self) -> Iterator[Metric]:
        ld = self.leadership
        who = [ld.identity]
        leader = GaugeMetricFamily(
            "allotment_leader",
            "1 while this replica holds the lease and may act, 0 while it stands by",
            labels=["identity"],
        )
        leader.add_metric(who, 1.0 if ld.leads(self.now) else 0.0)
        yield leader
        seen = ld.record if ld.leads(self.now) else ld.seen
        if seen is None or not seen.holder:  # never read, or released: nobody's lease to time
            return
        expiry = GaugeMetricFamily(
            "allotment_lease_expiry_timestamp_seconds",
            "When the lease as this replica last saw it expires unrenewed (Unix seconds)",
            labels=["identity", "holder"],
        )
        expiry.add_metric([*who, seen.holder], seen.expires_at)
        token = GaugeMetricFamily(
            "allotment_lease_token",
            "Fencing token of the lease as this replica last saw it (grows by one per takeover)",
            labels=["identity", "holder"],
        )
        token.add_metric([*who, seen.holder], float(seen.token))
        yield from (expiry, token)


def exposition(leadership: Leadership, now: float) -> bytes:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Lease(leadership, now))
    return generate_latest(reg)
