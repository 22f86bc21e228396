"""Fill rules: what a trace does not say is filled by a documented, configurable rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.errors import ConfigError, UsageError
from allotment.traces.fill_rules import FillRules, load_fill_rules, rules_for
from allotment.traces.importers import RawJob


def job(**kw: object) -> RawJob:
    base: dict[str, object] = {"submit": 0.0, "id": "j", "account": "a", "gpus": 4, "work": 7200.0}
    base.update(kw)
    return RawJob(**base)  # type: ignore[arg-type]


def test_defaults_leave_min_runtime_to_the_policy_and_classify_kind() -> None:
    r = FillRules()
    f = r.apply(job())
    assert (f.min_runtime, f.resumable, f.checkpoint_interval, f.kind) == (
        None,
        True,
        1800.0,
        "batch",
    )
    assert r.apply(job(work=600.0, gpus=8)).kind == "debug"
    assert r.apply(job(gpus=64)).kind == "train"


def test_source_values_win_over_rules() -> None:
    r = FillRules().with_overrides(["min_runtime=2h", "resumable=false", "kind=train"])
    f = r.apply(job(min_runtime=0.0, resumable=True, kind="interactive"))
    assert (f.min_runtime, f.resumable, f.kind) == (0.0, True, "interactive")


def test_cli_overrides_change_defaults() -> None:
    r = FillRules().with_overrides(["min_runtime=30m", "checkpoint_interval=none", "kind=batch"])
    f = r.apply(job(work=60.0))
    assert (f.min_runtime, f.checkpoint_interval, f.kind) == (1800.0, None, "batch")
    assert FillRules().with_overrides(["min_runtime=work"]).apply(job()).min_runtime == 7200.0


@pytest.mark.parametrize(
    "pair, message",
    [
        ("min_runtime", "expects KEY=VALUE"),
        ("colour=red", "unknown field 'colour'"),
        ("min_runtime=soon", "malformed duration"),
        ("resumable=maybe", "expected true or false"),
        ("kind=fun", "expected auto or one of"),
        ("checkpoint_interval=0", "must be positive"),
    ],
)
def test_bad_fill_is_a_usage_error(pair: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        FillRules().with_overrides([pair])


def test_alibaba_rules_make_best_effort_unallocated() -> None:
    r = rules_for("alibaba-gpu")
    assert r.apply(job(klass="BE")).min_runtime == 0
    assert r.apply(job(klass="LS")).kind == "inference"
    g = r.apply(job(klass="Guaranteed"))
    assert (g.min_runtime, g.resumable) == (7200.0, False)


def test_rules_file_first_match_wins(tmp_path: Path) -> None:
    p = tmp_path / "rules.yaml"
    p.write_text(
        "defaults:\n  min_runtime: 1h\n  kind: batch\n"
        "auto_kind:\n  debug_max_work: 5m\n"
        "rules:\n"
        "  - match: {account: a, max_gpus: 2}\n    min_runtime: 0\n"
        "  - match: {account: a}\n    min_runtime: 4h\n    resumable: false\n"
        "  - match: {kind: batch}\n    checkpoint_interval: none\n"
    )
    r = load_fill_rules(p)
    assert r.apply(job(gpus=1)).min_runtime == 0
    f = r.apply(job(gpus=8))
    assert (f.min_runtime, f.resumable, f.checkpoint_interval) == (14400.0, False, None)
    other = r.apply(job(account="b"))
    assert (other.min_runtime, other.kind, other.checkpoint_interval) == (3600.0, "batch", None)
    assert r.debug_max_work == 300


def test_rules_file_errors_point_at_the_value(tmp_path: Path) -> None:
    p = tmp_path / "rules.yaml"
    p.write_text("defaults:\n  min_runtime: soon\nrules:\n  - match: {colour: red}\n")
    with pytest.raises(ConfigError) as info:
        load_fill_rules(p)
    got = [(d.line, d.col) for d in info.value.diagnostics]
    assert (4, 13) in got  # the unknown match key
    p.write_text("defaults:\n  min_runtime: soon\n")
    with pytest.raises(ConfigError) as info2:
        load_fill_rules(p)
    [d] = info2.value.diagnostics
    assert (d.line, d.col) == (2, 16) and "malformed duration" in d.message


def test_rules_match_the_normalized_account_names(tmp_path: Path) -> None:
    from allotment.traces.canonical import read_trace
    from allotment.traces.importers import CsvImporter, parse_map
    from allotment.traces.pipeline import import_trace

    src = tmp_path / "jobs.csv"
    src.write_text("t,w,g,a\n0,100,1,Team A\n1,100,1,other\n")
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules:\n  - match: {account: team-a}\n    min_runtime: 0\n")
    import_trace(
        CsvImporter(mapping=parse_map("submit=t,work=w,gpus=g,account=a")),
        src,
        tmp_path / "o.jsonl",
        fill=load_fill_rules(rules),
    )
    jobs = read_trace(tmp_path / "o.jsonl").jobs
    assert [(j.account, j.min_runtime) for j in jobs] == [("team-a", 0), ("other", None)]


def test_a_fill_value_beyond_the_trace_bounds_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"min_runtime 3.456e\+07 s is beyond the trace bound"):
        FillRules().with_overrides(["min_runtime=400d"])
    with pytest.raises(UsageError, match=r"checkpoint_interval .* is beyond the trace bound"):
        FillRules().with_overrides(["checkpoint_interval=1000d"])
