"""`allot codeowners [--check]`: generate .github/CODEOWNERS from the budget tree.

``--check`` changes nothing and exits 1 when the committed file is out of date (CI runs it).
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from allotment.cli.cmd_plan import write_output
from allotment.cli.common import add_repo_argument
from allotment.compile.compiler import compile_config
from allotment.config.files import read_repo_files
from allotment.config.loader import load_config
from allotment.errors import PolicyViolation
from allotment.plan.codeowners import generate

TARGET = Path(".github") / "CODEOWNERS"


def register(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Write .github/CODEOWNERS so that a change under budgets/.../N/ needs a "
        "review from an owner of N, and inventory/policies one from the platform team."
    )
    add_repo_argument(p)
    p.add_argument("--check", action="store_true", help="exit 1 if the file is out of date")
    p.add_argument("--stdout", action="store_true", help="print instead of writing the file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Owners do not depend on the date; a fixed date keeps the output independent of the clock,
    # and the config is loaded without one, so a dated check (a boost's expiry against
    # boost_max) does not judge this fixed day.
    config = compile_config(load_config(read_repo_files(args.repo)), dt.date(2000, 1, 1))
    text = generate(config)
    target = args.repo / TARGET
    if args.check:
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if current != text:
            raise PolicyViolation(f"{TARGET} is out of date; run `allot codeowners` and commit it")
        return 0
    if args.stdout:
        write_output(text, None)
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    write_output(text, target)
    return 0
