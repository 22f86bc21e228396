"""The two ways the reconciler's own state dir fails, told apart because they need different
fixes: ``StateDirError`` (exit 3) when the dir cannot be written or read (full disk, read-only
mount, permissions: fix the machine and restart), ``StateFileError`` (exit 2) when a file in it
is not what the reconciler wrote (a truncated ``ledger.sqlite``, a ``status.json`` holding
``null``: move the file aside, and the next start rebuilds it from the backend and sacct).
Both are one-line errors; neither ever leaves a status that says Ready (see ``status``).
"""

from __future__ import annotations

from allotment.errors import ReconcileError, UsageError


class StateDirError(ReconcileError):
    """The state dir refuses a read or write."""

    exit_code = 3


class StateFileError(UsageError):
    """A file in the state dir is corrupt or of the wrong shape."""

    exit_code = 2
