"""The names, labels and annotations allotment writes on Kubernetes objects, in one place.

Kubernetes object names are DNS-1123 labels (``config.target_names``, the one rule, which
``allot validate`` applies to every team and GPU type); a user name is carried whatever it holds
(``user_configmap``), and any other name that cannot be fails here before anything is written.  Durations are Go durations
(``168h``, ``15m``, ``1h30m``): KAI parses them with ``time.ParseDuration``, which has no ``d``.
"""

from __future__ import annotations

import hashlib
import re

from allotment.config.target_names import K8S_NAME_MAX, K8S_NAME_RULE, is_k8s_name
from allotment.errors import BackendError

FIELD_MANAGER = "allotment"
MANAGED_BY = "app.kubernetes.io/managed-by"
KIND_LABEL = "allotment.dev/kind"  # budget | tier | user
ACCOUNT_LABEL = "allotment.dev/account"  # on tier queues: the leaf account
QOS_LABEL = "allotment.dev/qos"  # on tier queues: the tier (QOS) name
JOB_LABEL = "allotment.dev/job"  # on pods: the job (gang) the pod belongs to
USER_LABEL = "allotment.dev/user"
QUEUE_LABEL = "kai.scheduler/queue"  # KAI's own pod label naming the queue
POD_GROUP_ANNOTATION = "pod-group-name"  # KAI's pod-group annotation (gang id fallback)
MIN_RUNTIME_ANNOTATION = "allotment.dev/min-runtime"  # Go duration a job declares
RESUMABLE_ANNOTATION = "allotment.dev/resumable"  # "false": a requeue loses work
PRIORITY_ANNOTATION = "allotment.dev/priority"  # order the reconciler set (set_priority)
# what a user declares for the within-team order (docs/kubernetes.md, "Within-team order"): the
# scheduler's own fields are the tiers' (KAI and Kueue priority classes), and neither KAI nor
# Kueue has a deadline or a dependency between jobs
DECLARED_PRIORITY_ANNOTATION = "allotment.dev/declared-priority"  # an integer, higher first
DEADLINE_ANNOTATION = "allotment.dev/deadline"  # RFC 3339 time (or Unix seconds)
DEPENDS_ON_ANNOTATION = "allotment.dev/depends-on"  # job ids, comma-separated
DRAIN_ANNOTATION = "allotment.dev/drain-reason"  # on a cordoned node: why
QOS_ANNOTATION_PREFIX = "allotment.dev/qos-"  # QOS fields kept on a PriorityClass
JOB_KIND_LABEL = "allotment.dev/job-kind"  # on pods: the kind a user declares (interactive, train...)
# a session's notice (docs/design/interactive.md): set on every pod of the gang when the reconciler
# decides to requeue it, ``grace`` seconds before the eviction (whose termination grace is the same)
NOTICE_ANNOTATION = "allotment.dev/preemption-notice"  # Unix seconds of the notice
GRACE_ANNOTATION = "allotment.dev/grace-seconds"
RESTORE_HOOK_ANNOTATION = "allotment.dev/restore-hook"  # the command the requeued session runs first
GPU_RESOURCE = "nvidia.com/gpu"
USERS_NAMESPACE = "allotment-system"

def k8s_name(name: str) -> str:
    """``name`` as a Kubernetes object name; refuse what Kubernetes cannot store (the rule is
    ``config.target_names``, which ``allot validate`` applies to every team and GPU type)."""
    if not is_k8s_name(name):
        raise BackendError(f"name {name!r} cannot be {K8S_NAME_RULE}")
    return name


def tier_queue(account: str, qos: str) -> str:
    """The child queue of leaf ``account`` that carries minimum-runtime tier ``qos``."""
    return k8s_name(f"{account}-{qos}")


def user_configmap(user: str) -> str:
    """The ConfigMap that carries ``user``: ``user-<name>`` when that is a Kubernetes name, else
    ``user-<name made legal>-<8 hex of its SHA-256>``.  Unix and Slurm user names may hold ``_``
    and ``.`` (``first.last``, ``svc_ci``), which Kubernetes object names may not; refusing them
    stopped a reconciler on a tree ``allot validate`` accepts (issue 32).  The hash keeps two
    names that differ only there (``a.b``, ``a_b``) apart; the exact name is the ConfigMap's
    ``user`` field, which is what is read back (``policy_read.user_of``)."""
    plain = f"user-{user}"
    if is_k8s_name(plain):
        return plain
    digest = hashlib.sha256(user.encode()).hexdigest()[:8]
    legal = re.sub(r"[^a-z0-9-]+", "-", user.lower()).strip("-")
    legal = legal[: K8S_NAME_MAX - len("user--") - len(digest)].strip("-")
    return k8s_name(f"user-{legal}-{digest}" if legal else f"user-{digest}")


def go_duration(seconds: int) -> str:
    """Whole seconds as the shortest Go duration: 604800 -> ``168h``, 5400 -> ``1h30m``."""
    if seconds <= 0:
        return "0s"
    h, rest = divmod(int(seconds), 3600)
    m, s = divmod(rest, 60)
    return "".join(f"{n}{u}" for n, u in ((h, "h"), (m, "m"), (s, "s")) if n)


_GO_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(h|m|s|ms)")


def parse_go_duration(text: str) -> int | None:
    """Whole seconds of a Go duration made of h/m/s parts; None when it is not one."""
    t = text.strip()
    if t in ("0", "0s"):
        return 0
    parts = _GO_PART.findall(t)
    if not parts or "".join(n + u for n, u in parts) != t:
        return None
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return round(sum(float(n) * scale[u] for n, u in parts))
