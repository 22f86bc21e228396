"""Entry point of ``allot``.  Each subcommand lives in its own ``cmd_*.py`` module with a
``register(subparsers)`` function; this file only wires them and maps errors to exit codes
(0 ok, 1 policy or check failed, 2 bad input or usage, 3 backend failure)."""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any

from allotment import __version__
from allotment._compiled import mode
from allotment.cli.common import HelpFormatter
from allotment.errors import AllotmentError, ConfigError
from allotment.neutral import neutral_lines

COMMANDS = (
    "validate",
    "compile",
    "schema",
    "simulate",
    "trace",
    "explain",
    "plan",
    "codeowners",
    "audit",
    "history",
    "reconcile",
    "status",
    "usage",
    "report",
    "serve",
    "replay",
)


_RST_LITERAL = re.compile(r"``([^`]+)``")


def plain(text: str) -> str:
    """Module docstrings double as ``--help`` text; show their RST literals as 'quoted'."""
    return _RST_LITERAL.sub(r"'\1'", text)


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its message but never a traceback.

    Every subcommand's parser is of this class too (argparse makes subparsers of the parent's
    class), so the help of every command is plain text, whatever its docstring holds."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def format_help(self) -> str:
        return plain(super().format_help())


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with ``only`` the parser of that one command.

    Importing every ``cmd_*`` module pulls in numpy, the Kubernetes client and the reconciler;
    ``allot plan`` on a warm cache needs none of them, and the import was most of its second.
    A named command parses exactly as in the whole parser (same subparser, same options);
    ``allot``, ``allot --help`` and an unknown word get the whole parser and its full list."""
    parser = _Parser(prog="allot", description="GPU-time budgets for shared GPU clusters.")
    parser.add_argument("--version", action="version", version=f"allot {__version__} ({mode()})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in (only,) if only in COMMANDS else COMMANDS:
        module = importlib.import_module(f"allotment.cli.cmd_{name}")
        module.register(sub)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word that is not an option, if it is one."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(command_of(words))
    argv = words
    args = parser.parse_args(argv)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
