"""Hypothesis strategy for whole config repos (as file mappings) with random budget trees:
random fan-out, weights, cluster restrictions and validity dates."""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import strategies as st

CLUSTERS = {"alpha": (4, 8, "h100"), "beta": (3, 4, "b200"), "gamma": (2, 8, "h100")}
AT = dt.date(2026, 6, 1)

INVENTORY = {
    "inventory/gpu_types.yaml": b"gpu_types:\n  h100: {billing_weight: 1.0}\n"
    b"  b200: {billing_weight: 2.5}\n",
    **{
        f"inventory/clusters/{name}.yaml": (
            f"node_groups:\n  - name: main\n    gpu_type: {t}\n    gpus_per_node: {g}\n"
            f"    count: {n}\n    prefix: {name}-\n"
        ).encode()
        for name, (n, g, t) in CLUSTERS.items()
    },
}


@st.composite
def _node(draw: st.DrawFn, depth: int, allowed: tuple[str, ...]) -> dict[str, Any]:
    terms: dict[str, Any] = {"share": draw(st.one_of(st.integers(1, 100), st.floats(0.01, 50.0)))}
    clusters = allowed
    if draw(st.integers(0, 4)) == 0:
        clusters = tuple(sorted(draw(st.sets(st.sampled_from(allowed), min_size=1))))
        terms["clusters"] = list(clusters)
    if draw(st.integers(0, 5)) == 0:
        terms["end"] = AT + dt.timedelta(days=draw(st.integers(-30, 30)))
    if draw(st.integers(0, 8)) == 0:
        terms["start"] = AT + dt.timedelta(days=draw(st.integers(-30, 30)))
        terms.pop("end", None)
    n_children = draw(st.integers(0, 4)) if depth < 3 else 0
    children = [draw(_node(depth + 1, clusters)) for _ in range(n_children)]
    return {"terms": terms, "children": children}


def _render(node: dict[str, Any], path: str, files: dict[str, bytes], counter: list[int]) -> str:
    name = path.rsplit("/", 1)[-1]
    lines = [f"owners: [{name}@example.org]"]
    names = []
    for child in node["children"]:
        counter[0] += 1
        names.append((f"n{counter[0]}", child))
    if names:
        lines.append("children:")
        for cname, child in names:
            lines.append(f"  {cname}:")
            for k, v in child["terms"].items():
                lines.append(
                    f"    {k}: {v if not isinstance(v, list) else '[' + ', '.join(v) + ']'}"
                )
            _render(child, f"{path}/{cname}", files, counter)
    else:
        lines.append(f"members: [u{name}]")
    files[f"budgets/{path}/budget.yaml"] = ("\n".join(lines) + "\n").encode()
    return name


@st.composite
def repos(draw: st.DrawFn) -> dict[str, bytes]:
    root = draw(_node(0, tuple(sorted(CLUSTERS))))
    if not root["children"]:
        root["children"] = [draw(_node(1, tuple(sorted(CLUSTERS))))]
    files: dict[str, bytes] = dict(INVENTORY)
    _render(root, "org", files, [0])
    return files
