"""Cross-checks on scheduler knobs, after per-cluster overrides are applied: a minimum-runtime
cap longer than the lookback window would let one job's protected time exceed the window that
judges it, so it is refused; likewise a default minimum runtime above the cap, and a fair-share
period longer than the lookback (usage would be re-read less often than the window it judges
turns over: a reclaim justified by it could wait longer than the window itself).  A session's
grace longer than the minimum-runtime cap would hold the GPUs another job is owed longer than any
job is ever protected, and an interactive class that recognises no job is a knob that does
nothing (docs/design/interactive.md); both are refused.  So is a session pool that names a node its
cluster lacks or leaves no node of it for other work (``config.pool_nodes``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from allotment.config.loaded import Where
from allotment.config.models.policy import PolicyKnobs, SchedulerFile
from allotment.config.pool_nodes import pool_problems
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
    node_names: Mapping[str, tuple[str, ...]] | None = None,
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
        diags.extend(_pool_check(model, over, prefix, node_names or {}, at))
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


def _pool_check(model: SchedulerFile, over: PolicyKnobs | None, prefix: DocPath,
                node_names: Mapping[str, tuple[str, ...]], at: Callable[[DocPath | None], Where]) -> list[Diagnostic]:
    """``interactive.pool`` on every cluster it applies to (``config.pool_nodes``): where it is
    set per cluster, that cluster; where it is set globally, every cluster that does not set its
    own.  A problem with one listed node is reported at that entry, one with the whole pool at
    the pool."""
    if over is not None:
        pool = over.interactive.pool if over.interactive is not None else None
        name = str(prefix[-1])
        targets = [name] if pool is not None and name in node_names else []
    else:
        pool = model.interactive.pool if model.interactive is not None else None
        targets = [n for n in sorted(node_names)
                   if not ((mine := model.clusters.get(n)) is not None and mine.interactive is not None
                           and mine.interactive.pool is not None)]  # a cluster that sets its own
    out: list[Diagnostic] = []
    if pool is None:
        return out
    where = (*prefix, "interactive", "pool")
    for name in targets:
        for p in pool_problems(pool, name, node_names[name]):
            out.append(at(where if p.item is None else (*where, p.item)).diagnostic(p.message))
    return out
