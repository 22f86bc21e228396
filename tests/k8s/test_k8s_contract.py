"""The shared backend contract, against a real kube-apiserver (make test-k8s)."""

from __future__ import annotations

import pytest

from tests.backends.contract import BackendContract

pytestmark = pytest.mark.k8s


class TestKubernetesBackendContract(BackendContract):
    pass
