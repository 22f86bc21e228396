"""The GPU timeline as Ai2 drew it: one row per GPU (per node when there are too many GPUs to
read, per group of consecutive nodes when there are too many nodes), one bar per job run
coloured by team, hatched where the run is unallocated (free, preemptible at once), a red edge
where a run ended in a preemption.

Why fold nodes: 128 node rows in 560 px are 4 px each, too thin to point at or label, and the
eye reads them as noise (issue 31).  Beyond ``MAX_NODE_ROWS`` rows, consecutive nodes fold into
groups of equal size (the last may be smaller), each one labelled row; a group is drawn as one
node with all its GPUs, so a job's bars are packed in its group's row and a gang across the
group's nodes is one bar.

Geometry only (the template draws it).  Each job gets the lowest free GPU slots of each of its
nodes for its run; a gang on consecutive nodes with the same slots is one bar, which keeps a
30-day 1024-GPU run small."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from allotment.legible.replay import Interval

WIDTH = 1100.0
MAX_GPU_ROWS = 256  # above this, rows are nodes
MAX_NODE_ROWS = 32  # above this, rows are groups of consecutive nodes (17 px each at 560 px)


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    w: float
    h: float
    team: int  # index into the legend
    hatched: bool
    title: str


@dataclass(frozen=True, slots=True)
class BarGroup:
    """Bars of one team and kind, drawn in one ``<g class>`` so each bar is a bare rect."""

    css: str  # "t3" (team 3) or "h3" (team 3, hatched: unallocated)
    bars: tuple[Bar, ...]  # bars with a hover title, drawn as rects
    path: str  # every other bar as one SVG path: a third of the bytes of a rect each


TITLE_MIN_PX = 5.0  # narrower bars get no hover title: too small to point at, and bytes add up
# (5 px: a 30-day 1024-GPU report with its baseline beside it stays under 10 MB, 8.8 MB measured)


@dataclass(frozen=True, slots=True)
class Timeline:
    width: float
    height: float
    rows: int
    row_label: str  # "GPU" or "node"
    groups: tuple[BarGroup, ...]
    preempt_path: str  # one SVG path of red edges
    edge_width: float  # thinner when edges are dense, so they mark the picture without hiding it
    ticks: tuple[tuple[float, str], ...]  # x, label (days)
    row_ticks: tuple[tuple[float, str], ...]
    row_lines: tuple[float, ...] = ()  # y of the line between two folded rows
    label_margin: float = 70.0  # room left of the plot for the longest row label (see below)


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """Consecutive nodes drawn as one row; ``label`` names the first and last."""

    label: str
    nodes: tuple[str, ...]


def fold_nodes(nodes: Sequence[str], max_rows: int = MAX_NODE_ROWS) -> tuple[NodeGroup, ...]:
    """``nodes`` in order, in at most ``max_rows`` groups of ``ceil(len / max_rows)``."""
    size = max(1, -(-len(nodes) // max(1, max_rows)))
    out = []
    for i in range(0, len(nodes), size):
        part = tuple(nodes[i : i + size])
        out.append(NodeGroup(_range_label(part[0], part[-1]), part))
    return tuple(out)


def _range_label(first: str, last: str) -> str:
    """``n001-004`` for n001..n004: the common start written once, so labels fit the margin."""
    if first == last:
        return first
    common = 0
    while common < min(len(first), len(last)) and first[common] == last[common]:
        common += 1
    while common and first[common - 1].isdigit():  # never split a number: n9-n10 is n9-10
        common -= 1
    return f"{first}-{last[common:]}"


def _fold(ivs: Sequence[Interval], groups: Sequence[NodeGroup]) -> list[Interval]:
    """Each run once per group it touches, on that group alone, with its GPUs there."""
    where = {n: g.label for g in groups for n in g.nodes}
    out = []
    for iv in ivs:
        k = max(1, iv.gpus // max(1, len(iv.nodes)))
        on: dict[str, int] = {}
        for n in iv.nodes:
            if n in where:
                on[where[n]] = on.get(where[n], 0) + 1
        out += [replace(iv, nodes=(g,), gpus=k * m) for g, m in on.items()]
    return out


def _slots(ivs: Sequence[Interval], per_node: Mapping[str, int]) -> dict[tuple[str, str, float], tuple[int, int]]:
    """(job, node, start) -> (first slot, count): lowest free slots at the run's start."""
    busy: dict[str, list[tuple[float, int, int]]] = {}  # node -> (end, first, count)
    out: dict[tuple[str, str, float], tuple[int, int]] = {}
    for iv in sorted(ivs, key=lambda i: (i.start, i.job)):
        k = max(1, iv.gpus // max(1, len(iv.nodes)))
        for n in iv.nodes:
            live = [b for b in busy.get(n, []) if b[0] > iv.start]
            taken = sorted((f, c) for _, f, c in live)
            first = 0
            for f, c in taken:
                if first + k <= f:
                    break
                first = max(first, f + c)
            first = min(first, max(0, per_node.get(n, k) - k))
            live.append((iv.end if iv.end is not None else float("inf"), first, k))
            busy[n] = live
            out[(iv.job, n, iv.start)] = (first, k)
    return out


def build_timeline(ivs: Sequence[Interval], nodes: Sequence[str], per_node: Mapping[str, int],
                   teams: Sequence[str], end: float, height: float = 560.0) -> Timeline:
    gpus = sum(per_node.get(n, 0) for n in nodes)
    by_gpu = gpus <= MAX_GPU_ROWS
    folded = fold_nodes(nodes) if not by_gpu and len(nodes) > MAX_NODE_ROWS else ()
    row_label = "GPU" if by_gpu else "node"
    if folded:
        ivs = _fold(ivs, folded)
        per_node = {g.label: sum(per_node.get(n, 0) for n in g.nodes) for g in folded}
        nodes = [g.label for g in folded]
        row_label = f"group of {len(folded[0].nodes)} nodes"
    rows = gpus if by_gpu else len(nodes)
    row_h = height / max(1, rows)
    node_y: dict[str, float] = {}
    y = 0.0
    for n in nodes:
        node_y[n] = y
        y += row_h * (per_node.get(n, 0) if by_gpu else 1)
    slot_h = {n: (row_h if by_gpu else row_h / max(1, per_node.get(n, 1))) for n in nodes}
    sx = WIDTH / max(1.0, end)
    index = {t: i for i, t in enumerate(teams)}
    slots = _slots(ivs, per_node)
    bars: list[Bar] = []
    edges: list[str] = []
    for iv in ivs:
        x0, x1 = iv.start * sx, (iv.end if iv.end is not None else end) * sx
        title = f"{iv.job} ({iv.account}, {iv.gpus} GPUs{'' if iv.allocated else ', unallocated'})"
        for top, h in _spans(iv, slots, node_y, slot_h):
            w = max(0.6, x1 - x0)
            bars.append(Bar(round(x0, 1), round(top, 2), round(w, 1), round(h, 2),
                            index.get(iv.account, 0), not iv.allocated, title if w >= TITLE_MIN_PX else ""))
            if iv.preempted:
                edges.append(f"M{x1:.1f} {top:.2f}v{h:.2f}")
    days = end / 86400.0
    step = max(1, round(days / 10)) if days >= 2 else 0.25
    ticks = []
    d = 0.0
    while d <= days + 1e-9:
        ticks.append((round(d * 86400 * sx, 1), f"day {d:g}"))
        d += step
    every = 1 if folded else max(1, len(nodes) // 8)
    row_ticks = tuple((round(node_y[n], 1), n) for i, n in enumerate(nodes) if i % every == 0)
    grouped: dict[str, list[Bar]] = {}
    for b in bars:
        grouped.setdefault(f"{'h' if b.hatched else 't'}{b.team}", []).append(b)
    groups = tuple(
        BarGroup(k, tuple(b for b in v if b.title), "".join(f"M{b.x:g} {b.y:g}h{b.w:g}v{b.h:g}h-{b.w:g}z" for b in v if not b.title))
        for k, v in sorted(grouped.items())
    )
    density = len(edges) / max(1.0, WIDTH * rows)  # edges per pixel column and row
    edge_w = 1.4 if density < 0.002 else 0.8 if density < 0.01 else 0.4
    lines = tuple(round(node_y[n], 1) for n in nodes[1:]) if folded else ()
    return Timeline(WIDTH, height, rows, row_label, groups, "".join(edges), edge_w,
                    tuple(ticks), row_ticks, lines, label_margin(label for _, label in row_ticks))


def label_margin(labels: Iterable[str]) -> float:
    """The room the row labels need left of the plot: at 11 px a label's characters are at most
    about 6.6 px wide (digits and lower case of system-ui), plus 8 px of gap; never under the
    70 px the short labels always had.  A folded group's label (``h100-n001-004``) is 13
    characters, which a fixed margin clipped."""
    return max(70.0, 8.0 + 6.6 * max((len(s) for s in labels), default=0))


def _spans(iv: Interval, slots: Mapping[tuple[str, str, float], tuple[int, int]],
           node_y: Mapping[str, float], slot_h: Mapping[str, float]) -> list[tuple[float, float]]:
    """(top, height) of the bars of one run: consecutive nodes with the same slots merge."""
    out: list[tuple[float, float]] = []
    for n in sorted(iv.nodes, key=lambda n: node_y.get(n, 0.0)):
        if n not in node_y:
            continue
        first, k = slots[(iv.job, n, iv.start)]
        top, h = node_y[n] + first * slot_h[n], k * slot_h[n]
        if out and abs(out[-1][0] + out[-1][1] - top) < 1e-6 and k * slot_h[n] == slot_h[n] * k and first == 0:
            out[-1] = (out[-1][0], out[-1][1] + h)
        else:
            out.append((top, h))
    return out
