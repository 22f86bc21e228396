"""The within-team order on a real kube-apiserver (issue 28, item 3): what a user declares in the
documented annotations (``allotment.dev/declared-priority``, ``/deadline``, ``/depends-on``;
docs/kubernetes.md) reaches the core.  A job waiting for another is not queued (Kubernetes
enforces no dependency, so the core does) and lends its declared priority to the job it waits
for, which goes before its team's older work (though that one has a deadline); a job with no
annotations reads as before."""

from __future__ import annotations

import pytest

from allotment.reconcile.active import plan_cluster
from allotment.reconcile.reconciler import Reconciler
from tests.backends.configs import tree_config
from tests.k8s.cluster import Cluster
from tests.k8s.test_reconcile_k8s import SHORT, cluster, ok, reconciler, repo  # noqa: F401

pytestmark = pytest.mark.k8s


def test_declared_priority_deadline_and_dependencies_are_read_from_annotations_and_order_the_team(
    reconciler: Reconciler,  # noqa: F811
    cluster: Cluster,  # noqa: F811
) -> None:
    ok(reconciler.tick())
    hogs = [cluster.submit("teamb", 8, SHORT) for _ in range(4)]
    for i, h in enumerate(hogs, 1):
        cluster.bind(h, [f"n{i}"])
    older = cluster.submit("teama1", 8, SHORT, annotations={"allotment.dev/deadline": "2026-12-05T18:00:00Z"})
    prereq = cluster.submit("teama1", 8, SHORT)
    urgent = cluster.submit("teama1", 8, SHORT, annotations={
        "allotment.dev/declared-priority": "10", "allotment.dev/depends-on": f"{prereq}, {prereq}"})
    obs = reconciler.backend.observe()
    jobs = {j.id: j for j in obs.jobs}
    assert (jobs[urgent].declared_priority, jobs[urgent].depends_on, jobs[urgent].deadline) == (10, (prereq,), None)
    assert (jobs[older].declared_priority, jobs[older].depends_on, jobs[older].deadline) == (0, (), 1796493600.0)
    assert (jobs[prereq].declared_priority, jobs[prereq].depends_on, jobs[prereq].deadline) == (0, (), None)
    order = [r.job_id for r in plan_cluster(obs, tree_config(), "gpulab", {}, {}).decisions.order]
    assert order.index(prereq) < order.index(older) and urgent not in order
