"""``allot schema KIND``: print the JSON Schema of one config file kind, for editors
(``# yaml-language-server: $schema=<file>``).  Prints the copy shipped in the package."""

from __future__ import annotations

import argparse
import sys
from importlib import resources

from allotment.config.kinds import KINDS
from allotment.config.schemas import schema_file_name, schema_text


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "kind", choices=sorted(KINDS), metavar="KIND", help="one of: " + ", ".join(sorted(KINDS))
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    shipped = resources.files("allotment.schemas").joinpath(schema_file_name(args.kind))
    text = shipped.read_text(encoding="utf-8") if shipped.is_file() else schema_text(args.kind)
    sys.stdout.write(text)
    return 0
