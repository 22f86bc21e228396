"""Saved runs (the bundled ai2 scenario on the 88-GPU b200 cluster, 2 days, budgets and the
priority baseline) and a live reconciler state dir, made once per session."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from allotment.compile.compiler import compile_repo
from allotment.compile.model import CompiledConfig
from tests.conftest import REPO_ROOT
from tests.legible.livestate_fixture import make_state_dir
from tests.legible.rundir_fixture import make_run_dir

AT = dt.date(2026, 12, 1)


@pytest.fixture(scope="session")
def config() -> CompiledConfig:
    return compile_repo(REPO_ROOT, AT)


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory: pytest.TempPathFactory, config: CompiledConfig) -> Path:
    return make_run_dir(tmp_path_factory.mktemp("run") / "budgets", config)


@pytest.fixture(scope="session")
def base_dir(tmp_path_factory: pytest.TempPathFactory, config: CompiledConfig) -> Path:
    return make_run_dir(tmp_path_factory.mktemp("run") / "priority", config, policy="priority")


@pytest.fixture(scope="session")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_state_dir(tmp_path_factory.mktemp("live"))
