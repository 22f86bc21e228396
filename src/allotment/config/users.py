"""Who is a member of which leaf, and each user's default account.

A user may be in several leaves; then exactly one of them must list the user in ``default_for``
(that is where jobs without an explicit account are charged).  Built leaf by leaf while the tree
is walked.  Kept lean on purpose: a tree has ~50,000 memberships and almost all users are in one
leaf, so a position is only looked up when a problem is reported.
"""

from __future__ import annotations

from allotment.config.loaded import LoadedUser, Where
from allotment.config.models.budget import BudgetFile
from allotment.config.sourcemap import DocPath, SourceMap
from allotment.errors import Diagnostic


def _at(smap: SourceMap, path: DocPath) -> Where:
    line, col = smap.value(path)
    return Where(smap.file, line, col)


class Memberships:
    def __init__(self) -> None:
        self._first: dict[str, str] = {}  # user -> first leaf seen
        self._several: dict[str, list[str]] = {}  # user -> every leaf, when more than one
        self._default: dict[str, str] = {}
        self._files: dict[str, tuple[BudgetFile, SourceMap]] = {}
        self.diagnostics: list[Diagnostic] = []

    def add_leaf(self, name: str, model: BudgetFile, smap: SourceMap) -> None:
        self._files[name] = (model, smap)
        members = model.members
        unique = dict.fromkeys(members)
        if len(unique) != len(members):
            seen: set[str] = set()
            for i, user in enumerate(members):
                if user in seen:
                    self.diagnostics.append(
                        _at(smap, ("members", i)).diagnostic(f"member '{user}' is listed twice")
                    )
                seen.add(user)
        first = self._first
        for user in unique:
            prev = first.setdefault(user, name)
            if prev != name:
                self._several.setdefault(user, [prev]).append(name)
        chosen: set[str] = set()
        for i, user in enumerate(model.default_for):
            where = ("default_for", i)
            if user not in unique:
                self.diagnostics.append(
                    _at(smap, where).diagnostic(
                        f"'{user}' is in default_for but not in members of '{name}'"
                    )
                )
            elif user in chosen:
                self.diagnostics.append(_at(smap, where).diagnostic(f"'{user}' is listed twice"))
            elif user in self._default:
                self.diagnostics.append(
                    _at(smap, where).diagnostic(
                        f"user '{user}' already has default account '{self._default[user]}'"
                    )
                )
            else:
                chosen.add(user)
                self._default[user] = name

    def check(self) -> list[Diagnostic]:
        """Every problem found, including users in several leaves without a default."""
        out = list(self.diagnostics)
        for user, leaves in self._several.items():
            if user in self._default:
                continue
            names = ", ".join(sorted(leaves))
            for leaf in leaves:
                model, smap = self._files[leaf]
                out.append(
                    _at(smap, ("members", model.members.index(user))).diagnostic(
                        f"user '{user}' is in several leaves ({names}) and none lists it in "
                        "default_for"
                    )
                )
        return out

    def users(self) -> dict[str, LoadedUser]:
        """Each user's accounts (sorted) and default account, by user name (sorted)."""
        out = {}
        several, default = self._several, self._default
        for user in sorted(self._first):
            leaves = several.get(user)
            accounts = (self._first[user],) if leaves is None else tuple(sorted(leaves))
            out[user] = LoadedUser(user, accounts, default.get(user, accounts[0]))
        return out
