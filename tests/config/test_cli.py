"""``allot validate``, ``allot compile`` and ``allot schema`` end to end through ``main``."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from allotment.cli.main import COMMANDS, build_parser, main
from tests.config.corpus import BASE

AT = ["--at", "2026-06-01"]
# the bundled example is dated: its boost runs in the week of 2026-11-30, at most boost_max from it
BUNDLED_AT = ["--at", "2026-11-30"]


def test_validate_bundled_example_exits_zero(
    repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "--repo", str(repo_root), *BUNDLED_AT]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("ok: 28 budget nodes (15 leaves)")
    assert out.err == ""


def test_compile_json_is_parseable_and_names_the_revision(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compile", "--repo", str(BASE), *AT, "--format", "json", "--revision", "r1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["revision"] == "r1"
    assert [n["name"] for n in data["nodes"]] == ["acme", "ops", "research", "language", "vision"]


def test_compile_table_shows_percentages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", "--repo", str(BASE), *AT]) == 0
    out = capsys.readouterr().out
    assert "  research    75.0%" in out


def test_compile_target_slurm_calls_the_slurm_renderer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import allotment.cli.cmd_compile as cmd

    seen = []
    monkeypatch.setattr(cmd, "render_slurm", lambda cfg, cluster: seen.append(cluster) or "X\n")
    assert main(["compile", "--repo", str(BASE), *AT, "--target", "slurm", "--cluster", "big"]) == 0
    assert seen == ["big"]
    assert capsys.readouterr().out == "X\n"


def test_warnings_go_to_stderr_and_exit_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "r"
    shutil.copytree(BASE, repo)
    (repo / "budgets/acme/ops/budget.yaml").write_text("owners: [ops@acme.example]\n")
    assert main(["compile", "--repo", str(repo), *AT, "--format", "json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["root"] == "acme"
    assert out.err == "budgets/acme/ops/budget.yaml:1:1: warning: leaf 'ops' has no members\n"


def test_errors_are_all_reported_sorted_and_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "r"
    shutil.copytree(BASE, repo)
    (repo / "budgets/acme/ops/budget.yaml").write_text("owners: [x]\nmembers: [Dave]\n")
    (repo / "policies/scheduler.yaml").write_text("lookback: soon\n")
    assert main(["compile", "--repo", str(repo), *AT]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.splitlines()
    assert lines == sorted(lines)
    assert len(lines) == 3


def test_missing_repo_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "--repo", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_bad_date_argument_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--at", "tomorrow"])
    assert exc.value.code == 2
    assert "expected a date YYYY-MM-DD" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["budget", "cluster", "gpu-types", "scheduler", "boosts"])
def test_schema_prints_the_shipped_schema(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", kind]) == 0
    assert json.loads(capsys.readouterr().out)["$schema"].startswith("https://json-schema.org/")


def test_schema_unknown_kind_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["schema", "budgets"])
    assert exc.value.code == 2


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and every subcommand's parser, at any depth (``allot trace import``)."""
    out = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                out += _all_parsers(sub)
    return out


def _option_problems(p: argparse.ArgumentParser) -> list[str]:
    bad = []
    formatter = p._get_formatter()
    for a in p._actions:
        if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = "/".join(a.option_strings) or a.dest
        shown = formatter._get_help_string(a)  # type: ignore[attr-defined]
        if not a.help or not shown:
            bad.append(f"{p.prog} {name}: no help text")
        elif (
            a.option_strings
            and a.default not in (None, False, [], argparse.SUPPRESS)
            and a.nargs != 0
            and "default" not in shown
        ):
            bad.append(f"{p.prog} {name}: help does not say its default ({a.default!r})")
    return bad


def test_every_help_is_plain_text_and_every_option_is_explained(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parsers = _all_parsers(build_parser())
    assert len(parsers) > len(COMMANDS)  # the walk found the subcommands and their children
    problems: list[str] = []
    for p in parsers:
        text = p.format_help()
        if "``" in text:
            problems.append(f"{p.prog}: RST double backticks in --help")
        problems += _option_problems(p)
    assert problems == []


def test_help_of_a_subcommand_shows_no_rst_markup(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["simulate", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and "--set" in out and "lookback" in out


def test_validate_from_a_subfolder_finds_the_repository_root(
    repo_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    copy = tmp_path / "config"
    for part in ("budgets", "inventory", "policies"):
        shutil.copytree(repo_root / part, copy / part)
    (copy / ".git").mkdir()  # the search stops at a work tree's top
    sub = next(p for p in (copy / "budgets").rglob("*") if p.is_dir())
    monkeypatch.chdir(sub)
    assert main(["validate", *BUNDLED_AT]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("ok: 28 budget nodes") and out.err == ""


def test_validate_outside_any_repository_still_reports_the_missing_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["validate", *AT]) == 2
    assert "no budget tree" in capsys.readouterr().err


def test_set_errors_name_the_public_knobs_not_the_model_fields(
    repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["simulate", "--repo", str(repo_root), *BUNDLED_AT, "--scenario", "ai2", "--days", "0.01"]
    assert main([*args, "--set", "lookback_s=3d"]) == 2
    err = capsys.readouterr().err
    known = err.split("known: ", 1)[1]
    assert "lookback, " in known and "_s," not in known and "_s\n" not in known
    assert "Traceback" not in err
    assert main([*args, "--set", "preemption.non_resumable=sometimes"]) == 2
    assert "expected requeue, cancel or run_to_completion" in capsys.readouterr().err


def test_a_named_command_parses_as_in_the_whole_parser() -> None:
    """``main`` builds only the named command's parser (the warm-plan start-up); every command's
    subparser, its options and their defaults, must then be exactly the whole parser's."""

    def shape(p: argparse.ArgumentParser) -> list[tuple[str, ...]]:
        return [(p.prog, a.dest, *a.option_strings, repr(a.default)) for p in _all_parsers(p) for a in p._actions]

    def of(name: str, shapes: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        return [s for s in shapes if s[0] == f"allot {name}" or s[0].startswith(f"allot {name} ")]

    whole = shape(build_parser())
    alone = [s for name in COMMANDS for s in of(name, shape(build_parser((name,))))]
    assert sorted(alone) == sorted(s for name in COMMANDS for s in of(name, whole))
    assert len(alone) > 3 * len(COMMANDS)  # options, not only the listing


def test_the_command_is_the_first_word_that_is_not_an_option() -> None:
    from allotment.cli.main import command_of

    assert command_of(["plan", "--base", "main"]) == "plan"
    assert command_of(["--version"]) is None
    assert command_of(["nonsense", "plan"]) is None  # the whole parser then says what is valid
