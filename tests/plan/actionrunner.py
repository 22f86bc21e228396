"""Run a composite action's shell steps as the GitHub runner would, on this machine.

Steps that ``uses:`` another action (setup-python, upload/download-artifact, github-script) are
left to the caller; the ``install`` step is skipped because ``allot`` is already on ``PATH``.
Expressions are substituted only where the runner substitutes them in our actions: in ``env:``
values and ``working-directory`` (the scripts themselves never contain ``${{ }}``, which
``test_workflows`` checks), so the shell sees exactly what it would see in CI.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

import allotment

_EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


@dataclass
class ActionRun:
    action: Path
    workspace: Path
    inputs: dict[str, str]
    context: dict[str, str]  # "github.event.pull_request.number" -> "7", "runner.temp" -> ...
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)
    summary: Path | None = None

    def doc(self) -> dict[str, Any]:
        d = yaml.safe_load(self.action.read_text())
        assert isinstance(d, dict)
        return d

    def value(self, expr: str) -> str:
        if expr.startswith("inputs."):
            name = expr.removeprefix("inputs.")
            if name in self.inputs:
                return self.inputs[name]
            default = str(self.doc()["inputs"][name].get("default", ""))
            return _EXPR.sub(lambda m: self.value(m.group(1)), default)
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if m:
            return self.outputs.get(m.group(1), {}).get(m.group(2), "")
        return self.context[expr]

    def subst(self, text: str) -> str:
        return _EXPR.sub(lambda m: self.value(m.group(1)), str(text))

    def run(self, bin_dir: Path, only: frozenset[str] | None = None) -> None:
        """Run the shell steps in order (only those whose id is in ``only``, when given),
        stopping at the first that fails, as the runner does."""
        temp = Path(self.context["runner.temp"])
        temp.mkdir(parents=True, exist_ok=True)
        self.summary = temp / "step-summary.md"
        for i, step in enumerate(self.doc()["runs"]["steps"]):
            if "uses" in step or step.get("id") == "install":
                continue
            if only is not None and step.get("id") not in only:
                continue
            out_file = temp / f"output-{i}"
            out_file.write_text("")
            env = {
                "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
                "HOME": str(temp / "home"),
                "CI": "true",
                "GIT_TERMINAL_PROMPT": "0",  # a runner has no terminal to ask for a password
                "GITHUB_OUTPUT": str(out_file),
                "GITHUB_STEP_SUMMARY": str(self.summary),
                **{k: self.subst(v) for k, v in (step.get("env") or {}).items()},
            }
            cwd = self.workspace / self.subst(step.get("working-directory", "."))
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=cwd, env=env, capture_output=True, text=True,
            )
            self.logs.append(f"$ {step.get('name')}\n{proc.stdout}{proc.stderr}(exit {proc.returncode})")
            outs = dict(
                line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line
            )
            if "id" in step:
                self.outputs[step["id"]] = outs
            if proc.returncode != 0:
                self.logs.append(f"step {step.get('name')!r} failed")
                return


def allot_on_path(bin_dir: Path) -> Path:
    """An ``allot`` executable running the allotment this test imports."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    src = Path(allotment.__file__).resolve().parents[1]
    shim = bin_dir / "allot"
    shim.write_text(
        f"#!/bin/sh\nPYTHONPATH={src}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} "
        '-m allotment.cli.main "$@"\n'
    )
    shim.chmod(0o755)
    return bin_dir
