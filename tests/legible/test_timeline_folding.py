"""The report's GPU timeline folds nodes into groups beyond a readable count (issue 31, item 5):
128 node rows of 4 px become 32 labelled rows of 4 nodes, every GPU-second still drawn once."""

from __future__ import annotations

import pytest

from allotment.legible.replay import Interval
from allotment.legible.timeline import MAX_NODE_ROWS, build_timeline, fold_nodes

DAY = 86400.0


def _nodes(n: int) -> tuple[list[str], dict[str, int]]:
    names = [f"n{i:03d}" for i in range(1, n + 1)]
    return names, dict.fromkeys(names, 8)


def _area(tl: object) -> float:
    """Bar area, bars with a title and path bars alike."""
    import re

    total = 0.0
    for g in tl.groups:  # type: ignore[attr-defined]
        total += sum(b.w * b.h for b in g.bars)
        for w, h in re.findall(r"h([0-9.]+)v([0-9.]+)h-", g.path):
            total += float(w) * float(h)
    return total


def test_128_nodes_fold_into_32_labelled_rows_of_4() -> None:
    names, per = _nodes(128)
    ivs = [
        Interval("gang", "a", 32, tuple(names[0:4]), True, 0.0, DAY),  # a whole group: one bar
        Interval("one", "b", 1, ("n005",), True, 0.0, DAY),
        Interval("across", "a", 16, ("n008", "n009"), False, DAY, 2 * DAY),  # two groups
    ]
    tl = build_timeline(ivs, names, per, ["a", "b"], 2 * DAY)
    assert tl.rows == MAX_NODE_ROWS == 32 and tl.row_label == "group of 4 nodes"
    assert [label for _, label in tl.row_ticks][:3] == ["n001-004", "n005-008", "n009-012"]
    assert len(tl.row_ticks) == 32 and len(tl.row_lines) == 31
    row_h = tl.height / 32
    bars = sorted((b for g in tl.groups for b in g.bars), key=lambda b: (b.y, b.x))
    gang = next(b for b in bars if b.title.startswith("gang"))
    assert (gang.y, gang.h) == (0.0, pytest.approx(row_h, abs=0.01))  # 32 of its row's 32 GPUs
    one = next(b for b in bars if b.title.startswith("one"))
    assert one.y == pytest.approx(row_h, abs=0.01) and one.h == pytest.approx(row_h / 32, abs=0.01)
    across = [b for b in bars if b.title.startswith("across")]
    assert len(across) == 2 and {round(b.h / row_h * 32) for b in across} == {8}
    # every GPU-second drawn once: area = GPU-days x (px per day) x (px per GPU)
    px_per_gpu_day = (tl.width / 2) * (row_h / 32)
    assert _area(tl) == pytest.approx((32 + 1 + 16) * px_per_gpu_day, rel=0.01)


def test_up_to_the_readable_count_a_row_is_still_a_node() -> None:
    names, _ = _nodes(MAX_NODE_ROWS)
    per = dict.fromkeys(names, 16)  # 512 GPUs: too many GPU rows, so one row per node
    tl = build_timeline([Interval("j", "a", 8, ("n001",), True, 0.0, DAY)], names, per, ["a"], DAY)
    assert (tl.rows, tl.row_label, tl.row_lines) == (MAX_NODE_ROWS, "node", ())


def test_groups_are_consecutive_and_cover_every_node_once() -> None:
    names = [f"gpu{i}" for i in range(1, 101)]
    groups = fold_nodes(names)
    assert len(groups) <= MAX_NODE_ROWS and [n for g in groups for n in g.nodes] == names
    assert groups[0].label == "gpu1-4" and groups[2].label == "gpu9-12"


def test_the_folded_row_labels_fit_left_of_the_plot_in_chromium(tmp_path: object) -> None:
    """The folded h100 labels (``h100-n001-004``) were cut on the left by a fixed 70-unit margin;
    Chromium lays the timeline out and every row label's box must start inside the picture."""
    import re
    from pathlib import Path

    import jinja2

    from allotment.legible.timeline import label_margin
    from tests.legible.chromium import dump_dom

    names = [f"h100-n{i:03d}" for i in range(1, 129)]
    tl = build_timeline([Interval("j", "a", 8, ("h100-n001",), True, 0.0, DAY)], names, dict.fromkeys(names, 8),
                        ["a"], DAY)
    assert tl.row_ticks[0][1] == "h100-n001-004" and tl.label_margin > 70.0
    assert label_margin(["n1"]) == 70.0  # short labels keep the margin they had
    env = jinja2.Environment(loader=jinja2.PackageLoader("allotment", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    svg = env.get_template("timeline.svg.j2").render(tl=tl, title="t", legend=[])
    page = Path(str(tmp_path)) / "timeline.html"
    page.write_text(
        "<!doctype html><html><head><style>svg{width:1400px}svg text{font-size:11px;"
        'font-family:system-ui,sans-serif}</style></head><body>' + svg
        + "<pre id=out></pre><script>const s=document.querySelector('svg');const v=s.viewBox.baseVal;"
        "let worst=1e9;for(const t of s.querySelectorAll('text[text-anchor=end]'))"
        "{worst=Math.min(worst,t.getBBox().x-v.x)};document.getElementById('out').textContent='left='+worst"
        "</script></body></html>",
        encoding="utf-8",
    )
    dom = dump_dom(page.as_uri(), Path(str(tmp_path)) / "profile")
    left = float(re.search(r"left=(-?[0-9.e+-]+)", dom).group(1))  # type: ignore[union-attr]
    assert left >= 0.0, f"a row label starts {-left:.1f} units left of the picture"
