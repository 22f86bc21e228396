"""The timeline of one node: each first-parent commit that changed its share or owners.

Walks the branch newest to oldest so that a renamed node is followed back under its old name
(the diff's rename detection says when), then prints oldest first.  Each line carries the commit
date, the commit, its author, its approvers and the change (before -> after).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import git

from allotment.compile.model import BudgetNode, CompiledConfig
from allotment.errors import AllotmentError, UsageError
from allotment.plan.audit import commit_authors, first_parent_commits
from allotment.plan.diff import diff_configs
from allotment.plan.revision import CommitCompiler, config_key, has_config
from allotment.plan.trailers import approvers


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    date: str  # commit date, UTC, YYYY-MM-DD
    sha: str
    author: str  # everyone who wrote the change (for a merge: the merged commits' authors too)
    approvers: tuple[str, ...]
    name: str  # the node's name in that commit
    what: str  # "added", "removed", "share", "owners", "renamed", "invalid config"
    before: str
    after: str


def _state(config: CompiledConfig | None, name: str) -> BudgetNode | None:
    if config is None:
        return None
    try:
        return config.node(name)
    except KeyError:
        return None


def _share(n: BudgetNode) -> str:
    return f"{n.weight:g} ({n.share:.1%} of {n.parent or 'root'})"


def history(repo: git.Repo, node: str, rev: str = "HEAD") -> tuple[HistoryEvent, ...]:
    compiler = CommitCompiler(repo)
    commits = [c for c in first_parent_commits(repo, rev, None) if has_config(repo, c.hexsha)]
    configs: list[CompiledConfig | None] = []
    last_key = None
    for c in commits:
        key = config_key(repo, c.hexsha)
        if key == last_key and configs:
            configs.append(configs[-1])
            continue
        last_key = key
        at = dt.datetime.fromtimestamp(c.committed_date, tz=dt.UTC).date()
        try:
            configs.append(compiler.compile(c.hexsha, at))
        except AllotmentError:
            configs.append(None)  # an invalid commit: the node's state is unknown there
    if not any(_state(x, node) for x in configs):
        raise UsageError(f"no node named {node!r} in the history of {rev}")
    events: list[HistoryEvent] = []
    name = node
    for i in range(len(commits) - 1, -1, -1):
        after_cfg = configs[i]
        before_cfg = configs[i - 1] if i > 0 else None
        if after_cfg is before_cfg:
            continue
        c = commits[i]
        old_name = name
        if before_cfg is not None and after_cfg is not None:
            old_name = dict(
                (new, old) for old, new in diff_configs(before_cfg, after_cfg).renamed
            ).get(name, name)
        new_state, old_state = _state(after_cfg, name), _state(before_cfg, old_name)
        common = (
            dt.datetime.fromtimestamp(c.committed_date, tz=dt.UTC).date().isoformat(),
            c.hexsha,
            ", ".join(commit_authors(repo, c)),
            approvers(str(c.message)),
            name,
        )
        if after_cfg is None:
            events.append(HistoryEvent(*common, "invalid config", "", ""))
        elif old_name != name:
            events.append(HistoryEvent(*common, "renamed", old_name, name))
        if new_state is not None and old_state is None and (before_cfg is not None or i == 0):
            events.append(HistoryEvent(*common, "added", "", _share(new_state)))
        elif new_state is None and old_state is not None and after_cfg is not None:
            events.append(HistoryEvent(*common, "removed", _share(old_state), ""))
        elif new_state is not None and old_state is not None:
            if (old_state.weight, round(old_state.share, 9)) != (
                new_state.weight,
                round(new_state.share, 9),
            ):
                events.append(HistoryEvent(*common, "share", _share(old_state), _share(new_state)))
            if sorted(old_state.owners) != sorted(new_state.owners):
                events.append(
                    HistoryEvent(
                        *common,
                        "owners",
                        ", ".join(sorted(old_state.owners)),
                        ", ".join(sorted(new_state.owners)),
                    )
                )
        name = old_name
    return tuple(reversed(events))
