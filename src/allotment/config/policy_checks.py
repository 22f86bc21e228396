"""Cross-checks on scheduler knobs, after per-cluster overrides are applied: a minimum-runtime
cap longer than the lookback window would let one job's protected time exceed the window that
judges it, so it is refused; likewise a default minimum runtime above the cap, and a fair-share
period longer than the lookback (usage would be re-read less often than the window it judges
turns over: a reclaim justified by it could wait longer than the window itself).  A session's
grace longer than the minimum-runtime cap would hold the GPUs another job is owed longer than any
job is ever protected, and an interactive class that recognises no job is a knob that does
nothing (docs/design/interactive.md); both are refused.  So is a session pool that leaves no node of
its cluster for other work: work the policy may not stop never borrows the pool, so it would wait forever."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from allotment.config.loaded import Where
from allotment.config.models.policy import PolicyKnobs, SchedulerFile
from allotment.config.sourcemap import DocPath, SourceMap
from allotment.durations import format_duration, parse_duration
from allotment.errors import Diagnostic

DEFAULTS = {"lookback": "7d", "min_runtime_cap": "8h", "default_min_runtime": "2h", "fairshare_period": "5m",
            "interactive.grace": "0s"}


def _get(knobs: PolicyKnobs, key: str) -> str | None:
    """A knob by its dotted path (``interactive.grace``); None when unset on the way."""
    value: object = knobs
    for part in key.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value if isinstance(value, str) else None


def _resolved(
    base: PolicyKnobs, over: PolicyKnobs | None, prefix: DocPath, smap: SourceMap | None
) -> dict[str, tuple[int, DocPath | None]]:
    out: dict[str, tuple[int, DocPath | None]] = {}
    for key, default in DEFAULTS.items():
        value: str = default
        where: DocPath | None = None
        path = tuple(key.split("."))
        if (v := _get(base, key)) is not None:
            value, where = v, path
        if over is not None and (v := _get(over, key)) is not None:
            value, where = v, (*prefix, *path)
        out[key] = (parse_duration(value), where)
    return out


def check_scheduler(
    model: SchedulerFile, smap: SourceMap | None, cluster_names: tuple[str, ...],
    node_counts: Mapping[str, int] | None = None,
) -> list[Diagnostic]:
    diags: list[Diagnostic] = []

    def at(path: DocPath | None) -> Where:
        if smap is None:
            return Where("policies/scheduler.yaml", 0, 0)
        line, col = smap.value(path or ())
        return Where(smap.file, line, col)

    scopes: list[tuple[str, PolicyKnobs | None, DocPath]] = [("", None, ())]
    for name, knobs in sorted(model.clusters.items()):
        if name not in cluster_names:
            line, col = smap.key(("clusters", name)) if smap else (0, 0)
            diags.append(
                Diagnostic(
                    smap.file if smap else "policies/scheduler.yaml",
                    line,
                    col,
                    f"override for unknown cluster '{name}' (known: {', '.join(cluster_names)})",
                )
            )
            continue
        scopes.append((f" on cluster '{name}'", knobs, ("clusters", name)))
    # (knob, the knob it may not exceed, what that one is called): each refused where it is set
    limits = (("min_runtime_cap", "lookback", "the lookback window"),
              ("fairshare_period", "lookback", "the lookback window"),
              ("default_min_runtime", "min_runtime_cap", "min_runtime_cap"),
              ("interactive.grace", "min_runtime_cap", "min_runtime_cap"))
    for label, over, prefix in scopes:
        sec = over.interactive if over is not None else model.interactive
        if sec is not None and sec.kinds == [] and not sec.partitions and sec.shape is None:
            where = (*prefix, "interactive", "kinds")
            diags.append(at(where).diagnostic(
                f"interactive recognises no job{label}: give kinds, partitions or shape"))
        diags.extend(_pool_check(model, over, prefix, label, node_counts or {}, at))
        r = _resolved(model, over, prefix, smap)
        for knob, limit, called in limits:
            (value, value_at), (bound, bound_at) = r[knob], r[limit]
            if value > bound:
                diags.append(
                    at(value_at or bound_at).diagnostic(
                        f"{knob} {format_duration(value)} is longer than {called} "
                        f"{format_duration(bound)}{label}"
                    )
                )
    return diags


def _pool_check(model: SchedulerFile, over: PolicyKnobs | None, prefix: DocPath, label: str,
                node_counts: Mapping[str, int], at: Callable[[DocPath | None], Where]) -> list[Diagnostic]:
    """``interactive.pool`` must leave a node of every cluster it applies to for other work (a
    job the policy may not stop never borrows the pool, so it would wait forever): where it is set
    per cluster, that cluster; where it is set globally, every cluster that does not set its own."""
    out: list[Diagnostic] = []
    if over is not None:
        pool = over.interactive.pool if over.interactive is not None else None
        if pool is None:
            return out
        name = prefix[-1]
        has = node_counts.get(str(name))
        if has is not None and pool >= has:
            out.append(at((*prefix, "interactive", "pool")).diagnostic(_too_many(pool, str(name), has)))
        return out
    pool = model.interactive.pool if model.interactive is not None else None
    if pool is None:
        return out
    for name, has in sorted(node_counts.items()):
        mine = model.clusters.get(name)
        if mine is not None and mine.interactive is not None and mine.interactive.pool is not None:
            continue  # the cluster sets its own
        if pool >= has:
            out.append(at(("interactive", "pool")).diagnostic(_too_many(pool, name, has)))
    return out


def _too_many(pool: int, cluster: str, has: int) -> str:
    return f"interactive.pool {pool} leaves no node of cluster '{cluster}' ({has}) for other work: at most {has - 1}"
