"""Parsers of Slurm 22.05 output, on text captured from the test cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from allotment.backends import slurm as slurm_pkg
from allotment.backends.actions import ClusterAction
from allotment.backends.slurm.commands import cluster_command, slurm_time
from allotment.backends.slurm.parse import (
    HOLD_MARK,
    HOLD_S,
    exempt_seconds,
    exempt_text,
    gpus_in,
    parse_assoc,
    parse_qos,
    parse_sinfo_json,
    parse_squeue_json,
)
from allotment.errors import BackendError

QOS = """normal|0||cluster||1.000000
unallocated|0||requeue||0.000000
alloc-20s|100|unallocated|requeue|00:00:20|1.000000
alloc-8h|103|unallocated|requeue|08:00:00|1.000000
"""
ASSOC = """root|||1|normal||
root||root|1|normal|normal|
org|root||10000|normal||
teama1|org||6667|normal||gres/gpu=16
teama1||root|1|alloc-20s,unallocated|alloc-20s|
teamb|org||parent|normal||cpu=4
teamb||root|1|alloc-20s,unallocated|alloc-20s|
"""
USERS = "root|teama1\n"


def test_qos_lines_become_specs() -> None:
    q = {x.name: x for x in parse_qos(QOS)}
    assert q["unallocated"].usage_factor == 0.0 and q["unallocated"].preempt_exempt_s == 0
    assert q["alloc-8h"].preempt_exempt_s == 8 * 3600 and q["alloc-8h"].preempt == ("unallocated",)
    assert q["normal"].preempt_mode == "cluster"


def test_associations_give_accounts_and_users_ignoring_slurms_root_account_qos() -> None:
    accounts, users = parse_assoc(ASSOC, USERS)
    assert [(a.name, a.parent, a.fairshare) for a in accounts] == [
        ("org", "root", 10000),
        ("root", "", 1),
        ("teama1", "org", 6667),
        ("teamb", "org", 0),  # "parent" is not a number: shows as a difference
    ]
    caps = {a.name: a.max_gpus for a in accounts}
    assert caps == {"org": None, "root": None, "teama1": 16, "teamb": None}  # GrpTRES
    (root,) = users
    assert root.accounts == ("root", "teama1", "teamb")
    assert root.qos == ("alloc-20s", "unallocated") and root.default_qos == "alloc-20s"
    assert root.default_account == "teama1"


def test_a_short_line_is_a_backend_error_not_a_crash() -> None:
    with pytest.raises(BackendError, match="unexpected QOS line"):
        parse_qos("normal|0\n")


@pytest.mark.parametrize(
    ("text", "gpus"),
    [
        ("gpu:8", 8),
        ("gpu:h100:3(IDX:0-2)", 3),
        ("gres:gpu:4", 4),
        ("cpu=1,node=1,billing=3,gres/gpu=3", 3),
        ("", 0),
        ("gpu:a:2(IDX:0-1),gpu:b:1(IDX:0)", 3),
    ],
)
def test_gpu_counts_in_every_spelling(text: str, gpus: int) -> None:
    assert gpus_in(text) == gpus


@given(st.integers(min_value=0, max_value=30 * 86400))
def test_exempt_time_round_trips(seconds: int) -> None:
    assert exempt_seconds(exempt_text(seconds)) == seconds


def test_squeue_json_jobs() -> None:
    doc = {
        "errors": [],
        "jobs": [
            {
                "job_id": 10,
                "user_name": "root",
                "account": "TeamA1",
                "qos": "alloc-20s",
                "job_state": "RUNNING",
                "start_time": 100,
                "submit_time": 90,
                "priority": 7,
                "nodes": "n[1-2]",
                "requeue": True,
                "eligible_time": 90,
                "tres_alloc_str": "cpu=2,gres/gpu=16",
                "tres_per_node": "gres:gpu:8",
            },
            {
                "job_id": 9,
                "user_name": "root",
                "account": "teamb",
                "qos": "unallocated",
                "job_state": "PENDING",
                "start_time": 0,
                "submit_time": 95,
                "priority": 3,
                "nodes": "",
                "requeue": False,
                "eligible_time": 111,
                "tres_per_node": "gres:gpu:2",
            },
            {"job_id": 8, "job_state": "COMPLETED"},
        ],
    }
    jobs = parse_squeue_json(json.dumps(doc), {"alloc-20s": 20})
    assert [j.id for j in jobs] == ["9", "10"]
    run = jobs[1]
    assert (run.account, run.gpus, run.nodes, run.min_runtime_s, run.start) == (
        "teama1",
        16,
        ("n1", "n2"),
        20,
        100.0,
    )
    pend = jobs[0]
    assert (pend.state, pend.gpus, pend.min_runtime_s, pend.resumable, pend.eligible) == (
        "pending",
        2,
        0,
        False,
        111.0,
    )


def test_sinfo_json_nodes() -> None:
    doc = {
        "errors": [],
        "nodes": [
            {
                "name": "n2",
                "state": "mixed",
                "state_flags": ["DRAIN"],
                "gres": "gpu:8",
                "gres_used": "gpu:8",
                "reason": "allotment: x",
            },
            {
                "name": "n1",
                "state": "down",
                "state_flags": ["NOT_RESPONDING"],
                "gres": "gpu:8",
                "gres_used": "gpu:0",
                "reason": "",
            },
        ],
    }
    n1, n2 = parse_sinfo_json(json.dumps(doc))
    assert (n1.name, n1.down, n1.drain) == ("n1", True, False)
    assert (n2.gpus, n2.gpus_used, n2.drain, n2.reason) == (8, 8, True, "allotment: x")


def test_slurm_errors_in_json_become_backend_errors() -> None:
    with pytest.raises(BackendError, match="reported errors"):
        parse_squeue_json(
            json.dumps({"errors": [{"error": "Unable to contact slurm controller"}], "jobs": []}),
            {},
        )
    with pytest.raises(BackendError, match="not JSON"):
        parse_sinfo_json("squeue: error: ...")


def _held(restarts: int, eligible: int = 95 + HOLD_S) -> str:
    job = {
        "job_id": 5,
        "account": "teama1",
        "qos": "alloc-20s",
        "job_state": "PENDING",
        "submit_time": 95,
        "priority": 1,
        "eligible_time": eligible,
        "admin_comment": HOLD_MARK,
        "restart_cnt": restarts,
        "tres_per_node": "gres:gpu:2",
    }
    return json.dumps({"errors": [], "jobs": [job]})


def test_a_new_job_held_for_the_reconciler_is_startable_and_ages_from_submission() -> None:
    (j,) = parse_squeue_json(_held(0), {})
    assert j.eligible is None


def test_a_requeued_job_held_again_is_eligible_when_its_requeue_delay_ends() -> None:
    (j,) = parse_squeue_json(_held(1, eligible=140 + HOLD_S), {})
    assert j.eligible == 140


def test_a_marked_requeued_job_not_held_keeps_slurms_eligible_time() -> None:
    (j,) = parse_squeue_json(_held(1, eligible=140), {})
    assert j.eligible == 140


def test_job_submit_lua_marks_held_jobs_the_way_the_parser_reads_them() -> None:
    lua = Path(slurm_pkg.__file__).with_name("job_submit.lua").read_text(encoding="utf-8")
    assert f'local HOLD_MARK = "{HOLD_MARK}"' in lua
    assert "local HOLD_S = 10 * 365 * 86400" in lua and HOLD_S == 10 * 365 * 86400


def test_set_priority_pins_releases_and_unpins_in_one_scontrol_update() -> None:
    start = ClusterAction(
        "set_priority", "7", "start", "", value=5, nodes=("n1", "n2"), release=True
    )
    assert cluster_command(start) == [
        "scontrol",
        "update",
        "JobId=7",
        "Priority=5",
        "StartTime=now",
        "ReqNodeList=n1,n2",
    ]
    unpin = ClusterAction("set_priority", "7", "order", "", value=4, nodes=())
    assert cluster_command(unpin) == ["scontrol", "update", "JobId=7", "Priority=4", "ReqNodeList="]
    hold = ClusterAction("set_priority", "7", "order", "", value=4, nodes=(), hold_eligible=140.0)
    assert cluster_command(hold) == [
        "scontrol",
        "update",
        "JobId=7",
        "Priority=4",
        f"StartTime={slurm_time(140.0 + HOLD_S)}",
        f"AdminComment={HOLD_MARK}",
        "ReqNodeList=",
    ]
    plain = ClusterAction("set_priority", "7", "order", "", value=3)
    assert cluster_command(plain) == ["scontrol", "update", "JobId=7", "Priority=3"]


def test_a_cancel_writes_its_rule_and_reason_on_the_job_before_scancel() -> None:
    from allotment.backends.slurm.commands import CANCEL_MARK, cluster_commands

    refused = ClusterAction("cancel", "9", "refused", "minimum runtime 0 is disabled")
    assert cluster_commands(refused) == [
        ["scontrol", "update", "JobId=9", f"AdminComment={CANCEL_MARK} (refused): minimum runtime 0 is disabled"],
        ["scancel", "9"],
    ]
    plain = ClusterAction("requeue", "9", "reclaim", "")
    assert cluster_commands(plain) == [cluster_command(plain)]


def _pending(**fields: object) -> dict[str, object]:
    return {"job_id": 5, "user_name": "root", "account": "teama1", "qos": "alloc-20s", "job_state": "PENDING",
            "submit_time": 90, "priority": 7, "eligible_time": 90, "tres_per_node": "gres:gpu:1", **fields}


def test_declared_priority_and_deadline_are_the_users_not_slurms_computed_priority() -> None:
    """Issue 28, item 3: the within-team order reads what the user declared (the ``allot.priority``
    comment key, else minus ``--nice``; ``--deadline``), never Slurm's computed ``priority``."""
    cases = [
        (_pending(), 0, None),
        (_pending(nice=-5, deadline=5000), 5, 5000.0),
        (_pending(nice=100, comment="run 3, allot.priority=9"), 9, None),
        (_pending(nice=3, comment="allot.priority=high"), -3, None),
        (_pending(comment="allot.priority=99999999999"), 2**31 - 1, None),
        (_pending(deadline={"set": True, "infinite": False, "number": 7000}), 0, 7000.0),
        (_pending(deadline={"set": False, "infinite": False, "number": 0}), 0, None),
    ]
    for job, declared, deadline in cases:
        [obs] = parse_squeue_json(json.dumps({"errors": [], "jobs": [job]}), {"alloc-20s": 20})
        assert (obs.priority, obs.declared_priority, obs.deadline) == (7, declared, deadline), job


def test_the_jobs_a_job_waits_for_are_read_from_squeues_dependency_field() -> None:
    """Issue 28, item 3: ``--dependency`` reaches the core (``JobObs.depends_on``): every job an
    ``after*`` dependency names, once, array and hetjob suffixes dropped; a dependency that can
    no longer be met, ``singleton`` and an empty field name none."""
    cases = [
        (_pending(), ()),
        (_pending(dependency="(null)"), ()),
        (_pending(dependency="afterok:12(unfulfilled)"), ("12",)),
        (_pending(dependency="afterok:12:13(unfulfilled),afterany:14_*(unfulfilled),afterok:12(unfulfilled)"),
         ("12", "13", "14")),
        (_pending(dependency="afterany:7?afternotok:8+1(unfulfilled)"), ("7", "8")),
        (_pending(dependency="afterok:5(failed),aftercorr:6(unfulfilled)"), ("6",)),
        (_pending(dependency="singleton(unfulfilled)"), ()),
    ]
    for job, waits in cases:
        [obs] = parse_squeue_json(json.dumps({"errors": [], "jobs": [job]}), {"alloc-20s": 20})
        assert obs.depends_on == waits, job
