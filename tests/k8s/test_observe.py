"""Reading Nodes and Pods into the reconciler's observation (pure; JSON as the API serves it)."""

from __future__ import annotations

from typing import Any

from allotment.backends.kubernetes.observe import TierInfo, cluster_obs

TIERS = {
    "teama1-alloc-1h": TierInfo("teama1", "alloc-1h", 3600),
    "teamb-unallocated": TierInfo("teamb", "unallocated", 0),
}


def node(name: str, gpus: int = 8, **kw: Any) -> dict[str, Any]:
    ready = kw.pop("ready", True)
    return {
        "metadata": {"name": name, "annotations": kw.pop("annotations", {})},
        "spec": kw,
        "status": {
            "allocatable": {"nvidia.com/gpu": str(gpus)},
            "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "message": "gone"}
            ],
        },
    }


def pod(
    name: str,
    job: str,
    queue: str,
    gpus: int,
    host: str | None = None,
    start: str | None = None,
    **ann: str,
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ml",
            "creationTimestamp": "2026-12-01T10:00:00Z",
            "labels": {"allotment.dev/job": job, "kai.scheduler/queue": queue},
            "annotations": {
                k.replace("_", "-").replace("allotment-", "allotment.dev/"): v
                for k, v in ann.items()
            },
        },
        "spec": {
            "nodeName": host,
            "containers": [{"name": "m", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}],
        },
        "status": {"phase": "Running" if host else "Pending", "startTime": start},
    }


def test_a_gang_is_one_job_with_the_tier_of_its_queue_and_its_earliest_start() -> None:
    pods = [
        pod("a-0", "7", "teama1-alloc-1h", 8, "n1", "2026-12-01T11:00:05Z"),
        pod("a-1", "7", "teama1-alloc-1h", 8, "n2", "2026-12-01T11:00:00Z"),
    ]
    nodes, jobs, _ = cluster_obs([node("n2"), node("n1")], pods, TIERS)
    assert [x.name for x in nodes] == ["n1", "n2"]
    assert [x.gpus_used for x in nodes] == [8, 8]
    (j,) = jobs
    assert (j.id, j.account, j.qos, j.gpus, j.state, j.min_runtime_s) == (
        "7",
        "teama1",
        "alloc-1h",
        16,
        "running",
        3600,
    )
    assert j.nodes == ("n1", "n2") and j.start == 1796122800.0 and j.user == "ml"
    assert j.priority == 1 and j.resumable


def test_a_gang_with_one_unbound_pod_is_pending() -> None:
    pods = [
        pod("a-0", "7", "teama1-alloc-1h", 8, "n1", "2026-12-01T11:00:05Z"),
        pod("a-1", "7", "teama1-alloc-1h", 8),
    ]
    (j,) = cluster_obs([node("n1")], pods, TIERS)[1]
    assert j.state == "pending" and j.start is None


def test_declared_annotations_override_and_unallocated_work_has_no_minimum_runtime() -> None:
    pods = [
        pod(
            "x",
            "1",
            "teama1-alloc-1h",
            1,
            allotment_min_runtime="30m",
            allotment_resumable="false",
            allotment_priority="4242",
        ),
        pod("y", "2", "teamb-unallocated", 1, allotment_min_runtime="2h"),
    ]
    a, b = cluster_obs([], pods, TIERS)[1]
    assert (a.min_runtime_s, a.resumable, a.priority) == (1800, False, 4242)
    assert (b.qos, b.min_runtime_s) == ("unallocated", 0)


def test_finished_pods_are_not_work_and_jobs_sort_numerically() -> None:
    done = pod("d", "3", "teama1-alloc-1h", 8, "n1", "2026-12-01T11:00:00Z")
    done["status"]["phase"] = "Succeeded"
    pods = [done, pod("p10", "10", "teama1-alloc-1h", 1), pod("p9", "9", "teama1-alloc-1h", 1)]
    nodes, jobs, _ = cluster_obs([node("n1")], pods, TIERS)
    assert [j.id for j in jobs] == ["9", "10"] and nodes[0].gpus_used == 0


def test_cordon_is_drain_and_a_not_ready_node_is_down_with_a_reason() -> None:
    a, b = cluster_obs(
        [
            node(
                "a", unschedulable=True, annotations={"allotment.dev/drain-reason": "allotment: x"}
            ),
            node("b", ready=False),
        ],
        [],
        {},
    )[0]
    assert (a.drain, a.down, a.reason) == (True, False, "allotment: x")
    assert (b.drain, b.down, b.reason) == (False, True, "NotReady: gone")


def test_what_a_user_declares_for_the_within_team_order_is_read_from_annotations() -> None:
    """Issue 28, item 3 (docs/kubernetes.md): declared priority, deadline and the jobs a job
    waits for; a value that does not parse counts as not given."""
    cases = [
        ({}, (0, None, ())),
        ({"allotment_declared_priority": "7", "allotment_deadline": "2026-12-05T18:00:00Z",
          "allotment_depends_on": "5, ml/p-3,5"}, (7, 1796493600.0, ("5", "ml/p-3"))),
        ({"allotment_declared_priority": "-99999999999", "allotment_deadline": "1796493600"},
         (-(2**31), 1796493600.0, ())),
        ({"allotment_declared_priority": "high", "allotment_deadline": "tomorrow"}, (0, None, ())),
        ({"allotment_deadline": "nan"}, (0, None, ())),
    ]
    for ann, want in cases:
        _, (j,), _ = cluster_obs([node("n1")], [pod("a-0", "7", "teama1-alloc-1h", 8, **ann)], TIERS)
        assert (j.declared_priority, j.deadline, j.depends_on) == want, ann
