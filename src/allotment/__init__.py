"""allotment: run shared GPU clusters on GPU-time budgets instead of priorities.

Layers (dependencies flow one way, enforced by import-linter in ``make test``)::

    config -> compile -> core -> sim | traces | backends -> reconcile | plan -> cli
"""

from allotment._compiled import use_fresh_sources

__version__ = "0.2.0"  # = pyproject.toml; tests/test_versions.py checks every pin of it

use_fresh_sources()
