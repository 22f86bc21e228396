"""Team colours: one hue family per program (the tree's top level), a lightness per team, so a
glance at the timeline tells programs apart and a closer look tells teams apart."""

from __future__ import annotations

import colorsys
from collections.abc import Iterable, Mapping

from allotment.legible.tree import program_of

# hues spaced for programs (blue, orange, green, purple, teal, red, olive, brown...)
_HUES = (0.60, 0.08, 0.33, 0.78, 0.48, 0.98, 0.17, 0.92, 0.70, 0.25)


def team_colors(leaves: Iterable[str], parents: Mapping[str, str | None]) -> dict[str, str]:
    by_program: dict[str, list[str]] = {}
    for leaf in sorted(set(leaves)):
        by_program.setdefault(program_of(parents, leaf), []).append(leaf)
    out: dict[str, str] = {}
    for i, prog in enumerate(sorted(by_program)):
        hue = _HUES[i % len(_HUES)]
        teams = by_program[prog]
        for k, leaf in enumerate(teams):
            light = 0.38 + 0.34 * (k / max(1, len(teams) - 1)) if len(teams) > 1 else 0.5
            r, g, b = colorsys.hls_to_rgb(hue, light, 0.62)
            out[leaf] = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
    return out


def program_color(program: str, programs: list[str], light: float = 0.55) -> str:
    hue = _HUES[sorted(programs).index(program) % len(_HUES)] if program in programs else 0.0
    r, g, b = colorsys.hls_to_rgb(hue, light, 0.55)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def node_colors(parents: Mapping[str, str | None], leaves: Iterable[str]) -> dict[str, str]:
    """Every node's colour in a tree picture: teams as ``team_colors``, a program a light tone of
    its hue, the nodes between lighter still, anything outside a program grey."""
    leaves = sorted(set(leaves))
    colors = team_colors(leaves, parents)
    programs = sorted({program_of(parents, leaf) for leaf in leaves})
    for n in parents:
        if n not in colors:
            prog = program_of(parents, n)
            colors[n] = program_color(prog, programs, light=0.55 if n == prog else 0.75) if prog in programs else "#c8c8c8"
    return colors
