"""Turning a source's account, user and GPU-type names into names the config accepts.

Config names (budget leaves, GPU types) match ``^[a-z][a-z0-9_-]{0,39}$`` and user names
``^[a-z_][a-z0-9_.-]{0,31}$`` so they work as Slurm account and Unix user names.  A trace's
accounts must equal the leaves ``--repo-out`` writes, so every importer output is normalized the
same way: lowercase, other characters to ``-``, a letter prefix when the name starts with a digit
(SWF group 1 becomes ``group1`` by the importer, a bare ``7`` becomes ``a7``), cut to length.
Two source names that collapse to one get a short stable hash suffix so they stay apart.
"""

from __future__ import annotations

import hashlib
import re

_BAD = re.compile(r"[^a-z0-9_-]+")
_BAD_USER = re.compile(r"[^a-z0-9_.-]+")


def _suffix(raw: str) -> str:
    return hashlib.blake2b(raw.encode("utf-8"), digest_size=3).hexdigest()


class NameMapper:
    """Remembers each source name's config name so the mapping is one-to-one and stable."""

    def __init__(self, *, kind: str, max_len: int, prefix: str) -> None:
        self.kind, self.max_len, self.prefix = kind, max_len, prefix
        self._out: dict[str, str] = {}
        self._taken: dict[str, str] = {}

    def __call__(self, raw: str) -> str:
        got = self._out.get(raw)
        if got is not None:
            return got
        name = self._clean(raw)
        salt = 0
        while name in self._taken:
            name = f"{name[: self.max_len - 7]}-{_suffix(f'{raw}#{salt}' if salt else raw)}"
            salt += 1
        self._out[raw] = name
        self._taken[name] = raw
        return name

    def _clean(self, raw: str) -> str:
        s = raw.strip().lower()
        s = (_BAD_USER if self.kind == "user" else _BAD).sub("-", s).strip("-.")
        first_ok = "abcdefghijklmnopqrstuvwxyz" + ("_" if self.kind == "user" else "")
        if not s or s[0] not in first_ok:
            s = self.prefix + s
        if len(s) > self.max_len:
            s = f"{s[: self.max_len - 7]}-{_suffix(raw)}"
        return s

    def mapping(self) -> dict[str, str]:
        """Source name -> config name, for the import summary."""
        return dict(self._out)


def account_mapper() -> NameMapper:
    return NameMapper(kind="account", max_len=40, prefix="a")


def gpu_type_mapper() -> NameMapper:
    return NameMapper(kind="gpu_type", max_len=40, prefix="g")


def user_mapper() -> NameMapper:
    return NameMapper(kind="user", max_len=32, prefix="u")
