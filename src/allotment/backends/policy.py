"""The scheduler policy a backend carries, in the backend's own vocabulary but without its syntax.

Every backend stores three kinds of object: *accounts* (the budget tree, each with an integer
fair-share weight), *users* (associated with leaf accounts, one default) and *QOS tiers* (the
minimum-runtime contract).  ``desired_policy`` derives them from a ``CompiledConfig``; a backend's
``observe_policy`` reads the same shape back, so desired and observed can be compared by value
(``backends.diff``) with no backend-specific code.

Why integers: Slurm's ``Fairshare`` is an integer; rounding here, once, means a simulated and a
real backend compare exactly the same numbers.  Why lower case: Slurm lower-cases account names
(NOTES pitfall 7); comparing lower-cased names everywhere avoids a permanent false drift.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from allotment.compile.model import CompiledConfig
from allotment.config.models.common import NAME_PATTERN, USER_PATTERN
from allotment.durations import format_duration
from allotment.errors import BackendError

FAIRSHARE_SCALE = 10_000  # a normalized share of 1.0 among siblings becomes Fairshare=10000
UNALLOCATED_QOS = "unallocated"
DEFAULT_TIERS_S: tuple[int, ...] = (15 * 60, 3600, 4 * 3600, 8 * 3600)
SLURM_ROOT = "root"  # the account every Slurm association tree starts from
# one naming rule, the config layer's: whatever validates is a name the backend accepts
_ACCOUNT_NAME = re.compile(NAME_PATTERN)
_USER_NAME = re.compile(USER_PATTERN)


@dataclass(frozen=True, slots=True, order=True)
class AccountSpec:
    """One account: ``parent`` is another account or ``SLURM_ROOT``; ``fairshare`` >= 1;
    ``max_gpus`` the budget node's cap on GPUs held at once by it and everything below it
    (Slurm: ``GrpTRES=gres/gpu=N`` on the account's association), None for no cap."""

    name: str
    parent: str
    fairshare: int
    max_gpus: int | None = None


@dataclass(frozen=True, slots=True, order=True)
class UserSpec:
    """A user with an association in every account of ``accounts`` (sorted), allowed the QOS in
    ``qos`` (sorted) with ``default_qos`` when a job names none."""

    name: str
    accounts: tuple[str, ...]
    default_account: str
    qos: tuple[str, ...] = ()
    default_qos: str = ""


@dataclass(frozen=True, slots=True, order=True)
class QosSpec:
    """A QOS tier.  ``preempt_exempt_s`` is the protected minimum runtime; ``usage_factor`` 0
    means the work is never charged (unallocated)."""

    name: str
    priority: int
    preempt: tuple[str, ...]
    preempt_exempt_s: int
    usage_factor: float
    preempt_mode: str = "requeue"

    @staticmethod
    def from_fields(name: str, fields: Mapping[str, str]) -> QosSpec:
        """The tier an ``add_qos``/``modify_qos`` action's fields describe (the one parser every
        backend uses)."""
        return QosSpec(
            name,
            int(fields["priority"]),
            tuple(x for x in fields["preempt"].split(",") if x),
            int(fields["preempt_exempt_s"]),
            float(fields["usage_factor"]),
            fields["preempt_mode"],
        )


@dataclass(frozen=True, slots=True)
class PolicyState:
    """Accounts, users and QOS, each sorted by name: the unit desired and observed are compared in."""

    root: str
    accounts: tuple[AccountSpec, ...]
    users: tuple[UserSpec, ...]
    qos: tuple[QosSpec, ...]

    def account(self, name: str) -> AccountSpec | None:
        return next((a for a in self.accounts if a.name == name), None)


def tier_name(seconds: int) -> str:
    """``alloc-15m``, ``alloc-1h``...: the QOS a job picks to declare its minimum runtime."""
    return f"alloc-{format_duration(seconds)}"


def qos_tiers(tiers_s: tuple[int, ...], *, backend_preempts: bool = True) -> tuple[QosSpec, ...]:
    """The contract QOS: unallocated work is free; a tier's ``PreemptExemptTime`` is its
    minimum runtime.  Longer tiers get a higher priority so a longer commitment is started no
    later than a shorter one of the same rank.

    ``backend_preempts``: every allocated tier may preempt unallocated work by itself (Slurm's
    ``preempt/qos``).  That is the contract when nothing else acts (policy sync only, or a
    policy applied by hand from ``allot compile --target slurm``).  With the reconciler in
    active mode it is off: Slurm would preempt for any tier job it picks, with victims it
    picks, beyond the core's plan (the issue's replay: one team at 25 GPUs where the core
    planned 19, then five reclaims the simulator never made), so the core's requeues are the
    only preemptions."""
    out = [QosSpec(UNALLOCATED_QOS, 0, (), 0, 0.0)]
    preempt = (UNALLOCATED_QOS,) if backend_preempts else ()
    for i, s in enumerate(sorted(set(tiers_s))):
        if s <= 0:
            raise BackendError(f"a QOS tier needs a positive minimum runtime, got {s}s")
        out.append(QosSpec(tier_name(s), 100 + i, preempt, s, 1.0))
    return tuple(sorted(out))


def default_tier(tiers_s: tuple[int, ...], default_min_runtime_s: int) -> str:
    """The tier a job without an explicit QOS lands in: the largest not above the policy's
    default minimum runtime (the smallest tier when all are above it)."""
    ordered = sorted(set(tiers_s))
    fitting = [s for s in ordered if s <= default_min_runtime_s]
    return tier_name(fitting[-1] if fitting else ordered[0])


def slurm_name(name: str, *, user: bool = False) -> str:
    """Lower-case ``name`` and check it against the config's own naming rule (users:
    ``USER_PATTERN``, which allows a leading ``_`` as system accounts use; accounts and QOS:
    ``NAME_PATTERN``), so a commit that validates is never refused here; Slurm stores both."""
    low = name.lower()
    if not (_USER_NAME if user else _ACCOUNT_NAME).match(low):
        raise BackendError(f"name {name!r} cannot be a Slurm account/user/QOS name")
    return low


def fairshare(share: float) -> int:
    return max(1, round(share * FAIRSHARE_SCALE))


def desired_policy(
    config: CompiledConfig,
    cluster: str,
    tiers_s: tuple[int, ...] = DEFAULT_TIERS_S,
    *,
    backend_preempts: bool = True,
) -> PolicyState:
    """What ``cluster`` should hold for ``config``: active nodes eligible for the cluster
    (``backend_preempts``: see ``qos_tiers``)."""
    if cluster not in config.clusters:
        raise BackendError(
            f"cluster {cluster!r} is not in the inventory ({sorted(config.clusters)})"
        )
    if not tiers_s:
        raise BackendError("at least one allocated QOS tier is needed")
    keep = {n.name for n in config.nodes if n.active and cluster in n.clusters}
    keep.add(config.root)
    # in active mode (the backend preempts nothing) the core enforces each max_gpus and lets a
    # team's short debug jobs pass it by ``debug_over_cap`` (core.debug_overdraft): the
    # association's limit is that outer bound, or Slurm would hold the debug jobs the core starts;
    # without active mode nothing but Slurm decides, and the cap is max_gpus itself
    over = 0 if backend_preempts else config.policy_for(cluster).debug_over_cap
    accounts: list[AccountSpec] = []
    for node in config.nodes:
        if node.name not in keep:
            continue
        parent = SLURM_ROOT if node.parent is None or node.parent not in keep else node.parent
        share = 1.0 if node.parent is None else node.share
        accounts.append(
            AccountSpec(slurm_name(node.name), slurm_name(parent), fairshare(share),
                        None if node.max_gpus is None else node.max_gpus + over)
        )
    leaves = {slurm_name(n.name) for n in config.leaves() if n.name in keep}
    qos = qos_tiers(tiers_s, backend_preempts=backend_preempts)
    qos_names = tuple(q.name for q in qos)
    dqos = default_tier(tiers_s, config.policy_for(cluster).default_min_runtime_s)
    users: list[UserSpec] = []
    for info in config.users.values():
        accts = tuple(sorted({slurm_name(a) for a in info.accounts} & leaves))
        if not accts:
            continue
        default = slurm_name(info.default_account)
        chosen = default if default in accts else accts[0]
        users.append(UserSpec(slurm_name(info.name, user=True), accts, chosen, qos_names, dqos))
    return PolicyState(slurm_name(config.root), tuple(sorted(accounts)), tuple(sorted(users)), qos)
