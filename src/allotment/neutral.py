"""Text from a pull request made inert for a log, where a CI runner reads commands.

A GitHub runner treats any line of a job's output that starts (after blanks) with ``::`` as a
workflow command (``::warning file=...::``, ``::add-mask::``, ``::stop-commands::``), and the
older ``##[`` form likewise; so a folder name or a YAML key holding a newline and ``::error``
would forge an annotation or mask the log's text.  Everything a PR controls (paths, keys,
values, messages that quote them) reaches a log through these two functions, called once at the
output edge (``Diagnostic.format``, the CLI's error lines, ``allot plan`` on stdout).

Line breaks and other control characters are written as JSON writes them (``\\n``,
``\\u001b``), so the text stays one line, reads as what the file holds, and JSON on stdout
stays JSON; a line that would still start a command gets a leading backslash.  The Markdown
comment has its own escaping (``plan/escape.py``).
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_COMMAND_PREFIXES = ("::", "##[")


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or f"\\u{ord(c):04x}"  # JSON's escapes: stdout may carry JSON


def neutral(text: str) -> str:
    """One line that no runner reads as a command, whatever ``text`` holds."""
    line = _CONTROL.sub(_escape, text)
    return "\\" + line if line.lstrip().startswith(_COMMAND_PREFIXES) else line


def neutral_lines(text: str) -> str:
    """``neutral`` for each line of a multi-line text (a rendered plan, an error spanning lines),
    keeping its line breaks: no line of the result starts a command."""
    return "\n".join(neutral(line) for line in text.split("\n"))
