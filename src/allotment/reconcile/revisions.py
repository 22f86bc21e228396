"""Which revision the reconciler drives: the newest that validates, else the last good one.

The contract (minimum runtimes, draining unhealthy nodes, the usage ledger) must never stop
because the newest state cannot be used.  So when the source is unreachable, when none of the
newest ``history_limit`` commits validates (51 bad commits on top), or when the backend refuses
the newest valid commit, the reconciler keeps driving ``last_applied_revision`` (persisted in
``status.json``, read from the local copy of the repository) and says why in its status.
Bad commits are remembered with their first error and never compiled again.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from allotment.compile.compiler import compile_config
from allotment.compile.model import CompiledConfig
from allotment.config.loader import load_config
from allotment.errors import BackendError, CompileError, ConfigError
from allotment.reconcile.source import Source
from allotment.reconcile.status import Status

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Choice:
    """``sha`` is driven; ``newest`` is the branch tip seen (None when the history could not be
    read); ``why_not_newest`` says why ``sha`` is not the newest ("" when it is)."""

    sha: str
    config: CompiledConfig
    newest: str | None
    why_not_newest: str = ""

    @property
    def is_newest(self) -> bool:
        return self.sha == self.newest


class Revisions:
    def __init__(self, source: Source, history_limit: int) -> None:
        self.source, self.history_limit = source, history_limit
        self._compiled: dict[tuple[str, dt.date], CompiledConfig] = {}

    def choose(self, st: Status, now: float, fetch_error: str | None) -> Choice | None:
        """The revision to drive at ``now``; None when there is none at all."""
        at = dt.datetime.fromtimestamp(now, dt.UTC).date()
        try:
            history = self.source.history(self.history_limit)
        except BackendError as exc:
            return self.last_good(st, at, None, fetch_error or str(exc))
        if not history:
            return self.last_good(st, at, None, fetch_error or "the branch has no commits")
        newest = history[0].sha
        for c in history:
            if c.sha in st.bad_revisions:
                continue
            config = self._compile(st, c.sha, at)
            if config is not None:
                why = "" if c.sha == newest else f"newest {newest[:12]} {_bad(st, newest)}"
                if fetch_error:
                    why = f"{fetch_error}; {why}" if why else fetch_error
                return Choice(c.sha, config, newest, why)
        why = f"none of the newest {len(history)} commits validates (newest {newest[:12]}: {_bad(st, newest)})"
        return self.last_good(st, at, newest, why)

    def last_good(self, st: Status, at: dt.date, newest: str | None, why: str) -> Choice | None:
        sha = st.last_applied_revision
        if sha is None or sha in st.bad_revisions or not self.source.has(sha):
            return None
        config = self._compile(st, sha, at)
        if config is None:
            return None
        return Choice(sha, config, newest, why)

    def compiled(self, sha: str, now: float) -> CompiledConfig | None:
        at = dt.datetime.fromtimestamp(now, dt.UTC).date()
        return self._compiled.get((sha, at))

    def _compile(self, st: Status, sha: str, at: dt.date) -> CompiledConfig | None:
        key = (sha, at)
        if key in self._compiled:
            return self._compiled[key]
        try:
            files = self.source.files(sha)
            config = compile_config(load_config(files, at), at, None if sha == "dir" else sha)
        except (ConfigError, CompileError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.warning("revision %s does not validate: %s", sha[:12], first)
            if sha == "dir":
                raise BackendError(f"the source folder does not validate: {first}") from exc
            st.bad_revisions[sha] = first
            return None
        # keep the last good revision's compiled config beside the newest one
        keep = {k: v for k, v in self._compiled.items() if k[0] == st.last_applied_revision}
        self._compiled = keep | {key: config}
        return config


def _bad(st: Status, sha: str) -> str:
    if sha in st.bad_revisions:
        return f"does not validate: {st.bad_revisions[sha]}"
    if sha in st.rejected_revisions:
        return f"was refused by the backend: {st.rejected_revisions[sha]}"
    return "is not usable"
