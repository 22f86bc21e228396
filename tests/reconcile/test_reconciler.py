from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from allotment.backends.simulated import SimulatedBackend
from allotment.compile.compiler import compile_repo
from allotment.errors import BackendError
from allotment.reconcile.reconciler import Options
from allotment.reconcile.status import load_status
from allotment.timefmt import rfc3339
from tests.reconcile.conftest import T0
from tests.reconcile.repo import DEFAULT_SHARES, commit_all, head, write_repo


def _fairshare(sim: SimulatedBackend, account: str) -> int:
    return sim.state.accounts[account].fairshare


def test_first_tick_applies_the_tree_and_second_tick_changes_nothing(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = make_reconciler()
    first = rec.tick()
    assert first.error is None and first.counts()["applied"] > 0
    assert _fairshare(sim, "teama1") == 6667
    second = rec.tick()
    assert second.results == [] and second.error is None
    assert rec.status.condition("Ready").status
    assert not rec.status.condition("Reconciling").status


def test_applied_inputs_sha_is_the_one_a_plan_of_the_same_commit_shows(
    make_reconciler: Any, config_repo: Path, clock: Any
) -> None:
    rec = make_reconciler()
    rec.tick()
    at = dt.datetime.fromtimestamp(clock(), dt.UTC).date()
    expected = compile_repo(config_repo, at).inputs_sha256
    assert rec.status.last_applied_inputs_sha256 == expected
    assert rec.status.last_applied_revision == head(config_repo)


def test_a_changed_share_in_a_new_commit_shows_after_one_tick(
    make_reconciler: Any, config_repo: Path, sim: SimulatedBackend
) -> None:
    rec = make_reconciler()
    rec.tick()
    write_repo(config_repo, {**DEFAULT_SHARES, "teama1": 10})
    sha = commit_all(config_repo, "shrink teama1")
    result = rec.tick()
    assert result.revision == sha
    assert (_fairshare(sim, "teama1"), _fairshare(sim, "teama2")) == (3333, 6667)
    assert result.drift == []  # a new revision is a change, not drift


def test_a_commit_that_does_not_validate_is_never_applied(
    make_reconciler: Any, config_repo: Path, sim: SimulatedBackend
) -> None:
    rec = make_reconciler()
    rec.tick()
    good = rec.status.last_applied_revision
    (config_repo / "budgets/org/teamb/budget.yaml").write_text("owners: [\n", encoding="utf-8")
    bad = commit_all(config_repo, "broken yaml")
    result = rec.tick()
    assert result.revision == good and result.results == []
    st = rec.status
    assert st.last_applied_revision == good and st.last_attempted_revision == bad
    assert bad in st.bad_revisions and "budgets/org/teamb/budget.yaml" in st.bad_revisions[bad]
    stalled = st.condition("Stalled")
    assert (
        stalled.status
        and stalled.reason == "NewestRevisionRejected"
        and good[:12] in stalled.message
        and "does not validate" in stalled.message
    )
    # fixing it moves on
    write_repo(config_repo, {**DEFAULT_SHARES, "teamb": 20})
    fixed = commit_all(config_repo, "fix")
    assert rec.tick().revision == fixed
    assert not rec.status.condition("Stalled").status


def test_drift_is_corrected_when_policy_says_correct(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = make_reconciler()
    rec.tick()
    sim.set_fairshare_by_hand("teamb", 7)
    result = rec.tick()
    assert result.drift == ["modify_account teamb: fairshare 7 -> 4000"]
    assert _fairshare(sim, "teamb") == 4000
    assert rec.tick().drift == []


def test_drift_is_only_reported_when_policy_says_report(
    make_reconciler: Any, config_repo: Path, sim: SimulatedBackend
) -> None:
    write_repo(config_repo, drift="report")
    commit_all(config_repo, "report drift only")
    rec = make_reconciler()
    rec.tick()
    sim.set_fairshare_by_hand("teamb", 7)
    result = rec.tick()
    assert result.drift and result.results == []
    assert _fairshare(sim, "teamb") == 7
    ready = rec.status.condition("Ready")
    assert not ready.status and ready.reason == "DriftReported"


def test_dry_run_changes_nothing_and_says_what_it_would_do(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    rec = make_reconciler(Options(tiers_s=(20,), dry_run=True))
    result = rec.tick()
    assert result.results and {r.code for r in result.results} == {"dry_run"}
    assert "org" not in sim.state.accounts
    assert rec.status.last_applied_revision is None


def test_removed_team_is_not_pruned_by_default(
    make_reconciler: Any, config_repo: Path, sim: SimulatedBackend
) -> None:
    write_repo(config_repo, extra_leaf="teama3")
    commit_all(config_repo, "add teama3")
    rec = make_reconciler()
    rec.tick()
    assert "teama3" in sim.state.accounts
    write_repo(config_repo)
    commit_all(config_repo, "drop teama3")
    rec.tick()
    assert "teama3" in sim.state.accounts
    assert any("delete_account teama3" in p for p in rec.status.prune_skipped)


def test_removed_team_is_pruned_when_policy_allows(
    make_reconciler: Any, config_repo: Path, sim: SimulatedBackend
) -> None:
    write_repo(config_repo, extra_leaf="teama3", prune=True)
    commit_all(config_repo, "add teama3")
    rec = make_reconciler()
    rec.tick()
    write_repo(config_repo, prune=True)
    commit_all(config_repo, "drop teama3")
    result = rec.tick()
    assert "teama3" not in sim.state.accounts
    assert "pruned" in result.counts()


class FlakyBackend:
    """The sim backend behind a switch: while ``down`` every call fails like a dead slurmctld."""

    name = "sim"

    def __init__(self, inner: SimulatedBackend) -> None:
        self.inner, self.down = inner, False

    def __getattr__(self, item: str) -> Any:
        attr = getattr(self.inner, item)
        if self.down and item in ("observe", "observe_policy", "apply"):

            def fail(*a: Any, **k: Any) -> Any:
                raise BackendError("squeue --json failed: Unable to contact slurm controller")

            return fail
        return attr


def test_backend_failure_is_stalled_then_converges(
    make_reconciler: Any, sim: SimulatedBackend
) -> None:
    flaky = FlakyBackend(sim)
    rec = make_reconciler(backend=flaky)
    rec.tick()
    flaky.down = True
    sim.set_fairshare_by_hand("teamb", 7)
    bad = rec.tick()
    assert bad.error and "slurm controller" in bad.error
    stalled = rec.status.condition("Stalled")
    assert stalled.status and stalled.reason == "BackendFailure"
    assert not rec.status.condition("Ready").status
    flaky.down = False
    good = rec.tick()
    assert good.error is None and _fairshare(sim, "teamb") == 4000
    assert not rec.status.condition("Stalled").status
    assert rec.status.condition("Reconciling").status  # it changed something: not Ready yet
    assert not rec.status.condition("Ready").status
    rec.tick()
    assert rec.status.condition("Ready").status


def test_status_file_and_audit_log_say_what_happened(
    make_reconciler: Any, tmp_path: Path, sim: SimulatedBackend
) -> None:
    rec = make_reconciler()
    rec.tick()
    raw = json.loads((tmp_path / "state/status.json").read_text())
    assert raw["last_applied_revision"] == rec.status.last_applied_revision
    assert {c["type"] for c in raw["conditions"]} == {"CapacityDrift", "Ready", "Reconciling", "Stalled"}
    outcomes = [e for e in rec.audit.read() if e["phase"] == "outcome"]
    intents = [e for e in rec.audit.read() if e["phase"] == "intent"]
    assert raw["action_counts"]["applied"] == len(outcomes) == len(intents)
    entry = next(e for e in outcomes if e["target"] == "teama1")
    assert entry["rule"] == "policy-sync" and entry["revision"] == rec.status.last_applied_revision
    assert entry["time"] == rfc3339(T0, ms=True) == "2026-11-18T11:06:40.000Z" and entry["result"] == "applied"
    assert load_status(tmp_path / "state").ticks == 1


def test_restart_resumes_from_the_state_dir(make_reconciler: Any, sim: SimulatedBackend) -> None:
    first = make_reconciler()
    first.tick()
    sha = first.status.last_applied_revision
    first.close()
    again = make_reconciler()
    assert again.status.last_applied_revision == sha
    sim.set_fairshare_by_hand("teamb", 9)
    assert again.tick().drift  # still knows what it applied: a hand change is drift
