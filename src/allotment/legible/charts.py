"""Geometry of the report's small charts (the template draws them): per-team usage against
what the team is owed, wait-time CDFs per job kind, and the budget tree as an icicle of shares."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from allotment.legible.words import duration
from allotment.sim.summary import percentile


@dataclass(frozen=True, slots=True)
class Line:
    points: str  # SVG polyline points
    css: str  # class: "new", "base", "owed"
    label: str


@dataclass(frozen=True, slots=True)
class Panel:
    title: str
    subtitle: str
    width: float
    height: float
    lines: tuple[Line, ...]
    x_ticks: tuple[tuple[float, str], ...]
    y_ticks: tuple[tuple[float, str], ...]


W, H = 300.0, 150.0


def _pts(xs: Sequence[float], ys: Sequence[float]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys, strict=True))


def usage_panel(team: str, color_css: str, series: Sequence[tuple[float, float]], owed: float,
                end: float, base: Sequence[tuple[float, float]] | None, subtitle: str) -> Panel:
    """Window usage (GPU-hours over the lookback) over time, against the window's owed hours."""
    top = max([owed, *(u for _, u in series), *(u for _, u in base or ())], default=1.0) * 1.1 or 1.0
    sx, sy = W / max(1.0, end), H / top

    def line(s: Sequence[tuple[float, float]], css: str, label: str) -> Line:
        return Line(_pts([t * sx for t, _ in s], [H - u * sy for _, u in s]), css, label)

    lines = [Line(f"0,{H - owed * sy:.1f} {W},{H - owed * sy:.1f}", "owed", "owed per window"),
             line(series, f"new {color_css}", "new policy")]
    if base:
        lines.append(line(base, "base", "baseline"))
    days = end / 86400
    xt = tuple((round(d * 86400 * sx, 1), f"{d:g}d") for d in _steps(days))
    yt = tuple((round(H - v * sy, 1), f"{v:,.0f}") for v in (0.0, owed))
    return Panel(team, subtitle, W, H, tuple(lines), xt, yt)


def _steps(days: float) -> list[float]:
    step = 1.0 if days <= 8 else 7.0
    out, d = [], 0.0
    while d <= days + 1e-9:
        out.append(d)
        d += step
    return out


_WAIT_TICKS = ((1.0, "1s"), (10.0, "10s"), (60.0, "1m"), (600.0, "10m"), (3600.0, "1h"),
               (6 * 3600.0, "6h"), (86400.0, "1d"), (7 * 86400.0, "7d"))


def cdf_panel(kind: str, new: Sequence[float], base: Sequence[float] | None) -> Panel:
    """Share of jobs started within a wait (log scale, 1 s to a week)."""
    lo, hi = math.log10(1.0), math.log10(7 * 86400.0)

    def x(w: float) -> float:
        return (math.log10(max(1.0, w)) - lo) / (hi - lo) * W

    def line(ws: Sequence[float], css: str, label: str) -> Line:
        s = sorted(ws)
        n = len(s)
        xs, ys = [0.0], [H]
        # one step per pixel column at most: 60,000 jobs draw the same curve as 300 steps
        cols: dict[int, int] = {}
        for i, w in enumerate(s, 1):
            cols[round(x(w))] = i
        for col, i in sorted(cols.items()):
            xs += [float(col), float(col)]
            ys += [ys[-1], H - H * i / n]
        xs.append(W)
        ys.append(ys[-1])
        # the percentiles of metrics.json (one nearest-rank rule, sim.summary.percentile)
        return Line(_pts(xs, ys), css,
                    f"{label} (n={n}, p50 {duration(percentile(s, 50))}, p90 {duration(percentile(s, 90))})")

    lines = [line(new, "new", "new policy")] if new else []
    if base:
        lines.append(line(base, "base", "baseline"))
    xt = tuple((round(x(t), 1), label) for t, label in _WAIT_TICKS)
    yt = ((H, "0%"), (H / 2, "50%"), (H * 0.1, "90%"), (0.0, "100%"))
    return Panel(kind, "share of jobs started within the wait", W, H, tuple(lines), xt, yt)


THIN_PX = 1.0  # narrower children are drawn together as one cell


@dataclass(frozen=True, slots=True)
class Cell:
    x: float
    y: float
    w: float
    h: float
    color: str
    label: str
    title: str
    marked: bool = False  # drawn with an outline (the plan report: its share changed)


def icicle(parents: Mapping[str, str | None], shares: Mapping[str, float], colors: Mapping[str, str],
           width: float = 1100.0, row_h: float = 44.0) -> tuple[tuple[Cell, ...], float]:
    """One row per tree level; each node's width is its absolute share (product along the path)."""
    kids = _children(parents)
    absolute: dict[str, float] = {}

    def walk(n: str, a: float) -> None:
        absolute[n] = a
        for c in kids.get(n, []):
            walk(c, a * shares.get(c, 0.0))

    for root in kids.get(None, []):
        walk(root, 1.0)
    return icicle_of(parents, absolute, colors, width=width, row_h=row_h)


def _children(parents: Mapping[str, str | None]) -> dict[str | None, list[str]]:
    kids: dict[str | None, list[str]] = {}
    for n, p in parents.items():
        kids.setdefault(p if p in parents else None, []).append(n)
    return kids


def icicle_of(parents: Mapping[str, str | None], absolute: Mapping[str, float], colors: Mapping[str, str],
              *, titles: Mapping[str, str] | None = None, marked: frozenset[str] = frozenset(),
              order: Mapping[str, int] | None = None,
              width: float = 1100.0, row_h: float = 44.0) -> tuple[tuple[Cell, ...], float]:
    """The icicle layout: a node spans ``absolute`` of the width, its children side by side
    under it (largest first, then by name; or in a fixed ``order``, so that two pictures of one
    tree keep each node in its place); nodes with no share are not drawn."""
    kids = _children(parents)
    cells: list[Cell] = []
    depth = [0]

    def walk(n: str, x: float, d: int) -> None:
        w = width * absolute.get(n, 0.0)
        if w < 0.05:
            return
        depth[0] = max(depth[0], d + 1)
        label = n if w > 7 * len(n) else (n[: max(0, int(w / 7) - 1)] + "…" if w > 20 else "")
        title = (titles or {}).get(n) or f"{n}: {100 * absolute.get(n, 0.0):.1f}% of the cluster"
        cells.append(Cell(round(x, 1), d * row_h, round(w, 1), row_h - 2, colors.get(n, "#bbb"),
                          label, title, n in marked))
        cx = x
        thin: list[str] = []
        for c in sorted(kids.get(n, []), key=lambda c: (order[c], c) if order else (-absolute.get(c, 0.0), c)):
            if 0 < width * absolute.get(c, 0.0) < THIN_PX:
                thin.append(c)
                continue
            walk(c, cx, d + 1)
            cx += width * absolute.get(c, 0.0)
        if thin:  # slivers no one could see or hover: one cell that says what it holds
            total = sum(absolute.get(c, 0.0) for c in thin)
            w = width * total
            if w >= 0.05:
                depth[0] = max(depth[0], d + 2)
                cells.append(Cell(round(cx, 1), (d + 1) * row_h, round(w, 1), row_h - 2, "#bbb",
                                  f"{len(thin):,} more" if w > 7 * 10 else "",
                                  f"{len(thin):,} children of {n} under {THIN_PX:g} px each, {100 * total:.2f}% "
                                  f"of the cluster together (first: {thin[0]})", any(c in marked for c in thin)))

    for root in kids.get(None, []):
        walk(root, 0.0, 0)
    return tuple(cells), depth[0] * row_h
