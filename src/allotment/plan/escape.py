"""Escaping for text that lands in a GitHub Markdown comment.

Team names, owners and file names come from a pull request, i.e. from anyone.  Inside a comment
they must stay text: no HTML (``<img onerror=...>``), no Markdown structure (a ``|`` would break
a table, ``[x](javascript:..)`` would make a link), no ``@`` mentions that ping people, no
newlines that start a new block.  Jinja's autoescape handles HTML; this adds the Markdown part.
"""

from __future__ import annotations

import html

_MD_SPECIAL = "\\`*_[]|~#!{}"
_TABLE = str.maketrans({c: "\\" + c for c in _MD_SPECIAL})


def md_escape(text: str) -> str:
    """Plain text -> Markdown+HTML-safe text that renders as the same characters."""
    one_line = " ".join(text.split()) if any(c in text for c in "\r\n\t\v\f") else text
    marked = one_line.translate(_TABLE)
    # quote=False: values never land inside an HTML attribute, and "team's" should read as written
    return html.escape(marked, quote=False).replace("@", "&#64;")


def code_escape(text: str) -> str:
    """Text for inside a Markdown code span, shown exactly as written.

    CommonMark decodes no entity and parses no HTML inside a code span: ``&#x27;`` would show
    as those six characters, and ``<b>`` already shows as text.  So nothing is HTML-escaped here;
    only a backtick (which would end the span, and cannot be escaped inside one) is replaced,
    and line breaks are collapsed so the span stays on its line.
    """
    return " ".join(text.replace("`", "'").split())


def comment_escape(text: str) -> str:
    """Text for inside an HTML comment (the hidden marker): it must not end the comment."""
    return html.escape(" ".join(text.split()), quote=True).replace("--", "-&#45;")
