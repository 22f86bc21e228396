"""What a session's restore hook may be named (``interactive.restore_hook``; docs/design/interactive.md).

A bare command name on the nodes' PATH: letters, digits, ``.``, ``-`` and ``_``, no path and no
arguments, because the job runs it, never the reconciler (docs/security.md).  One pattern for the
schema (``config.models.policy``) and for ``allot simulate --set interactive.restore_hook``
(``sim.overrides``); kept free of pydantic so the compiled simulator can import it.
"""

from __future__ import annotations

RESTORE_HOOK_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9._-]*$"
RESTORE_HOOK_MAX = 64
