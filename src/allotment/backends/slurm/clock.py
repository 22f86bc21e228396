"""slurmctld's own clock, which every job time Slurm reports is on.

Slurm 22.05's ``squeue``/``sinfo --json`` carry no server time, ``scontrol show config`` only
the config's last update; ``sdiag`` prints the controller's time of the answer
(``sdiag output at <date> (<unix seconds>)``, the ``req_time`` slurmctld fills in).  The
reconciler compares it with its own clock to detect skew and decides with Slurm's.
"""

from __future__ import annotations

import re

from allotment.errors import BackendError

SDIAG_ARGV = ["sdiag"]
_OUTPUT_AT = re.compile(r"^sdiag output at .*\((\d+)\)\s*$", re.M)


def parse_sdiag_time(text: str) -> float:
    m = _OUTPUT_AT.search(text)
    if m is None:
        raise BackendError("sdiag printed no 'sdiag output at ... (SECONDS)' line")
    return float(m.group(1))
