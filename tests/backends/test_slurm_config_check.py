"""Each rule of the start-up ``slurm.conf`` check (``backends/slurm/config_check.py``) on the
shape ``scontrol show config`` prints (Slurm 22.05; the real answer is read in
``tests/slurm/test_config_check_slurm.py``)."""

from __future__ import annotations

from allotment.backends.slurm.config_check import config_warnings, parse_show_config

SHOW = """Configuration data as of 2026-12-07T10:00:00
AccountingStorageBackupHost = (null)
AccountingStorageEnforce = {enforce}
JobRequeue              = {requeue}
JobSubmitPlugins        = {plugins}
SchedulerParameters     = {params}
SchedulerTimeSlice      = 30 sec
SchedulerType           = {sched}

Cgroup Support Configuration:
SchedulerType           = not/the/first
"""


def _warned(**kw: str) -> list[str]:
    fields = {
        "plugins": "lua", "params": "sched_interval=2,disable_job_shrink", "sched": "sched/builtin",
        "requeue": "1", "enforce": "associations,limits,qos",
    }
    fields.update(kw)
    return [w.split(" ", 2)[1] for w in config_warnings(parse_show_config(SHOW.format(**fields)))]


def test_the_config_the_guide_asks_for_has_no_warning() -> None:
    assert _warned() == []
    assert _warned(plugins="job_submit/lua,pbs") == []


def test_each_missing_setting_is_named() -> None:
    assert _warned(params="sched_interval=2,bf_interval=2") == ["SchedulerParameters"]
    assert _warned(params="(null)") == ["SchedulerParameters"]
    # a key=value item named like the flag is not the flag, and no substring counts
    assert _warned(params="disable_job_shrink_x,sched_interval=2") == ["SchedulerParameters"]
    assert _warned(sched="sched/backfill") == ["SchedulerType"]
    assert _warned(plugins="(null)") == ["JobSubmitPlugins"]
    assert _warned(requeue="0") == ["JobRequeue"]
    assert _warned(enforce="associations,limits") == ["AccountingStorageEnforce"]
    assert _warned(enforce="none") == ["AccountingStorageEnforce"]
    assert _warned(enforce="associations,limits,qos,safe") == []
    assert _warned(plugins="(null)", sched="sched/backfill", params="(null)", requeue="0", enforce="qos") == [
        "SchedulerParameters", "SchedulerType", "JobSubmitPlugins", "JobRequeue", "AccountingStorageEnforce"
    ]


def test_the_enforce_warning_names_what_is_missing() -> None:
    fields = {
        "plugins": "lua", "params": "disable_job_shrink", "sched": "sched/builtin", "requeue": "1",
        "enforce": "associations",
    }
    (warning,) = config_warnings(parse_show_config(SHOW.format(**fields)))
    assert "lacks limits,qos;" in warning


def test_an_empty_answer_warns_of_everything() -> None:
    assert len(config_warnings(parse_show_config(""))) == 5


def test_the_first_value_of_a_key_is_the_config_s() -> None:
    assert parse_show_config(SHOW.format(plugins="lua", params="", sched="sched/builtin", requeue="1", enforce=""))[
        "SchedulerType"
    ] == "sched/builtin"
