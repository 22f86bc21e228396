"""Cross-checks on scheduler knobs, after per-cluster overrides are applied: a minimum-runtime
cap longer than the lookback window would let one job's protected time exceed the window that
judges it, so it is refused; likewise a default minimum runtime above the cap, and a fair-share
period longer than the lookback (usage would be re-read less often than the window it judges
turns over: a reclaim justified by it could wait longer than the window itself)."""

from __future__ import annotations

from allotment.config.loaded import Where
from allotment.config.models.policy import PolicyKnobs, SchedulerFile
from allotment.config.sourcemap import DocPath, SourceMap
from allotment.durations import format_duration, parse_duration
from allotment.errors import Diagnostic

DEFAULTS = {"lookback": "7d", "min_runtime_cap": "8h", "default_min_runtime": "2h", "fairshare_period": "5m"}


def _resolved(
    base: PolicyKnobs, over: PolicyKnobs | None, prefix: DocPath, smap: SourceMap | None
) -> dict[str, tuple[int, DocPath | None]]:
    out: dict[str, tuple[int, DocPath | None]] = {}
    for key, default in DEFAULTS.items():
        value: str = default
        where: DocPath | None = None
        if getattr(base, key) is not None:
            value, where = getattr(base, key), (key,)
        if over is not None and getattr(over, key) is not None:
            value, where = getattr(over, key), (*prefix, key)
        out[key] = (parse_duration(value), where)
    return out


def check_scheduler(
    model: SchedulerFile, smap: SourceMap | None, cluster_names: tuple[str, ...]
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
    for label, over, prefix in scopes:
        r = _resolved(model, over, prefix, smap)
        (cap, cap_at), (look, look_at) = r["min_runtime_cap"], r["lookback"]
        (dflt, dflt_at) = r["default_min_runtime"]
        if cap > look:
            diags.append(
                at(cap_at or look_at).diagnostic(
                    f"min_runtime_cap {format_duration(cap)} is longer than the lookback window "
                    f"{format_duration(look)}{label}"
                )
            )
        (period, period_at) = r["fairshare_period"]
        if period > look:
            diags.append(
                at(period_at or look_at).diagnostic(
                    f"fairshare_period {format_duration(period)} is longer than the lookback window "
                    f"{format_duration(look)}{label}"
                )
            )
        if dflt > cap:
            diags.append(
                at(dflt_at or cap_at).diagnostic(
                    f"default_min_runtime {format_duration(dflt)} is longer than min_runtime_cap "
                    f"{format_duration(cap)}{label}"
                )
            )
    return diags
