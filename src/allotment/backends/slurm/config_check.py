"""What the reconciler needs of ``slurm.conf`` in active mode, checked once at start-up.

The reconciler steers Slurm through ``scontrol update`` and can only warn about the controller's
config, not change it: a platform team reads the warnings in the reconciler's log at start, not
after a shrunken job or a job Slurm started on its own.  Each rule here is one
docs/operators-guide.md asks for (step 6, "pin starts"), with the reason the guide gives:

* ``SchedulerParameters`` holds ``disable_job_shrink``: a start's ``ReqNodeList`` that reaches a
  job Slurm launched a moment before is otherwise a request to shrink it (docs/fidelity.md, the
  eleventh pass);
* ``SchedulerType=sched/builtin``: backfill starts held-back jobs on its own;
* ``JobSubmitPlugins`` holds ``lua`` (the package's ``job_submit.lua``): without it Slurm starts
  a new job the moment it fits, on nodes of its choosing;
* ``JobRequeue=1`` ("Slurm configuration it expects"): a job is resumable unless submitted with
  ``--no-requeue``; with 0 every job is non-resumable (``parse.py`` reads its ``Requeue`` flag),
  so every preemption follows the policy's ``non_resumable`` rule (requeue from the start, cancel,
  or run to completion) even for jobs that checkpoint;
* ``AccountingStorageEnforce`` holds ``associations``, ``limits`` and ``qos``: without them a job
  may run under an account the budget tree does not hold, beyond its team's ``max_gpus`` (the
  association limit the reconciler writes), or under a QOS tier its user is not given.

A warning, not a refusal: a cluster without the plugin still works (the guide says how), and the
policy-only mode (``--policy-only``) needs none of them.
"""

from __future__ import annotations

SHOW_CONFIG_ARGV = ["scontrol", "show", "config"]
ENFORCE = ("associations", "limits", "qos")  # AccountingStorageEnforce's flags the guide asks for


def parse_show_config(text: str) -> dict[str, str]:
    """``Key = Value`` lines of ``scontrol show config`` (the header and blank lines skipped)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq and key.strip() and " " not in key.strip():
            out.setdefault(key.strip(), value.strip())
    return out


def _items(value: str) -> set[str]:
    """A comma list's items, ``key=value`` ones by their key (``sched_interval=2`` -> ``sched_interval``)."""
    return {item.split("=", 1)[0].strip() for item in value.split(",") if item.strip()}


def config_warnings(config: dict[str, str]) -> tuple[str, ...]:
    """One sentence per rule the config breaks (docs/operators-guide.md), in a fixed order."""
    out = []
    if "disable_job_shrink" not in _items(config.get("SchedulerParameters", "")):
        out.append(
            "slurm.conf: SchedulerParameters lacks disable_job_shrink; a start's ReqNodeList "
            "reaching a job Slurm has just launched would shrink it or leave a RESIZING record "
            "(docs/operators-guide.md)"
        )
    scheduler = config.get("SchedulerType", "")
    if scheduler != "sched/builtin":
        out.append(
            f"slurm.conf: SchedulerType is {scheduler or 'unset'}, not sched/builtin; backfill "
            "starts held-back jobs on its own (docs/operators-guide.md)"
        )
    if "lua" not in _items(config.get("JobSubmitPlugins", "").replace("job_submit/", "")):
        out.append(
            "slurm.conf: JobSubmitPlugins lacks lua (the package's job_submit.lua); Slurm may "
            "start a new job the moment it fits, on nodes of its choosing (docs/operators-guide.md)"
        )
    requeue = config.get("JobRequeue", "")
    if requeue != "1":
        out.append(
            f"slurm.conf: JobRequeue is {requeue or 'unset'}, not 1; every job submitted without "
            "--requeue is non-resumable, so every preemption follows the policy's non_resumable rule "
            "(requeue from the start, cancel, or run to completion) (docs/operators-guide.md)"
        )
    enforced = _items(config.get("AccountingStorageEnforce", "").lower())
    missing = [flag for flag in ENFORCE if flag not in enforced]
    if missing:
        out.append(
            f"slurm.conf: AccountingStorageEnforce lacks {','.join(missing)}; Slurm would run jobs "
            "under accounts the budget tree does not hold, beyond a team's max_gpus, or under QOS "
            "tiers their users are not given (docs/operators-guide.md)"
        )
    return tuple(out)
