"""allotment: run shared GPU clusters on GPU-time budgets instead of priorities.

Layers (dependencies flow one way, enforced by import-linter in ``make test``)::

    config -> compile -> core -> sim | traces | backends -> reconcile | plan -> cli
"""

__version__ = "0.1.0"
