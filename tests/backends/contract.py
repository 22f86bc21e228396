"""The conformance suite every backend passes (fsspec style): subclass ``BackendContract`` in a
module whose conftest provides a ``harness`` fixture (``Harness`` below), and every test runs.

The simulated backend runs it in ``make test``; the Slurm backend runs the very same tests
against a real slurmctld under ``make test-slurm``.  The harness hides only what differs:
how a job is submitted, how time passes (a manual clock or the wall clock) and how an operator
changes something by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from allotment.backends.actions import ClusterAction, start_key
from allotment.backends.diff import diff_policy
from allotment.backends.policy import (
    SLURM_ROOT,
    UNALLOCATED_QOS,
    PolicyState,
    desired_policy,
    tier_name,
)
from allotment.backends.protocol import Backend, Observation
from tests.backends.configs import DEFAULT_WEIGHTS, tree_config


class Harness(Protocol):
    backend: Backend
    tiers_s: tuple[int, ...]

    def submit(self, account: str, gpus: int, qos: str) -> str: ...

    def wait(
        self, what: str, pred: Callable[[Observation], bool], timeout: float = 30
    ) -> Observation: ...

    def set_fairshare_by_hand(self, account: str, fairshare: int) -> None: ...


def _sync(h: Harness, desired: PolicyState, *, prune: bool = False) -> None:
    plan = diff_policy(desired, h.backend.observe_policy(), prune=prune)
    results = h.backend.apply(plan.actions)
    assert [r for r in results if r.code == "failed"] == []


def _desired(h: Harness, **kw: object) -> PolicyState:
    return desired_policy(tree_config(**kw), "gpulab", h.tiers_s)  # type: ignore[arg-type]


def _tree(state: PolicyState, root: str) -> set[tuple[str, str, int]]:
    from allotment.backends.diff import managed_accounts

    return {(a.name, a.parent, a.fairshare) for a in managed_accounts(state, root)}


class BackendContract:
    """Behaviour every backend shares.  Tests reset the cluster through the harness fixture."""

    def test_sync_creates_exactly_the_compiled_tree(self, harness: Harness) -> None:
        desired = _desired(harness)
        _sync(harness, desired)
        observed = harness.backend.observe_policy()
        assert _tree(observed, "org") == {(a.name, a.parent, a.fairshare) for a in desired.accounts}
        assert {q.name for q in desired.qos} <= {q.name for q in observed.qos}
        root_user = next(u for u in observed.users if u.name == "root")
        assert set(root_user.accounts) >= {"teama1", "teama2", "teamb"}
        assert diff_policy(desired, observed, prune=False).empty

    def test_second_sync_changes_nothing(self, harness: Harness) -> None:
        desired = _desired(harness)
        _sync(harness, desired)
        before = harness.backend.observe_policy()
        assert diff_policy(desired, before, prune=False).actions == ()
        assert harness.backend.observe_policy() == before

    def test_dry_run_changes_nothing(self, harness: Harness) -> None:
        desired = _desired(harness)
        _sync(harness, desired)
        changed = _desired(harness, weights={**DEFAULT_WEIGHTS, "teama1": 10})
        plan = diff_policy(changed, harness.backend.observe_policy(), prune=False)
        assert [a.target for a in plan.actions] == ["teama1", "teama2"]
        results = harness.backend.apply(plan.actions, dry_run=True)
        assert {r.code for r in results} == {"dry_run"}
        assert not diff_policy(changed, harness.backend.observe_policy(), prune=False).empty

    def test_changed_share_is_applied(self, harness: Harness) -> None:
        _sync(harness, _desired(harness))
        changed = _desired(harness, weights={**DEFAULT_WEIGHTS, "teama1": 10})
        _sync(harness, changed)
        observed = harness.backend.observe_policy()
        assert observed.account("teama1").fairshare == 3333  # type: ignore[union-attr]
        assert observed.account("teama2").fairshare == 6667  # type: ignore[union-attr]

    def test_hand_made_drift_is_detected_and_corrected(self, harness: Harness) -> None:
        desired = _desired(harness)
        _sync(harness, desired)
        harness.set_fairshare_by_hand("teamb", 7)
        plan = diff_policy(desired, harness.backend.observe_policy(), prune=False)
        assert [(a.kind, a.target) for a in plan.actions] == [("modify_account", "teamb")]
        assert "fairshare 7 -> 4000" in plan.actions[0].reason
        _sync(harness, desired)
        assert diff_policy(desired, harness.backend.observe_policy(), prune=False).empty

    def test_prune_is_off_by_default_and_refuses_an_empty_tree(self, harness: Harness) -> None:
        _sync(harness, _desired(harness))
        smaller = _desired(harness, tree={"org": None, "proga": "org", "teama1": "proga"})
        plan = diff_policy(smaller, harness.backend.observe_policy(), prune=False)
        assert {a.target for a in plan.prune_skipped if a.kind == "delete_account"} == {
            "teama2",
            "teamb",
        }
        _sync(harness, smaller)
        assert harness.backend.observe_policy().account("teamb") is not None
        empty = _desired(harness, tree={"org": None}, users={})
        refused = diff_policy(empty, harness.backend.observe_policy(), prune=True)
        assert refused.prune_refused and not any(
            a.kind.startswith("delete") for a in refused.actions
        )

    def test_prune_when_enabled_removes_what_the_config_no_longer_names(
        self, harness: Harness
    ) -> None:
        _sync(harness, _desired(harness))
        smaller = _desired(harness, tree={"org": None, "proga": "org", "teama1": "proga"})
        _sync(harness, smaller, prune=True)
        observed = harness.backend.observe_policy()
        assert _tree(observed, "org") == {(a.name, a.parent, a.fairshare) for a in smaller.accounts}
        assert observed.account(SLURM_ROOT) is not None
        assert diff_policy(smaller, observed, prune=True).empty

    def test_observe_reports_jobs_with_their_declared_minimum_runtime(
        self, harness: Harness
    ) -> None:
        _sync(harness, _desired(harness))
        tier = tier_name(harness.tiers_s[0])
        a = harness.submit("teama1", 4, tier)
        b = harness.submit("teamb", 2, UNALLOCATED_QOS)
        obs = harness.wait(
            "both running", lambda o: len([j for j in o.running() if j.id in (a, b)]) == 2
        )
        ja, jb = obs.job(a), obs.job(b)
        assert ja is not None and jb is not None
        assert (ja.account, ja.gpus, ja.qos, ja.min_runtime_s, ja.user) == (
            "teama1",
            4,
            tier,
            harness.tiers_s[0],
            "root",
        )
        assert (jb.account, jb.gpus, jb.min_runtime_s) == ("teamb", 2, 0)
        assert ja.start is not None and ja.start <= obs.at
        assert sum(n.gpus_used for n in obs.nodes) >= 6

    def test_requeue_is_keyed_so_a_retry_is_a_no_op(self, harness: Harness) -> None:
        _sync(harness, _desired(harness))
        job = harness.submit("teamb", 8, UNALLOCATED_QOS)
        obs = harness.wait(
            "running", lambda o: (j := o.job(job)) is not None and j.state == "running"
        )
        start = obs.job(job).start  # type: ignore[union-attr]
        assert start is not None
        act = ClusterAction("requeue", job, "test", "contract", expect=start_key(start))
        assert [r.code for r in harness.backend.apply([act])] == ["applied"]
        assert [r.code for r in harness.backend.apply([act])] == ["unchanged"]
        # Slurm passes through COMPLETING before PENDING; the contract is where the job ends up
        # (it then stays pending for cred_expire, 10 s, before it may start again).
        harness.wait(
            "pending after requeue",
            lambda o: (j := o.job(job)) is not None and j.state == "pending",
            timeout=10,
        )

    def test_drain_keeps_new_work_off_a_node_until_resumed(self, harness: Harness) -> None:
        _sync(harness, _desired(harness))
        drain = ClusterAction("drain", "n1", "health", "unhealthy in test")
        assert [r.code for r in harness.backend.apply([drain])] == ["applied"]
        assert [r.code for r in harness.backend.apply([drain])] == ["unchanged"]
        jobs = [harness.submit("teama2", 8, UNALLOCATED_QOS) for _ in range(4)]
        obs = harness.wait(
            "three running", lambda o: len([j for j in o.running() if j.id in jobs]) == 3
        )
        assert all("n1" not in j.nodes for j in obs.running())
        assert obs.node("n1").drain  # type: ignore[union-attr]
        resume = ClusterAction("resume", "n1", "health", "healthy again")
        assert [r.code for r in harness.backend.apply([resume])] == ["applied"]
        obs = harness.wait("fourth on n1", lambda o: any("n1" in j.nodes for j in o.running()))
        assert not obs.node("n1").drain  # type: ignore[union-attr]

    def test_set_priority_is_visible_and_idempotent(self, harness: Harness) -> None:
        _sync(harness, _desired(harness))
        drain = [ClusterAction("drain", f"n{i}", "test", "make jobs pend") for i in range(1, 5)]
        harness.backend.apply(drain)
        job = harness.submit("teama1", 1, UNALLOCATED_QOS)
        act = ClusterAction("set_priority", job, "order", "core rank", value=4242)
        assert [r.code for r in harness.backend.apply([act])] == ["applied"]
        assert [r.code for r in harness.backend.apply([act])] == ["unchanged"]
        assert harness.backend.observe().job(job).priority == 4242  # type: ignore[union-attr]
