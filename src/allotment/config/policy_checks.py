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
    # (knob, the knob it may not exceed, what that one is called): each refused where it is set
    limits = (("min_runtime_cap", "lookback", "the lookback window"),
              ("fairshare_period", "lookback", "the lookback window"),
              ("default_min_runtime", "min_runtime_cap", "min_runtime_cap"))
    for label, over, prefix in scopes:
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
