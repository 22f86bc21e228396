"""Source formats ``allot trace import`` reads: swf, alibaba-gpu, sacct, csv.

Each importer is a small frozen dataclass with the format's options and a streaming ``read``;
see ``base.py`` for the contract and ``allotment.traces.pipeline`` for what happens next.
"""

from __future__ import annotations

from allotment.traces.importers.alibaba import AlibabaImporter
from allotment.traces.importers.base import ImportContext, Importer, NodeGroupShape, RawJob
from allotment.traces.importers.csvmap import CsvImporter, parse_map
from allotment.traces.importers.sacct import SacctImporter
from allotment.traces.importers.swf import SwfImporter

FORMATS: tuple[str, ...] = ("swf", "alibaba-gpu", "sacct", "csv")

__all__ = [
    "FORMATS",
    "AlibabaImporter",
    "CsvImporter",
    "ImportContext",
    "Importer",
    "NodeGroupShape",
    "RawJob",
    "SacctImporter",
    "SwfImporter",
    "parse_map",
]
