"""``allot --version`` and ``allot --help`` start as fast as Python does: they import none of the
commands' modules nor the libraries those bring (cli/main.py, ``build_parser``).  Checked by what
a fresh interpreter has imported, not by a timing, so the test fails whatever the machine's load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import allotment
from allotment.cli.main import COMMANDS

SRC = Path(allotment.__file__).resolve().parent.parent

# what the commands bring and a start-up must not: third-party libraries and the project's layers
HEAVY = ("numpy", "pydantic", "yaml", "ruamel", "jsonschema", "jinja2", "git", "kubernetes", "networkx",
         "prometheus_client", "dataclasses", "inspect", "importlib.resources")  # fmt: skip
LAYERS = ("config", "compile", "core", "traces", "sim", "backends", "reconcile", "plan", "legible")


def _imported_by(argv: list[str]) -> list[str]:
    """The modules a fresh interpreter holds after ``allot ARGV`` has exited."""
    code = (
        "import json, sys\n"
        "from allotment.cli.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout.splitlines()[-1]))


def _heavy(modules: list[str]) -> list[str]:
    heavy = [m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY]
    layers = [m for m in modules if m.startswith("allotment.") and m.split(".")[1] in LAYERS]
    commands = [m for m in modules if m.startswith("allotment.cli.cmd_")]
    return heavy + layers + commands


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_version_and_help_import_no_command_and_no_library(argv: list[str]) -> None:
    assert _heavy(_imported_by(argv)) == []


def test_a_command_imports_its_own_module_only() -> None:
    modules = _imported_by(["schema", "--help"])
    assert [m for m in modules if m.startswith("allotment.cli.cmd_")] == ["allotment.cli.cmd_schema"]
    assert len(COMMANDS) > 1
