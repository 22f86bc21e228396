"""Issue 32, item 1: the rules and thresholds that judge a pull request come from the base.

A PR that breaks a rule and, in the same commit, loosens that rule is still judged by the rule
as it was; its change is shown and applies from the next pull request.
"""

from __future__ import annotations

import json
from typing import Any

from allotment.compile.model import Policy
from allotment.plan.impact import Run
from allotment.plan.impact_stats import summarize
from allotment.plan.rules import deferred_rule_changes
from tests.plan.factory import N, build
from tests.plan.gitrepo import GitRepo
from tests.plan.test_plan_cli import plan, vision_pr

POLICY = "policies/scheduler.yaml"


def _set(key: str, value: Any) -> Any:
    def change(doc: Any) -> None:
        doc[key] = value

    return change


def test_pr_cannot_switch_off_the_share_floor_it_breaks(small_repo: GitRepo) -> None:
    small_repo.switch("pr", create=True)
    small_repo.set_share("budgets/acme/ml/budget.yaml", "vision", 1000)  # nlp below the 5% floor
    small_repo.edit_yaml(POLICY, _set("share_floor", 0))
    small_repo.commit("Give vision more and drop the floor", author="vera@acme.example")
    code, text = plan(small_repo, "--base", "main", "--head", "pr", fmt="json")
    doc = json.loads(text)
    assert code == 1
    assert any(v.startswith("share_floor: nlp on c1") for v in doc["violations"])
    assert doc["rule_changes"] == [
        "share_floor: 0.05 → 0; this pull request is judged by 0.05, "
        "the new value applies from the next one"
    ]


def test_pr_raising_the_share_floor_is_not_judged_by_its_new_floor(small_repo: GitRepo) -> None:
    vision_pr(small_repo)  # nlp 30% -> 25%: fine under the base's 5% floor
    small_repo.edit_yaml(POLICY, _set("share_floor", 0.5))
    small_repo.commit("And raise the floor", author="vera@acme.example")
    code, md = plan(small_repo, "--base", "main", "--head", "pr")
    assert code == 0 and "Policy rules broken" not in md
    section = md.split("#### Rules changed by this PR (they judge the next PR, not this one)", 1)[1]
    assert "floor: 0.05 → 0.5; this pull request is judged by 0.05" in section.split("####", 1)[0]


def _runs(before: float, after: float) -> list[Run]:
    out = []
    for seed, noise in enumerate((0.0, 1.0, -1.0, 0.5, -0.5), start=1):
        for side, hours in (("base", before + noise), ("head", after + noise)):
            metrics = {"days": 7.0, "teams": {"a": {"charged_gpu_hours": hours}}}
            out.append(Run(side, seed, f"{side}{seed}", metrics, False))
    return out


def test_pr_cannot_set_its_own_flag_delivered_drop() -> None:
    tree = N(children={"a": N(), "b": N()})
    base = build("acme", tree, policy=Policy(flag_delivered_drop=0.05))
    silenced = build("acme", tree, policy=Policy(flag_delivered_drop=1.0))
    raised = build("acme", tree, policy=Policy(flag_delivered_drop=0.0))
    common: dict[str, Any] = {
        "workload": "w", "workload_key": "k", "days": 7.0, "seeds": (1, 2, 3, 4, 5), "cluster": "c1"
    }
    # a 20% drop: flagged under the base's 5%, whatever the head says
    imp = summarize(base, silenced, _runs(100.0, 80.0), **common)
    assert [t.flagged for t in imp.teams] == [True] and imp.flag_threshold == 0.05
    # a 2% drop: under the base's 5%, so not flagged even though the head asks for 0%
    imp = summarize(base, raised, _runs(100.0, 98.0), **common)
    assert [t.flagged for t in imp.teams] == [False] and imp.flag_threshold == 0.05


def test_pr_changing_plan_workload_is_listed_as_a_rule_change() -> None:
    """plan_workload is read from the base (plan/impact.py): a PR that names a new history is
    still replayed on the base's, so the change is shown as applying from the next PR."""
    tree = N(children={"a": N(), "b": N()})
    base = build("acme", tree, policy=Policy())
    head = build("acme", tree, policy=Policy(plan_workload="history/jobs.jsonl"))
    assert deferred_rule_changes(base, head) == [
        "plan_workload: (none) → history/jobs.jsonl; this pull request is judged by (none), "
        "the new value applies from the next one"
    ]
