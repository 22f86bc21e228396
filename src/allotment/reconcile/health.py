"""Node health as the platform team reports it: a file (or a command printing the same) with one
``NODE STATE [reason...]`` a line, STATE ``healthy`` or ``unhealthy``; ``#`` starts a comment.
A node not listed is healthy.  A malformed line is an error (``file:line:col``) rather than a
guess: draining the wrong node, or not draining a broken one, is worse than a stalled tick.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from allotment.errors import BackendError

STATES = ("healthy", "unhealthy")


def parse_health(text: str, origin: str) -> dict[str, str]:
    """Unhealthy node -> reason."""
    out: dict[str, str] = {}
    for i, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 2)
        if len(parts) < 2 or parts[1] not in STATES:
            col = len(raw) - len(raw.lstrip()) + 1
            raise BackendError(
                f"{origin}:{i}:{col}: expected 'NODE healthy|unhealthy [reason]', got {line!r}"
            )
        if parts[1] == "unhealthy":
            out[parts[0]] = parts[2] if len(parts) > 2 else "unhealthy per health report"
    return out


def read_health(file: str | None, command: str | None, timeout_s: float = 20.0) -> dict[str, str]:
    if file:
        path = Path(file)
        if not path.exists():
            return {}
        try:
            return parse_health(path.read_text(encoding="utf-8"), file)
        except (OSError, UnicodeDecodeError) as exc:
            raise BackendError(f"{file}: cannot read the health file: {exc}") from exc
    if command:
        try:
            proc = subprocess.run(
                shlex.split(command), capture_output=True, text=True, timeout=timeout_s, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BackendError(f"health command {command!r} failed: {exc}") from exc
        if proc.returncode != 0:
            raise BackendError(
                f"health command {command!r} exited {proc.returncode}: {proc.stderr.strip()}"
            )
        return parse_health(proc.stdout, "health-command")
    return {}
