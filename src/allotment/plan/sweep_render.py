"""A sweep's rows as a table (one line per knob values and seed, the headline metrics) and as
JSON (every metric of every run, with its content-addressed key).  Both are pure functions of
the rows, so the same sweep renders the same bytes whichever executor ran it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from allotment.plan.sweep import Knob, Row, SweepSpec

# (header, how to read it from the metrics, format): docs/metrics.md names each metric
HEADLINE: tuple[tuple[str, Callable[[Mapping[str, Any]], float], str], ...] = (
    ("occupancy", lambda m: m["occupancy"], "{:.3f}"),
    ("deliv/owed", lambda m: m["delivered_over_owed"], "{:.3f}"),
    ("teams>=.95", lambda m: m["teams_at_or_above_95"], "{:d}"),
    ("lowest", lambda m: m["teams_min_ratio"], "{:.3f}"),
    ("wait_p50_s", lambda m: m["wait"]["all"]["p50"], "{:.0f}"),
    ("wait_p90_s", lambda m: m["wait"]["all"]["p90"], "{:.0f}"),
    ("large_p90_s", lambda m: m["wait"]["large"]["p90"], "{:.0f}"),
    ("preemptions", lambda m: m["preemptions"], "{:d}"),
    ("lost_gpu_h", lambda m: m["lost_gpu_hours"], "{:.0f}"),
)


def render_table(knobs: Sequence[Knob], rows: Sequence[Row]) -> str:
    head = [k.name for k in knobs] + ["seed"] + [h for h, _, _ in HEADLINE]
    body = [
        [v for _, v in r.overrides] + [str(r.seed)] + [f.format(get(r.metrics)) for _, get, f in HEADLINE]
        for r in rows
    ]
    widths = [max(len(c) for c in col) for col in zip(head, *body, strict=True)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)).rstrip()
             for line in (head, *body)]
    return "\n".join(lines) + "\n"


def render_json(spec: SweepSpec, knobs: Sequence[Knob], seeds: Sequence[int], rows: Sequence[Row]) -> str:
    doc = {
        "scenario": spec.scenario,
        "trace": None if spec.trace is None else spec.trace.name,
        "cluster": spec.cluster,
        "days": spec.days,
        "policy": spec.policy,
        "profile": spec.latency.spec(),
        "knobs": {k.name: list(k.values) for k in knobs},
        "seeds": list(seeds),
        "runs": [
            {"set": dict(r.overrides), "seed": r.seed, "key": r.key, "metrics": r.metrics}
            for r in rows
        ],
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
