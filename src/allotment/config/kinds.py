"""Which file kind a path is, and reading one file into its pydantic model.

The layout is fixed so a reviewer knows what a file is from its path alone:

=====================================  =============  ==========================
path                                   kind           model
=====================================  =============  ==========================
budgets/<org>/.../<node>/budget.yaml   budget         BudgetFile
inventory/gpu_types.yaml               gpu-types      GpuTypesFile
inventory/clusters/<cluster>.yaml      cluster        ClusterFile
policies/scheduler.yaml                scheduler      SchedulerFile
policies/boosts.yaml                   boosts         BoostsFile
=====================================  =============  ==========================
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from allotment.config.models.budget import BudgetFile
from allotment.config.models.inventory import ClusterFile, GpuTypesFile
from allotment.config.models.policy import BoostsFile, SchedulerFile
from allotment.config.pydantic_errors import validation_diagnostics
from allotment.config.sourcemap import SourceMap
from allotment.config.yamlsafe import parse_yaml
from allotment.errors import Diagnostic

KINDS: dict[str, type[BaseModel]] = {
    "budget": BudgetFile,
    "gpu-types": GpuTypesFile,
    "cluster": ClusterFile,
    "scheduler": SchedulerFile,
    "boosts": BoostsFile,
}


def kind_of(path: str) -> str | None:
    parts = path.split("/")
    if parts[0] == "budgets" and len(parts) >= 3 and parts[-1] == "budget.yaml":
        return "budget"
    if path == "inventory/gpu_types.yaml":
        return "gpu-types"
    if len(parts) == 3 and parts[:2] == ["inventory", "clusters"] and parts[2].endswith(".yaml"):
        return "cluster"
    if path == "policies/scheduler.yaml":
        return "scheduler"
    if path == "policies/boosts.yaml":
        return "boosts"
    return None


UNKNOWN_FILE_HINT = (
    "expected budgets/<org>/.../budget.yaml, inventory/gpu_types.yaml, "
    "inventory/clusters/<cluster>.yaml, policies/scheduler.yaml or policies/boosts.yaml"
)


def read_model(
    path: str, data: bytes, kind: str
) -> tuple[BaseModel | None, SourceMap, list[Diagnostic]]:
    """Parse and validate one file.  The model is None when there is any error."""
    value, smap, diags = parse_yaml(path, data)
    if diags:
        return None, smap, diags
    model_cls = KINDS[kind]
    if not isinstance(value, dict):
        got: Any = type(value).__name__
        return None, smap, [Diagnostic(path, 1, 1, f"expected a mapping at the top, got {got}")]
    try:
        return model_cls.model_validate(value), smap, []
    except ValidationError as exc:
        return None, smap, validation_diagnostics(model_cls, exc, smap)
