"""Every user name a tree may hold is carried to Kubernetes (issue 32): a Unix or Slurm user name
with ``_`` or ``.`` stopped the reconciler before."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from allotment.backends.kubernetes import names as n
from allotment.config.target_names import is_k8s_name


def test_a_plain_user_keeps_its_readable_configmap_name() -> None:
    assert n.user_configmap("alice") == "user-alice"


def test_user_names_with_underscores_and_dots_are_carried_and_kept_apart() -> None:
    got = {u: n.user_configmap(u) for u in ("first.last", "first_last", "svc_ci", "a.b", "a_b", "a-b")}
    assert all(is_k8s_name(v) for v in got.values())
    assert len(set(got.values())) == len(got)
    assert got["first.last"].startswith("user-first-last-")


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=80))
def test_any_user_name_maps_to_one_legal_name_the_same_every_time(user: str) -> None:
    name = n.user_configmap(user)
    assert is_k8s_name(name)
    assert n.user_configmap(user) == name
