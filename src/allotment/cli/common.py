"""Helpers every subcommand shares: the ``--repo`` and ``--at`` options and loading the compiled
config.  This is the edge where today's date is read, so nothing below it needs a clock."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from allotment.compile.compiler import compile_repo
from allotment.compile.model import CompiledConfig
from allotment.errors import Diagnostic, UsageError
from allotment.sim.overrides import knob_names


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


_CONFIG_DIRS = ("budgets", "inventory", "policies")


def find_config_root(start: Path) -> Path:
    """The config repository holding ``start``: the nearest folder, ``start`` or above it, with
    a ``budgets/``, ``inventory/`` or ``policies/`` folder, as git finds its root (so ``allot
    validate`` from ``budgets/ai2/`` checks the whole repository, not an empty one).  The search
    stops at a git work tree's top; when nothing is found, ``start`` itself (and its errors)."""
    found = config_root_near(start)
    return found if found is not None else start


def config_root_near(start: Path) -> Path | None:
    """``find_config_root`` without the fallback: None when no config repository holds
    ``start`` (``allot trace check`` then checks the format only)."""
    here = start.resolve()
    for d in (here, *here.parents):
        if any((d / name).is_dir() for name in _CONFIG_DIRS):
            return d if d != here else start
        if (d / ".git").exists():
            break
    return None


def add_repo_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repo",
        metavar="DIR",
        default=find_config_root(Path(".")),
        type=Path,
        help="config repository holding budgets/ inventory/ policies/ (default: the one "
        "holding the current folder, found upwards as git does)",
    )


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def add_at_argument(parser: argparse.ArgumentParser, default: dt.date | None = None, help: str | None = None) -> None:
    parser.add_argument(
        "--at",
        metavar="DATE",
        type=_date,
        default=default,
        help=help or "evaluate budget validity dates on this day (default: today, UTC)",
    )


def at_date(args: argparse.Namespace) -> dt.date:
    at: dt.date | None = getattr(args, "at", None)
    return at if at is not None else dt.datetime.now(dt.UTC).date()


def print_warnings(warnings: tuple[Diagnostic, ...]) -> None:
    for w in warnings:
        print(w.format(), file=sys.stderr)


def load_compiled(args: argparse.Namespace, revision: str | None = None) -> CompiledConfig:
    """Read, validate and compile ``args.repo`` at ``args.at`` (today by default); print warnings
    to stderr.  Raises ConfigError (exit 2) with every problem."""
    repo = Path(getattr(args, "repo", "."))
    if not repo.is_dir():
        raise UsageError(f"--repo {repo}: not a folder")
    config = compile_repo(repo, at_date(args), revision)
    print_warnings(config.warnings)
    return config


#: ``--set`` of ``allot simulate`` and ``allot explain``: the public knob names, as the YAML
SET_HELP = (
    "override a policy knob for this run (repeatable), named as in policies/scheduler.yaml: "
    f"{knob_names()}; e.g. --set lookback=3d"
)
