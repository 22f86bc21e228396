"""``/metrics`` of ``allot serve``: the live views in Prometheus' exposition format, named like
the Slurm and Flux exporters (``<prefix>_account_*`` per account, ``*_total`` counters), so a
site can put allotment next to them in Grafana.  A fresh registry per scrape: the numbers are
read from the state dir each time, nothing is kept between scrapes.  The conditions are judged at
the scrape (``now``, the server's clock), so a reconciler that stopped ticking scrapes as
``Ready`` 0 with reason ``Stale``, as ``allot status --reconciler`` says."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from allotment.legible.livestate import LiveState, conditions_at
from allotment.legible.runview import ClusterView
from allotment.reconcile.status import Status


class _Snapshot(Collector):
    def __init__(self, state: LiveState, view: ClusterView, now: float) -> None:
        self.state, self.view, self.now = state, view, now

    def collect(self) -> Iterator[Metric]:
        v, st = self.view, self.state.status
        c = v.cluster
        usage = GaugeMetricFamily("allotment_account_usage_gpu_hours", "Reference GPU-hours used over the fair-share window", labels=["cluster", "account"])
        ent = GaugeMetricFamily("allotment_account_entitlement_gpus", "GPUs owed to the account (its share of the cluster)", labels=["cluster", "account"])
        ratio = GaugeMetricFamily("allotment_account_ratio", "Window usage over what the account is owed per window (1 = exactly its share)", labels=["cluster", "account"])
        rank = GaugeMetricFamily("allotment_account_rank", "Fair Tree rank among siblings (1 = most under-served)", labels=["cluster", "account"])
        running = GaugeMetricFamily("allotment_running_gpus", "GPUs running for the account", labels=["cluster", "account", "allocated"])
        pending = GaugeMetricFamily("allotment_pending_gpus", "GPUs pending for the account", labels=["cluster", "account"])
        for r in v.tree:
            usage.add_metric([c, r.name], r.usage_gpu_hours)
            ent.add_metric([c, r.name], r.entitlement_gpus)
            if r.ratio is not None:
                ratio.add_metric([c, r.name], r.ratio)
            rank.add_metric([c, r.name], r.rank)
            running.add_metric([c, r.name, "true"], r.running_allocated_gpus)
            running.add_metric([c, r.name, "false"], r.running_unallocated_gpus)
            pending.add_metric([c, r.name], r.pending_gpus)
        yield from (usage, ent, ratio, rank, running, pending)
        cap = GaugeMetricFamily("allotment_cluster_capacity_gpus", "GPUs in the cluster", labels=["cluster"])
        cap.add_metric([c], v.capacity_gpus)
        drained = GaugeMetricFamily("allotment_drained_nodes", "Nodes drained or down", labels=["cluster"])
        drained.add_metric([c], len(v.drained))
        yield from (cap, drained)
        pre = CounterMetricFamily("allotment_preemptions", "Jobs requeued or cancelled by the reconciler, by rule", labels=["cluster", "rule"])
        for rule, n in sorted(self.state.audit.preemptions.items()):
            pre.add_metric([c, rule], n)
        yield pre
        ticks = CounterMetricFamily("allotment_reconcile_ticks", "Reconcile ticks run, by result (error: the tick ended Stalled)", labels=["cluster", "result"])
        by_result = dict(st.tick_results)
        # ticks from before results were recorded count under "unknown", so the sum stays st.ticks
        if sum(by_result.values()) < st.ticks:
            by_result["unknown"] = st.ticks - sum(by_result.values())
        for res, n in sorted(by_result.items()):
            ticks.add_metric([c, res], n)
        last = GaugeMetricFamily("allotment_reconcile_last_tick_timestamp_seconds", "Unix time of the last tick", labels=["cluster"])
        last.add_metric([c], st.last_tick)
        result = CounterMetricFamily("allotment_reconcile_result", "Actions by result code, all ticks", labels=["cluster", "result"])
        for code, n in sorted(st.action_counts.items()):
            result.add_metric([c, code], n)
        cond = GaugeMetricFamily("allotment_reconcile_condition", "Reconciler conditions (1 = True)", labels=["cluster", "type", "reason"])
        for k in conditions_at(self.state, self.now):
            cond.add_metric([c, k.type, k.reason], 1.0 if k.status else 0.0)
        yield from (ticks, last, result, cond)
        yield from _tick_duration(st, c)
        if st.clock_skew_s is not None:
            skew = GaugeMetricFamily("allotment_reconcile_clock_skew_seconds", "Backend clock minus the reconciler's at the last observation", labels=["cluster"])
            skew.add_metric([c], st.clock_skew_s)
            yield skew


def _tick_duration(st: Status, c: str) -> Iterator[Metric]:
    """The histogram the reconciler keeps in status.json (``reconcile.tick_metrics``), and the
    last tick's own duration and result."""
    if st.tick_duration_buckets:
        bounds = sorted(st.tick_duration_buckets.items(), key=lambda kv: float(kv[0]))
        hist = HistogramMetricFamily("allotment_reconcile_duration_seconds", "Wall time of reconcile ticks", labels=["cluster"])
        hist.add_metric([c], [(le, float(n)) for le, n in bounds], st.tick_duration_sum_s)
        yield hist
    if st.last_tick_duration_s is not None:
        last = GaugeMetricFamily("allotment_reconcile_last_tick_duration_seconds", "Wall time of the last reconcile tick", labels=["cluster", "result"])
        last.add_metric([c, st.last_tick_result or "unknown"], st.last_tick_duration_s)
        yield last


def exposition(state: LiveState, view: ClusterView, now: float) -> bytes:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Snapshot(state, view, now))
    return generate_latest(reg)
