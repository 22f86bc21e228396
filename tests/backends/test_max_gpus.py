"""A budget node's ``max_gpus`` reaches the backend as an account limit (Slurm ``GrpTRES``):
the desired policy carries it, a changed or cleared cap is a drift with its reason, and the
sacctmgr commands set and clear it."""

from __future__ import annotations

from dataclasses import replace

from allotment.backends.diff import diff_policy
from allotment.backends.policy import desired_policy
from allotment.backends.slurm import commands as cmd
from allotment.compile.model import Policy
from tests.backends.configs import tree_config


def test_the_cap_is_in_the_desired_accounts() -> None:
    want = desired_policy(tree_config(max_gpus={"teamb": 12}), "gpulab")
    assert {a.name: a.max_gpus for a in want.accounts} == {
        "org": None,
        "proga": None,
        "teama1": None,
        "teama2": None,
        "teamb": 12,
    }


def test_a_changed_or_missing_cap_is_corrected() -> None:
    want = desired_policy(tree_config(max_gpus={"teamb": 12}), "gpulab")
    have = replace(
        want,
        accounts=tuple(
            replace(
                a, max_gpus=None if a.name == "teamb" else 8 if a.name == "teama1" else a.max_gpus
            )
            for a in want.accounts
        ),
    )
    plan = diff_policy(want, have, prune=False)
    mods = {a.target: a.reason for a in plan.actions if a.kind == "modify_account"}
    assert mods == {"teamb": "max_gpus none -> 12", "teama1": "max_gpus 8 -> none"}
    argv = {
        a.target: cmd.modify_account(a.target, max_gpus=(cmd.account_from_action(a).max_gpus,))
        for a in plan.actions
        if a.kind == "modify_account"
    }
    assert argv["teamb"][-1] == "GrpTRES=gres/gpu=12"
    assert argv["teama1"][-1] == "GrpTRES=gres/gpu=-1"  # sacctmgr's way to clear a limit
    assert diff_policy(want, want, prune=False).actions == ()


def test_debug_overdraft_widens_the_association_limit_only_where_the_core_decides() -> None:
    # with debug_over_cap the core starts a capped team's short debug jobs beyond max_gpus
    # (core.debug_overdraft): in active mode (the backend preempts nothing) the association
    # must allow max_gpus + the overdraft, or Slurm holds what the core started; without the
    # core, Slurm alone decides and the cap stays max_gpus
    config = tree_config(max_gpus={"teamb": 12}, policy=Policy(debug_over_cap=8))
    active = desired_policy(config, "gpulab", backend_preempts=False)
    alone = desired_policy(config, "gpulab")
    assert {a.name: a.max_gpus for a in active.accounts}["teamb"] == 20
    assert {a.name: a.max_gpus for a in alone.accounts}["teamb"] == 12
