"""What the 1.20 API server does not check, shown on the real server, so that the schema tests
(tests/k8s/test_manifests.py) are known to be the only guard: a misspelt field is accepted and
silently pruned even with ``fieldValidation=Strict``, while a wrongly typed one is refused."""

from __future__ import annotations

import pytest

from allotment.backends.kubernetes.client import ApiError, KubeClient
from allotment.backends.kubernetes.objects import budget_queue
from tests.k8s.cluster import Cluster
from tests.k8s.schemas import errors

pytestmark = pytest.mark.k8s
QUEUES = "/apis/scheduling.run.ai/v2/queues"


def test_a_typo_passes_the_1_20_server_but_not_the_schema_check(kube: KubeClient) -> None:
    Cluster(kube).reset()
    q = budget_queue("typo-probe", None, 1, 1.0)
    q["spec"]["parentQuee"] = "org"
    assert any("parentQuee" in e for e in errors(q))
    got = kube.request("POST", QUEUES, query={"fieldValidation": "Strict"}, body=q)
    assert "parentQuee" not in got["spec"] and "parentQueue" not in got["spec"]
    kube.request("DELETE", f"{QUEUES}/typo-probe")


def test_a_wrongly_typed_field_is_refused_by_the_server(kube: KubeClient) -> None:
    q = budget_queue("type-probe", None, 1, 1.0)
    q["spec"]["resources"]["gpu"]["quota"] = "eight"
    with pytest.raises(ApiError) as exc:
        kube.request("POST", QUEUES, body=q)
    assert exc.value.status == 422
