"""One naming rule for every target a budget is compiled to or driven on.

``allot validate`` is the gate every budget change passes, so a name it accepts must be one
every target can store: otherwise a pull request passes CI and is later refused by a
reconciler (issue 32, item 3: ``x__y--z_`` and ``a-`` validated, then ``allot compile
--target kai|kueue`` exited 3).  The config's own ``NAME_PATTERN`` is what Slurm stores (the
Slurm backend checks it again in ``backends.policy.slurm_name``); Kubernetes, for KAI queues
and Kueue cohorts, cluster queues, namespaces and resource flavors, is stricter: a DNS-1123
label.  Both the validator and the Kubernetes backend ask this module, so they cannot disagree.
"""

from __future__ import annotations

import re

K8S_TARGETS = "kai and kueue (Kubernetes)"
K8S_NAME_MAX = 63
K8S_NAME_RULE = (
    "a Kubernetes object name: lower-case letters, digits and '-', starting and ending with a "
    f"letter or digit, at most {K8S_NAME_MAX} characters"
)
_K8S_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def is_k8s_name(name: str) -> bool:
    return len(name) <= K8S_NAME_MAX and _K8S_NAME.fullmatch(name) is not None


def target_name_problem(name: str) -> str | None:
    """Why some target cannot carry ``name`` (naming the target), or None when all can."""
    if not is_k8s_name(name):
        return f"{name!r} cannot be carried by {K8S_TARGETS}: it must be {K8S_NAME_RULE}"
    return None
