"""``allot validate``: check a config repository; every error at once, ``file:line:col: message``,
exit 2; warnings only, exit 0.  Compiles too, since some warnings depend on the date."""

from __future__ import annotations

import argparse

from allotment.cli.common import add_at_argument, add_repo_argument, load_compiled


def register(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p)
    add_at_argument(p)
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing when valid")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = load_compiled(args)
    if not args.quiet:
        leaves = sum(1 for n in config.nodes if n.leaf)
        print(
            f"ok: {len(config.nodes)} budget nodes ({leaves} leaves), {len(config.users)} users, "
            f"{len(config.clusters)} clusters; {len(config.warnings)} warnings"
        )
    return 0
