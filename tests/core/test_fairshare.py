from __future__ import annotations

from allotment.core.context import build_context
from allotment.core.fairshare import rank_leaves
from tests.core.builders import make_config


def _order(tree: dict, usage: dict[str, float]) -> list[str]:
    ctx = build_context(make_config(tree), "c1")
    return [r.leaf for r in rank_leaves(ctx, usage)]


def test_least_used_relative_to_share_comes_first() -> None:
    assert _order({"a": 1, "b": 1}, {"a": 10, "b": 5}) == ["b", "a"]
    assert _order({"a": 3, "b": 1}, {"a": 30, "b": 20}) == ["a", "b"]  # a: .6/.75 < b: .4/.25


def test_whole_subtree_of_the_better_sibling_comes_first() -> None:
    tree = {"p": {"p1": 1, "p2": 1}, "q": {"q1": 1, "q2": 1}}
    # p as a whole is under-served, although p2 alone used more than q1
    order = _order(tree, {"p1": 0, "p2": 40, "q1": 30, "q2": 50})
    assert order == ["p1", "p2", "q1", "q2"]


def test_ties_go_to_the_larger_share_then_the_name() -> None:
    assert _order({"b": 1, "a": 1}, {}) == ["a", "b"]
    assert _order({"a": 1, "b": 2}, {}) == ["b", "a"]


def test_ranking_changes_as_usage_accrues() -> None:
    tree = {"a": 1, "b": 1}
    assert _order(tree, {"a": 1, "b": 2})[0] == "a"
    assert _order(tree, {"a": 3, "b": 2})[0] == "b"


def test_level_fair_share_is_exposed_per_level() -> None:
    ctx = build_context(make_config({"p": {"p1": 1, "p2": 1}, "q": 1}), "c1")
    ranks = {r.leaf: r for r in rank_leaves(ctx, {"p1": 10, "p2": 30, "q": 40})}
    # p has 2/3 of the share (two units of weight) and half the usage; p1 has 1/4 of p's usage
    assert ranks["p1"].level_fair_share == (0.75, 0.5)
    assert ranks["q"].level_fair_share == (1.5,)
