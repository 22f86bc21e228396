"""The canonical trace: JSON Lines, one job or node-health event per line (docs/trace-format.md).

Why this shape: every importer and the scenario generator write it, and the simulator reads only
it, so a site's own accounting, a public trace and a synthetic scenario replay the same way.
Lines are in non-decreasing time order (``submit`` for jobs, ``time`` for node events) so a
replay can stream; the writer guarantees it, the reader checks it.

The writer is byte-deterministic: keys in the fixed order of :data:`JOB_FIELDS`, integral numbers
written as integers, absent optional fields (``null``, empty ``depends_on``) left out, compact
separators, and gzip output (``.gz``) with a zero timestamp.
"""

from __future__ import annotations

from allotment.traces.format import (
    FORMAT_VERSION,
    JOB_FIELDS,
    NODE_FIELDS,
    REQUIRED_JOB_FIELDS,
    Trace,
    TraceItem,
    item_time,
    sort_key,
)
from allotment.traces.reader import TraceReader, iter_trace, read_trace
from allotment.traces.writer import (
    AtomicWriter,
    encode,
    encode_header,
    job_to_dict,
    node_to_dict,
    sorted_items,
    write_trace,
)

__all__ = [
    "FORMAT_VERSION",
    "JOB_FIELDS",
    "NODE_FIELDS",
    "REQUIRED_JOB_FIELDS",
    "AtomicWriter",
    "Trace",
    "TraceItem",
    "TraceReader",
    "encode",
    "encode_header",
    "item_time",
    "iter_trace",
    "job_to_dict",
    "node_to_dict",
    "read_trace",
    "sort_key",
    "sorted_items",
    "write_trace",
]
