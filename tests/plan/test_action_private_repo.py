"""The plan action in a private config repository (issue 26, item 5).

``actions/checkout`` with ``persist-credentials: false`` leaves no credentials behind, so any
later ``git fetch`` of a private repository is anonymous and refused.  These tests run the
action's base-fetch step, as the runner runs it, against an HTTP origin that refuses anyone
without the token (``gitserver.private_origin``: git's own smart-HTTP backend behind a check of
the Authorization header, which is what GitHub does for a private repository).

What they prove: with full history (the documented ``fetch-depth: 0``) the step makes no
request at all; without it, the one fetch carries the token and succeeds where an anonymous one
is refused.  What they do not prove: that GitHub accepts ``x-access-token`` basic auth from a
workflow token (that is GitHub's documented scheme, the one actions/checkout itself uses).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.plan.actionrunner import ActionRun, allot_on_path
from tests.plan.gitrepo import GitRepo
from tests.plan.gitserver import private_origin

PLAN_ACTION = REPO_ROOT / ".github/actions/plan/action.yml"
TOKEN = "ghs_test-token-0123456789"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def _checkout(tmp: Path, url: str) -> Path:
    """A PR checkout whose origin is the private server; returns the workspace."""
    origin = GitRepo.from_data(tmp / "src")
    origin.commit("budget tree")
    origin.switch("pr", create=True)
    origin.set_share("budgets/acme/ml/budget.yaml", "vision", 70)
    head = origin.commit("the change", author="vera@acme.example")
    origin.switch("main")
    _git("clone", "-q", "--bare", str(origin.path), str(tmp / "srv" / "cfg.git"))
    ws = tmp / "ws"
    _git("clone", "-q", str(tmp / "srv" / "cfg.git"), str(ws / "pr"))
    _git("-C", str(ws / "pr"), "checkout", "-q", "--detach", head)
    _git("-C", str(ws / "pr"), "remote", "set-url", "origin", f"{url}/cfg.git")
    return ws


def _fetch_step(tmp: Path, ws: Path, token: str) -> ActionRun:
    run = ActionRun(
        PLAN_ACTION, ws,
        inputs={"config-path": "pr", "github-token": token},
        context={"github.base_ref": "main", "runner.temp": str(tmp / "runner-temp")},
    )
    run.run(allot_on_path(tmp / "bin"), only=frozenset({"base"}))
    return run


def test_the_origin_really_refuses_an_anonymous_fetch(tmp_path: Path) -> None:
    """The server is a fair stand-in for a private repository: no token, no data."""
    with private_origin(tmp_path / "srv", TOKEN) as (url, log):
        ws = _checkout(tmp_path, url)
        _git("-C", str(ws / "pr"), "update-ref", "-d", "refs/remotes/origin/main")
        run = _fetch_step(tmp_path, ws, token="")
    assert "step 'Fetch the base branch (only when the checkout lacks it)' failed" in run.logs[-1]
    assert log.seen and not any(ok for _, ok in log.seen)


def test_with_full_history_the_action_fetches_nothing(tmp_path: Path) -> None:
    with private_origin(tmp_path / "srv", TOKEN) as (url, log):
        ws = _checkout(tmp_path, url)
        run = _fetch_step(tmp_path, ws, token="")
    assert run.outputs["base"] == {"fetched": "no"}, run.logs
    assert log.seen == []  # not one request reached the origin


def test_a_checkout_without_the_base_branch_fetches_it_with_the_token(tmp_path: Path) -> None:
    with private_origin(tmp_path / "srv", TOKEN) as (url, log):
        ws = _checkout(tmp_path, url)
        main = _git("-C", str(ws / "pr"), "rev-parse", "refs/remotes/origin/main").strip()
        _git("-C", str(ws / "pr"), "update-ref", "-d", "refs/remotes/origin/main")
        run = _fetch_step(tmp_path, ws, token=TOKEN)
    assert run.outputs["base"] == {"fetched": "yes"}, run.logs
    assert _git("-C", str(ws / "pr"), "rev-parse", "refs/remotes/origin/main").strip() == main
    assert log.seen and all(ok for _, ok in log.seen)
    # the token was a header of that one command, not stored in the checkout's config
    assert TOKEN not in (ws / "pr" / ".git" / "config").read_text()
