"""Render a CompiledConfig as the sacctmgr commands and slurm.conf lines that carry it
(``allot compile --target slurm``).  Placeholder until the Slurm backend lands."""

from __future__ import annotations

from allotment.compile.model import CompiledConfig


def render_slurm(config: CompiledConfig, cluster: str | None = None) -> str:
    raise NotImplementedError("the Slurm rendering lands with the Slurm backend (issue 5)")
