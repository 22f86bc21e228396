"""The composite actions, run end to end for a separate budget-config repository.

A config repository (budgets/, inventory/, policies/ only) is built in a temp folder with a
real git origin; a pull request is checked out as the runner's ``actions/checkout`` would
leave it (detached at the PR head, full history); then the plan action's shell steps run as the
runner runs them, with ``allot`` on PATH.  The comment action's script runs under node against an
in-memory GitHub (the REST API cannot be real here), to check that the sticky comment is ordered
by workflow run and never by a date the author controls.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT
from tests.plan.actionrunner import ActionRun, allot_on_path
from tests.plan.gitrepo import GitRepo

PLAN_ACTION = REPO_ROOT / ".github/actions/plan/action.yml"
COMMENT_ACTION = REPO_ROOT / ".github/actions/comment/action.yml"
ML = "budgets/acme/ml/budget.yaml"


def config_repo_pr(tmp: Path, change: str) -> Path:
    """origin (main) and a PR checkout at ``tmp/ws/pr``; returns the workspace."""
    origin = GitRepo.from_data(tmp / "origin")
    origin.commit("budget tree", author="pat@acme.example")
    origin.switch("pr", create=True)
    if change == "share":
        origin.set_share(ML, "vision", 70)
    else:  # a push that does not validate
        origin.write(ML, "owners: [ml-lead@acme.example]\nchildren:\n  vision: {share: -3}\n  nlp: {share: 1}\n")
    head = origin.commit("the change", author="vera@acme.example")
    origin.switch("main")
    ws = tmp / "ws"
    ws.mkdir()
    subprocess.run(["git", "clone", "-q", str(origin.path), str(ws / "pr")], check=True)
    subprocess.run(["git", "-C", str(ws / "pr"), "checkout", "-q", "--detach", head], check=True)
    return ws


def run_plan_action(tmp: Path, change: str) -> ActionRun:
    ws = config_repo_pr(tmp, change)
    run = ActionRun(
        PLAN_ACTION,
        ws,
        inputs={"allot-version": "0.2.0", "config-path": "pr", "seeds": "1,2", "days": "0.5"},
        context={
            "github.base_ref": "main",
            "github.token": "",
            "github.event.pull_request.number": "7",
            "runner.temp": str(tmp / "runner-temp"),
        },
    )
    run.run(allot_on_path(tmp / "bin"))
    return run


@pytest.mark.slow
def test_plan_action_validates_plans_and_leaves_the_comment_body(tmp_path: Path) -> None:
    run = run_plan_action(tmp_path, "share")
    log = "\n".join(run.logs)
    assert run.outputs["validate"]["status"] == "0", log
    assert run.outputs["plan"]["status"] == "0", log
    artifact = tmp_path / "runner-temp" / "budget-plan"
    body = (artifact / "plan.md").read_text()
    assert (artifact / "pr-number").read_text().strip() == "7"
    assert body.startswith("<!-- allotment-plan ") and len(body) < 65_000
    assert "gains: vision +5.0 pp" in body.splitlines()[1]
    assert "(seeds 1,2;" in body and "cluster **c1** only" in body and "--seeds 1,2`" in body
    assert run.summary is not None and body in run.summary.read_text()
    assert "step 'Fail when" not in log  # the last step passed


@pytest.mark.slow
def test_a_push_that_does_not_validate_replaces_the_plan_with_its_errors(tmp_path: Path) -> None:
    run = run_plan_action(tmp_path, "invalid")
    log = "\n".join(run.logs)
    assert run.outputs["validate"]["status"] == "2" and run.outputs["plan"]["status"] == "2"
    body = (tmp_path / "runner-temp" / "budget-plan" / "plan.md").read_text()
    assert body.startswith("<!-- allotment-plan format=2 invalid head=HEAD -->")
    assert f"{ML}:3:19:" in body
    assert f"::error file={ML},line=3,col=19::" in log
    assert "step 'Fail when the change is invalid or breaks a policy rule' failed" in log


def test_no_step_puts_an_expression_inside_a_script() -> None:
    """Inputs and event fields reach shells through env only (no script injection)."""
    for action in (PLAN_ACTION, COMMENT_ACTION):
        for step in yaml.safe_load(action.read_text())["runs"]["steps"]:
            assert "${{" not in step.get("run", ""), (action, step.get("name"))
            assert "${{" not in step.get("with", {}).get("script", ""), (action, step.get("name"))


# ---- the sticky comment, ordered by workflow run (issue 14, item 3) -----------------------------

NODE = shutil.which("node")
HARNESS = """
const fs = require('fs');
const state = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const script = fs.readFileSync(process.argv[3], 'utf8');
const github = {
  rest: {
    pulls: { get: async () => ({ data: { head: { sha: state.pr_head } } }) },
    issues: {
      listComments: 'listComments',
      updateComment: async ({ comment_id, body }) => {
        state.comments.find((c) => c.id === comment_id).body = body; },
      createComment: async ({ body }) => {
        state.comments.push({ id: state.comments.length + 1,
          user: state.poster || { login: 'github-actions[bot]', type: 'Bot' }, body }); },
    },
    users: { getAuthenticated: async () => {
      if (!state.me) { throw new Error('Resource not accessible by integration'); }
      return { data: { login: state.me } }; } },
  },
  paginate: async () => state.comments,
};
const core = { info: (m) => state.log.push(m) };
const context = { repo: { owner: 'o', repo: 'r' } };
const fn = new (Object.getPrototypeOf(async function () {}).constructor)(
  'require', 'github', 'core', 'context', 'process', script);
fn(require, github, core, context, process).then(() => {
  fs.writeFileSync(process.argv[2], JSON.stringify(state)); });
"""


def post(tmp: Path, state: dict[str, object], plan: str, run_id: int, attempt: int, head: str) -> dict[str, object]:
    (tmp / "plan").mkdir(exist_ok=True)
    (tmp / "plan" / "plan.md").write_text(plan)
    (tmp / "plan" / "pr-number").write_text("7\n")
    script = yaml.safe_load(COMMENT_ACTION.read_text())["runs"]["steps"][1]["with"]["script"]
    (tmp / "script.js").write_text(script)
    (tmp / "harness.js").write_text(HARNESS)
    (tmp / "state.json").write_text(json.dumps(state))
    env = {"HEAD_SHA": head, "RUN_ID": str(run_id), "RUN_ATTEMPT": str(attempt), "PATH": "/usr/bin:/bin"}
    assert NODE is not None
    subprocess.run([NODE, "harness.js", "state.json", "script.js"], cwd=tmp, env=env, check=True)
    new: dict[str, object] = json.loads((tmp / "state.json").read_text())
    return new


@pytest.mark.skipif(NODE is None, reason="node not installed")
def test_sticky_comment_follows_the_workflow_run_not_the_commit_date(tmp_path: Path) -> None:
    state: dict[str, object] = {"pr_head": "h2", "comments": [], "log": []}
    # run 200 plans the current head h2 (its commit claims to be from 2096: nobody reads that)
    state = post(tmp_path, state, "<!-- allotment-plan head=h2 head_time=4000000000 -->\nnew\n", 200, 1, "h2")
    # a late, older run (199) for the same head must not overwrite it...
    state = post(tmp_path, state, "<!-- allotment-plan head=h2 -->\nold\n", 199, 3, "h2")
    comments = state["comments"]
    assert isinstance(comments, list) and len(comments) == 1
    assert comments[0]["body"].endswith("new\n")
    # ...a re-run of run 200 (attempt 2) and a later run do
    state = post(tmp_path, state, "<!-- allotment-plan head=h2 -->\nrerun\n", 200, 2, "h2")
    assert state["comments"][0]["body"].startswith("<!-- allotment-run id=200 attempt=2 -->")  # type: ignore[index]
    state = post(tmp_path, state, "<!-- allotment-plan head=h2 -->\nlater\n", 201, 1, "h2")
    assert state["comments"][0]["body"].endswith("later\n")  # type: ignore[index]
    # a run for a head the PR has left never posts
    state = post(tmp_path, state, "<!-- allotment-plan head=h1 -->\nstale\n", 300, 1, "h1")
    assert state["comments"][0]["body"].endswith("later\n")  # type: ignore[index]
    assert len(state["comments"]) == 1  # type: ignore[arg-type]


@pytest.mark.skipif(NODE is None, reason="node not installed")
def test_sticky_comment_is_found_by_its_marker_whoever_posts_it(tmp_path: Path) -> None:
    """A GitHub App token posts as ``<app>[bot]``: its second plan replaces its first."""
    app = {"login": "budget-bot[bot]", "type": "Bot"}
    state: dict[str, object] = {"pr_head": "h", "comments": [], "log": [], "poster": app}
    state = post(tmp_path, state, "<!-- allotment-plan head=h -->\nfirst\n", 10, 1, "h")
    state = post(tmp_path, state, "<!-- allotment-plan head=h -->\nsecond\n", 11, 1, "h")
    comments = state["comments"]
    assert isinstance(comments, list) and len(comments) == 1
    assert comments[0]["body"].endswith("second\n")


@pytest.mark.skipif(NODE is None, reason="node not installed")
def test_a_person_pasting_the_marker_cannot_capture_or_freeze_the_plan(tmp_path: Path) -> None:
    forged = {"id": 1, "user": {"login": "mallory", "type": "User"},
              "body": "<!-- allotment-run id=999999 attempt=9 -->\n<!-- allotment-plan x -->\nfake\n"}
    state: dict[str, object] = {"pr_head": "h", "comments": [forged], "log": []}
    state = post(tmp_path, state, "<!-- allotment-plan head=h -->\nreal\n", 10, 1, "h")
    comments = state["comments"]
    assert isinstance(comments, list) and len(comments) == 2
    assert comments[0]["body"].endswith("fake\n") and comments[1]["body"].endswith("real\n")


@pytest.mark.skipif(NODE is None, reason="node not installed")
def test_with_a_personal_token_the_comment_is_the_tokens_users(tmp_path: Path) -> None:
    me = {"login": "ops-bot", "type": "User"}
    state: dict[str, object] = {"pr_head": "h", "comments": [], "log": [], "poster": me, "me": "ops-bot"}
    state = post(tmp_path, state, "<!-- allotment-plan head=h -->\nfirst\n", 10, 1, "h")
    state = post(tmp_path, state, "<!-- allotment-plan head=h -->\nsecond\n", 11, 1, "h")
    comments = state["comments"]
    assert isinstance(comments, list) and len(comments) == 1
    assert comments[0]["body"].endswith("second\n")
