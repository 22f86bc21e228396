"""Issue 32, item 2: text from a pull request never starts a workflow command in a CI log."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allotment.cli import common
from allotment.cli.main import main
from allotment.errors import CompileError, Diagnostic
from allotment.neutral import neutral, neutral_lines

# how many readers split lines: the runner (\n, \r), Python's splitlines (also \x85, \u2028...)
COMMAND_STARTS = ("::", "##[")


def starts_a_command(text: str) -> bool:
    return any(line.lstrip().startswith(COMMAND_STARTS) for line in text.splitlines())


@given(st.text())
def test_neutral_text_is_one_line_that_starts_no_command(text: str) -> None:
    out = neutral(text)
    assert len(out.splitlines()) <= 1
    assert not starts_a_command(out)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Zl", "Zp"))))
def test_neutral_leaves_ordinary_text_alone(text: str) -> None:
    if not text.lstrip().startswith(COMMAND_STARTS):
        assert neutral(text) == text


def test_neutral_writes_line_breaks_as_json_escapes() -> None:
    assert neutral("a\nb\r\u2028\x85\x1b") == "a\\nb\\r\\u2028\\u0085\\u001b"
    assert neutral("  ::add-mask::x") == "\\  ::add-mask::x"
    assert neutral_lines("ok\n::warning::x\n") == "ok\n\\::warning::x\n"


def test_diagnostic_message_with_a_workflow_command_is_one_inert_line() -> None:
    d = Diagnostic("budgets/a/budget.yaml", 1, 2, "bad\n::warning file=x::forged")
    assert d.format() == "budgets/a/budget.yaml:1:2: bad\\n::warning file=x::forged"


def test_error_message_with_a_workflow_command_is_printed_inert(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def boom(*_args: object) -> object:
        raise CompileError("cannot compile\n::error::forged\n##[add-mask]x")

    monkeypatch.setattr(common, "compile_repo", boom)
    assert main(["validate", "--repo", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "forged" in err and not starts_a_command(err)
