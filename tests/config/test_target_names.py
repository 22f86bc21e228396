"""Issue 32, item 3: a name ``allot validate`` accepts is one every target can carry.

``x__y--z_`` and ``a-`` validated and then made ``allot compile --target kai|kueue`` exit 3, so
such a pull request passed CI and was refused by a Kubernetes reconciler.  The refusal itself,
with its position and the target named, is the corpus case ``bad/name-a-target-cannot-carry``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allotment.backends.kubernetes.names import k8s_name, tier_queue
from allotment.backends.policy import slurm_name, tier_name
from allotment.config.models.common import NAME_PATTERN
from allotment.config.target_names import target_name_problem
from allotment.errors import BackendError


@given(st.from_regex(NAME_PATTERN, fullmatch=True))
def test_every_name_validate_accepts_is_carried_by_every_target(name: str) -> None:
    if target_name_problem(name) is not None:
        return  # validate refuses it (tests/config/bad/name-a-target-cannot-carry)
    assert slurm_name(name) == name
    assert k8s_name(name) == name
    assert tier_queue(name, tier_name(8 * 3600))


@pytest.mark.parametrize("name", ["x__y--z_", "a-", "team_1", "a" * 64])
def test_a_name_kubernetes_refuses_is_refused_by_validate_naming_the_target(name: str) -> None:
    with pytest.raises(BackendError):
        k8s_name(name)
    problem = target_name_problem(name)
    assert problem is not None and "kai and kueue" in problem
