"""How ``allot``'s help reads: plain text, every option's default said once.

Standard library only, on purpose: ``allot --version`` and ``allot --help`` import this and
``cli/main.py`` and nothing else of the project's commands, so they answer in the time Python
takes to start (tests/config/test_cli_startup.py)."""

from __future__ import annotations

import argparse
import re
from typing import Any

_RST_LITERAL = re.compile(r"``([^`]+)``")


def plain(text: str) -> str:
    """Module docstrings double as ``--help`` text; show their RST literals as 'quoted'."""
    return _RST_LITERAL.sub(r"'\1'", text)


class HelpFormatter(argparse.HelpFormatter):
    """Says every option's default, unless its help already does (``default`` in the text)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if (
            text
            and "default" not in text
            and action.option_strings
            and action.nargs != 0
            and action.default not in (None, False, [], argparse.SUPPRESS)
        ):
            text += " (default: %(default)s)"
        return text


class RawDescriptionHelpFormatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """The same, keeping a description's own line breaks (usage blocks)."""


class Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its message but never a traceback.

    Every subcommand's parser is of this class too (argparse makes subparsers of the parent's
    class), so the help of every command is plain text, whatever its docstring holds."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def format_help(self) -> str:
        return plain(super().format_help())
