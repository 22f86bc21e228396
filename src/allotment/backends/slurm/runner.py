"""Run Slurm client commands with a timeout on every call and bounded retries with backoff.

Only *reads* are retried here: a read has no effect, so running it twice is harmless.  A
*write* runs once per call; the backend retries a write only after re-reading the cluster and
finding the change still missing (check-then-act), so a write that succeeded but timed out is
never repeated.  Every failure becomes a ``BackendError`` naming the command and Slurm's message.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from allotment.errors import BackendError

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Runner:
    """``env`` is merged over the process environment (``SLURM_CONF`` points at the cluster).

    ``sleep`` is injectable so tests of the retry logic do not wait.
    """

    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 20.0
    retries: int = 3
    backoff_s: float = 0.5
    sleep: Callable[[float], None] = time.sleep
    calls: int = 0

    def read(self, argv: Sequence[str]) -> str:
        """Run a command without side effects; retried with exponential backoff."""
        last: BackendError | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                return self.write(argv)
            except BackendError as exc:
                last = exc
                log.warning("attempt %d of %s failed: %s", attempt + 1, argv[0], exc)
        assert last is not None
        raise last

    def write(self, argv: Sequence[str]) -> str:
        """Run a command once; raise BackendError on timeout, a missing binary or exit != 0."""
        self.calls += 1
        try:
            proc = subprocess.run(
                list(argv),
                capture_output=True,
                text=True,
                timeout=self.timeout_s,
                env={**os.environ, **self.env},
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise BackendError(f"{_show(argv)} timed out after {self.timeout_s:g}s") from exc
        except OSError as exc:
            raise BackendError(f"{_show(argv)} could not run: {exc.strerror}") from exc
        if proc.returncode != 0:
            msg = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
            detail = msg[-1] if msg else f"exit code {proc.returncode}"
            raise BackendError(f"{_show(argv)} failed: {detail}")
        return proc.stdout


def _show(argv: Sequence[str]) -> str:
    return " ".join(argv[:3]) + (" ..." if len(argv) > 3 else "")
