"""Entry point of ``allot``.  Each subcommand lives in its own ``cmd_*.py`` module with a
``register(parser)`` function that adds its options; this file lists them, imports only the one
that runs, and maps errors to exit codes
(0 ok, 1 policy or check failed, 2 bad input or usage, 3 backend failure)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from allotment import __version__
from allotment._compiled import mode
from allotment.cli.help_text import Parser

# every command, in the order ``allot --help`` lists them, with its one line there; the command
# ``NAME`` lives in ``cmd_NAME.py``, imported only when it runs (``build_parser``)
COMMANDS: dict[str, str] = {
    "validate": "check budgets/, inventory/ and policies/",
    "compile": "compute shares and entitlements",
    "schema": "print the JSON Schema of a config file kind",
    "simulate": "replay a workload under a policy",
    "sweep": "simulate a grid of policy knob values over several seeds, locally or on Slurm",
    "trace": "import, generate and check canonical traces",
    "explain": "why a job waits, runs or was preempted",
    "plan": "show what a budget change does: share deltas, projected impact, approvers",
    "codeowners": "generate .github/CODEOWNERS from the budget tree",
    "audit": "check that every budget change on the branch was approved by an owner",
    "history": "timeline of a node's share and owners",
    "reconcile": "drive a cluster to the budget repository",
    "status": "the budget tree now, or the reconciler's status",
    "usage": "GPU-hours per team or user from the usage ledger",
    "report": "an HTML report of a saved run",
    "serve": "a live page and /metrics from the reconciler's state",
    "replay": "replay a trace on a real cluster",
}


def build_parser(load: tuple[str, ...] = tuple(COMMANDS)) -> argparse.ArgumentParser:
    """The parser of ``allot``, every command listed, the commands in ``load`` with their options.

    A command's module is imported only to add its options: the ``cmd_*`` modules pull in numpy,
    pydantic, the Kubernetes client and the reconciler, over a second of start-up, which ``allot
    --version``, ``allot --help`` and ``allot plan`` on a warm cache do not need.  A command not in
    ``load`` is listed by its line of ``COMMANDS`` only (the whole of what ``allot --help`` shows);
    a loaded one gets its module's docstring as description and ``register(p)`` adds the rest.
    A named command therefore parses exactly as in the whole parser (same subparser, options)."""
    parser = Parser(prog="allot", description="GPU-time budgets for shared GPU clusters.")
    parser.add_argument("--version", action="version", version=f"allot {__version__} ({mode()})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, summary in COMMANDS.items():
        if name not in load:
            sub.add_parser(name, help=summary)
            continue
        module = importlib.import_module(f"allotment.cli.cmd_{name}")
        module.register(sub.add_parser(name, help=summary, description=module.__doc__))
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option, if it is one."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def one_blas_thread() -> None:
    """Asks OpenBLAS for one thread unless the user chose a number.

    Why: numpy loads OpenBLAS, which starts a thread per core at import, and those threads spin
    between calls, counted as the process's CPU (1.2% of a 54-day Philly-shaped run, 6.9% of its
    trace read: callgrind, docs/benchmarks.md "Stop 47, the merged main").  allot calls no BLAS
    routine: numpy serves element-wise scores, sorts and searches, which run on the calling
    thread whatever the count, so the count changes no result.  Set before a command imports
    numpy; plan's worker processes inherit it."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: Sequence[str] | None = None) -> int:
    one_blas_thread()
    words = list(sys.argv[1:] if argv is None else argv)
    named = command_of(words)
    parser = build_parser(() if named is None else (named,))
    args = parser.parse_args(words)
    # imported once parsed: ``--version`` and ``--help`` have exited by then, without the
    # dataclasses and inspect modules that ``errors`` brings (a fifth of their start-up)
    from allotment.errors import AllotmentError, ConfigError
    from allotment.neutral import neutral_lines

    try:
        code: int = args.func(args)
        return code
    except ConfigError as exc:
        for d in exc.diagnostics:
            print(d.format(), file=sys.stderr)
        return exc.exit_code
    except AllotmentError as exc:
        print(neutral_lines(f"allot {args.command}: {exc}"), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a path the system refused (unwritable output, a file gone): named, exit 2
        where = f"{exc.filename}: " if exc.filename else ""
        print(neutral_lines(f"allot {args.command}: {where}{exc.strerror or exc}"), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
