"""The alert rules and the Grafana dashboard in deploy/ parse, and name only metrics that
``allot serve``'s /metrics exports (scraped from a real reconciler's state dir); with promtool
(Debian's ``prometheus`` package) the rules and every dashboard query also pass Prometheus' own
parser and the alerts' unit tests."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from allotment.legible.serve import make_server
from tests.conftest import REPO_ROOT
from tests.legible.livestate_fixture import make_state_dir

RULES = REPO_ROOT / "deploy/prometheus/allotment-rules.yaml"
RULE_TESTS = REPO_ROOT / "deploy/prometheus/allotment-rules.test.yaml"
DASHBOARD = REPO_ROOT / "deploy/grafana/allotment-dashboard.json"
PROMETHEUS_OWN = {"up"}  # series Prometheus makes itself, not scraped
# Grafana's variables, as Grafana would put them in before the query reaches Prometheus
GRAFANA_VARS = {"$__rate_interval": "5m", "$cluster": ".*"}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Every sample name a scrape of /metrics returns (``_total``, ``_bucket``... included)."""
    srv = make_server(make_state_dir(tmp_path_factory.mktemp("live")), "127.0.0.1", 0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{srv.server_address[1]}/metrics", timeout=30) as r:
            text = r.read().decode()
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()
    text += _replica_metrics(tmp_path_factory.mktemp("replica"))
    return {s.name for f in text_string_to_metric_families(text) for s in f.samples}


def _replica_metrics(state: Path) -> str:
    """A replica's /metrics (``allot reconcile --leader-elect --probe-port``), leading."""
    from allotment.reconcile.file_lease import FileLease
    from allotment.reconcile.leadership import Leadership
    from allotment.reconcile.lease_metrics import exposition
    from allotment.reconcile.probes import Heartbeat, ProbeServer

    ld = Leadership(FileLease(state, 3600.0), "r1")
    assert ld.try_lead()
    srv = ProbeServer(("127.0.0.1", 0), Heartbeat(600.0), lambda: exposition(ld, time.time()))
    srv.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{srv.server_address[1]}/metrics", timeout=30) as r:
            return r.read().decode()
    finally:
        srv.shutdown()
        srv.server_close()
        ld.release()


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: identifiers outside strings, label
    matchers, ranges and grouping clauses that are not a function call or a keyword."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    words = set(re.findall(r"(?<![\w.])([a-zA-Z_:][\w:]*)\b(?!\s*\()", e))
    return words - {"and", "or", "unless", "bool", "offset", "inf", "nan"}


def _rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return [r for g in doc["groups"] for r in g["rules"]]


def _dashboard_exprs() -> list[str]:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs += [v["query"].removeprefix("label_values(").split(",")[0]
              for v in dash["templating"]["list"] if v["type"] == "query"]
    return exprs


def _substituted(expr: str) -> str:
    for k, v in GRAFANA_VARS.items():
        expr = expr.replace(k, v)
    return expr


def test_the_tokenizer_finds_metric_names_and_nothing_else() -> None:
    expr = ('histogram_quantile(0.9, sum by (le) (rate(allotment_x_bucket{cluster=~"a b"}[5m])))'
            ' or (time() - allotment_y) > 900 and up{job="allotment"} == 0')
    assert metric_names(expr) == {"allotment_x_bucket", "allotment_y", "up"}


def test_every_alert_is_complete_and_the_needed_ones_are_there() -> None:
    rules = _rules()
    names = {r["alert"] for r in rules}
    assert {"AllotmentReconcilerStalled", "AllotmentReconcilerStale", "AllotmentCapacityDrift",
            "AllotmentNoLeader"} <= names
    for r in rules:
        assert set(r) == {"alert", "expr", "for", "labels", "annotations"}, r["alert"]
        assert r["labels"]["severity"] in ("critical", "warning") and r["annotations"]["summary"]


def test_every_alert_and_panel_names_only_metrics_that_metrics_exports(exported: set[str]) -> None:
    exprs = [r["expr"] for r in _rules()] + _dashboard_exprs()
    named = set().union(*(metric_names(_substituted(e)) for e in exprs))
    assert named - PROMETHEUS_OWN <= exported, sorted(named - PROMETHEUS_OWN - exported)
    # and the checker is not vacuous: the drift gauge, the histogram and a counter are among them
    assert {"allotment_capacity_drift_gpus", "allotment_reconcile_duration_seconds_bucket",
            "allotment_preemptions_total", "allotment_leader"} <= named


def test_the_dashboard_is_well_formed() -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)) and dash["uid"] and dash["schemaVersion"] >= 36
    for p in dash["panels"]:
        assert set(p["gridPos"]) == {"h", "w", "x", "y"} and p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
        refs = [t["refId"] for t in p["targets"]]
        assert refs and len(refs) == len(set(refs)), p["title"]


PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian: apt-get install prometheus) is not installed")
def test_promtool_parses_the_rules_and_their_unit_tests_pass() -> None:
    assert PROMTOOL is not None
    for argv in ([PROMTOOL, "check", "rules", str(RULES)], [PROMTOOL, "test", "rules", str(RULE_TESTS)]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian: apt-get install prometheus) is not installed")
def test_promtool_parses_every_dashboard_query(tmp_path: Path) -> None:
    assert PROMTOOL is not None
    rules = [{"record": f"dashboard:query{i}", "expr": _substituted(e)} for i, e in enumerate(_dashboard_exprs())]
    path = tmp_path / "dashboard-queries.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}), encoding="utf-8")
    done = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
