"""Slurm hostlist expressions (``n[1-4]``, ``gpu[001-003,010]``, ``a,b``) expanded to node names.

Written here rather than shelling out to ``scontrol show hostnames`` so validation works without
Slurm and never runs a program.  Zero padding follows the width of the lower bound, as Slurm does.
"""

from __future__ import annotations

import re

MAX_HOSTS = 100_000
_ITEM = re.compile(r"[a-z0-9-]*(\[[0-9,\-]+\][a-z0-9-]*)*")
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,62}$")


def _split_top(expr: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _ranges(body: str) -> list[str]:
    out: list[str] = []
    for piece in body.split(","):
        lo, sep, hi = piece.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ValueError(f"bad range {piece!r}")
        if not sep:
            out.append(lo)
            continue
        a, b = int(lo), int(hi)
        if b < a:
            raise ValueError(f"range {piece!r} goes backwards")
        if b - a + len(out) >= MAX_HOSTS:
            raise ValueError(f"expands to more than {MAX_HOSTS} names")
        width = len(lo)
        out.extend(str(i).zfill(width) for i in range(a, b + 1))
    return out


def _expand_item(item: str) -> list[str]:
    m = re.search(r"\[([^\]]*)\]", item)
    if m is None:
        return [item]
    head, tail = item[: m.start()], item[m.end() :]
    return [head + r + rest for r in _ranges(m.group(1)) for rest in _expand_item(tail)]


def expand_hostlist(expr: str) -> tuple[str, ...]:
    """Return node names in the written order.  Raises ValueError with a user-facing message."""
    names: list[str] = []
    for item in _split_top(expr.strip()):
        if not item or not _ITEM.fullmatch(item):
            raise ValueError(f"malformed hostlist {expr!r}")
        names.extend(_expand_item(item))
        if len(names) > MAX_HOSTS:
            raise ValueError(f"hostlist {expr!r} expands to more than {MAX_HOSTS} names")
    for name in names:
        if not _NAME.match(name):
            raise ValueError(f"node name {name!r} from {expr!r} is not a valid host name")
    return tuple(names)


def numbered_names(prefix: str, count: int, digits: int, first_index: int) -> tuple[str, ...]:
    """``prefix`` + zero-padded index: stable names for a node group given by count."""
    return tuple(f"{prefix}{str(i).zfill(digits)}" for i in range(first_index, first_index + count))
