"""Where the base revision sets ``plan_workload``: the ``file:line:col`` that every error about
the plan's history names, as every other bad-input message does.

The setting is read from the compiled base, which keeps no positions, so an error about it
(the file is not in the base, a ledger of a cluster billed at several weights) reads the base's
``policies/scheduler.yaml`` once more, from the same revision, and asks its source map where the
value was written: the cluster's own setting if it has one (``clusters: NAME: plan_workload``),
else the file's.  Only on an error: a plan that replays its history never pays for it."""

from __future__ import annotations

from pathlib import Path

from allotment.config.yamlsafe import parse_yaml

POLICY_FILE = "policies/scheduler.yaml"


def where(repo: Path, revision: str, cluster: str) -> str:
    """``policies/scheduler.yaml:LINE:COL`` of the ``plan_workload`` value that applies to
    ``cluster`` in ``revision`` of the config repository at ``repo`` (the file alone if it
    cannot be read: the error it comes with still says what is wrong)."""
    import git

    try:
        data = (git.Repo(repo, search_parent_directories=True).commit(revision).tree / POLICY_FILE).data_stream.read()
    except (KeyError, ValueError, git.GitError):
        return POLICY_FILE
    value, smap, diagnostics = parse_yaml(POLICY_FILE, data)
    if diagnostics or not isinstance(value, dict):
        return POLICY_FILE
    clusters = value.get("clusters")
    own = clusters.get(cluster) if isinstance(clusters, dict) else None
    path: tuple[str, ...] = ("plan_workload",)
    if isinstance(own, dict) and "plan_workload" in own:
        path = ("clusters", cluster, "plan_workload")
    line, col = smap.value(path)
    return f"{POLICY_FILE}:{line}:{col}"
