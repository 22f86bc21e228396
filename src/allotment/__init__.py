"""allotment: run shared GPU clusters on GPU-time budgets instead of priorities.

Layers (dependencies flow one way, enforced by import-linter in ``make test``)::

    config -> compile -> core -> sim | traces | backends -> reconcile | plan -> cli
"""

from allotment._compiled import use_fresh_sources

__version__ = "0.1.0"

use_fresh_sources()
