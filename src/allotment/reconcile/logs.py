"""The reconciler's log lines: timestamped (UTC, RFC 3339), levelled, as text or JSON lines.

Library code only logs to its own loggers (``allotment.*``); this handler is installed by the
``allot reconcile`` command alone.  Warnings that repeat every tick (the source is unreachable,
the clocks disagree) are printed when they change, not every 10 s (``OnChange``)."""

from __future__ import annotations

import json
import logging
import sys

from allotment.timefmt import rfc3339


def _time(record: logging.LogRecord) -> str:
    return rfc3339(record.created, ms=True)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{_time(record)} {record.levelname:<7} {record.name}: {record.getMessage()}"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": _time(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        return json.dumps(entry, sort_keys=True)


class OnChange(logging.Filter):
    """Drops a record identical (logger, level, message) to the previous one of its logger."""

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, tuple[int, str]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.levelno, record.getMessage())
        if self._last.get(record.name) == key:
            return False
        self._last[record.name] = key
        return True


def setup_logging(fmt: str, level: int) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(OnChange())
    root = logging.getLogger("allotment")
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False
