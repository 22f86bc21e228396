"""The release's wheel and sdist, built as ``.github/workflows/release.yml`` builds them, installed
into fresh venvs in a temporary folder outside the checkout (issue 26, item 5).

A config repository installs allotment from the release (the wheel, or the tool repository at the
tag) and never sees this checkout: so the wheel must carry the compiled core and run it, a pure
wheel must say it is pure, and pre-commit's hook install must validate without compiling.  Every
install runs the plan action's own install step, so the action's log line is tested with it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from allotment import _compiled
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.wheel

VERSION = __import__("tomllib").loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
BIN = Path(sys.executable).parent
EXAMPLE = ("budgets", "inventory", "policies")  # the bundled example, as a config repo holds it
INSTALL_STEP = next(
    s["run"]
    for s in yaml.safe_load((REPO_ROOT / ".github/actions/plan/action.yml").read_text())["runs"]["steps"]
    if s.get("id") == "install"
)


def env(**extra: str) -> dict[str, str]:
    """This machine's environment without this test run's venv or package path."""
    e = {k: v for k, v in os.environ.items()
         if k not in ("VIRTUAL_ENV", "PYTHONPATH", "ALLOTMENT_PURE", "PRE_COMMIT_HOME")}
    return {**e, **extra}


def run(args: list[str], cwd: Path | None = None, **extra: str) -> str:
    out = subprocess.run(args, cwd=cwd, env=env(**extra), capture_output=True, text=True)
    assert out.returncode == 0, f"{args}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def copy_checkout(dst: Path) -> Path:
    """The files git would clone (tracked, and new ones not ignored): no .venv, build or .so."""
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=REPO_ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO_ROOT / rel
        if src.is_symlink() or src.is_file():  # a deleted file is listed until committed
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel, follow_symlinks=False)
    return dst


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build --outdir dist .`` and ``twine check --strict dist/*``, as release.yml."""
    tmp = tmp_path_factory.mktemp("release")
    tree = copy_checkout(tmp / "checkout")
    run([sys.executable, "-m", "build", "--outdir", str(tmp / "dist"), "."], cwd=tree)
    run([sys.executable, "-m", "twine", "check", "--strict", *map(str, (tmp / "dist").iterdir())])
    return tmp / "dist"


def action_install(venv: Path, package: Path) -> str:
    """The plan action's install step, with ``allot-package`` = ``package``, into a fresh venv."""
    run([sys.executable, "-m", "venv", str(venv)])
    return run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", INSTALL_STEP],
               ALLOT_PACKAGE=str(package), ALLOT_VERSION="", PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")


def example_repo(dst: Path) -> Path:
    for part in EXAMPLE:
        shutil.copytree(REPO_ROOT / part, dst / part)
    return dst


def test_the_wheel_ships_every_compiled_module_and_the_sdist_its_build(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    assert wheel.name.startswith(f"allotment-{VERSION}-cp3") and "none-any" not in wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    for module in _compiled.HOT:
        stem = module.replace(".", "/")
        assert any(n.startswith(stem + ".cpython-") and n.endswith(".so") for n in names), module
    assert any("__mypyc" in n and n.endswith(".so") for n in names)  # mypyc's shared runtime
    assert "allotment/_compiled_sources.json" in names  # what the staleness check compares
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    for needed in ("setup.py", "pyproject.toml", "src/allotment/_compiled.py"):
        assert f"allotment-{VERSION}/{needed}" in members


def test_a_clean_venv_installs_the_wheel_and_runs_the_compiled_core(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    venv = tmp_path / "clean"
    log = action_install(venv, wheel)
    assert f"allot {VERSION} (compiled with mypyc)" in log.splitlines() and "::warning::" not in log
    cfg = example_repo(tmp_path / "config")
    assert run([str(venv / "bin/allot"), "validate"], cwd=cfg).startswith("ok: ")
    out = run([str(venv / "bin/allot"), "simulate", "--scenario", "ai2", "--days", "2", "--seed", "1"], cwd=cfg)
    assert "(simulated in" in out
    where = run([str(venv / "bin/python"), "-c",
                 "import allotment.core.scheduler as s, allotment.sim.runner as r; print(s.__file__, r.__file__)"],
                cwd=tmp_path)
    assert where.split() and all(f.startswith(str(venv)) and f.endswith(".so") for f in where.split())


def test_a_pure_wheel_says_so_once(dist: Path, tmp_path: Path) -> None:
    """Built from the sdist without a compiler's work (``ALLOTMENT_COMPILE=0``): it installs and
    validates, ``allot --version`` gives the reason, and the action's log warns once."""
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path, filter="data")
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "pure"), "."],
        cwd=tmp_path / f"allotment-{VERSION}", ALLOTMENT_COMPILE="0")
    (wheel,) = (tmp_path / "pure").glob("*.whl")
    assert wheel.name == f"allotment-{VERSION}-py3-none-any.whl"
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".so")]
    venv = tmp_path / "venv"
    log = action_install(venv, wheel)
    assert f"allot {VERSION} (pure Python (not compiled))" in log.splitlines()
    assert log.count("::warning::") == 1 and "2x slower" in log
    cfg = example_repo(tmp_path / "config")
    assert run([str(venv / "bin/allot"), "validate"], cwd=cfg).startswith("ok: ")


def test_the_pre_commit_hook_installs_without_compiling(tmp_path: Path) -> None:
    """The real pre-commit, with its own store, installs this repository at a commit for the
    ``allot-validate`` hook: the hook runs, and its environment holds no compiled module."""
    hooks = copy_checkout(tmp_path / "allotment")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"]
    run([*git, "init", "-q"], cwd=hooks)
    run([*git, "add", "-A"], cwd=hooks)
    run([*git, "commit", "-q", "-m", "allotment"], cwd=hooks)
    rev = run(["git", "rev-parse", "HEAD"], cwd=hooks).strip()
    cfg = example_repo(tmp_path / "config")
    (cfg / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: allot-validate\n"
    )
    run([*git, "init", "-q"], cwd=cfg)
    run([*git, "add", "-A"], cwd=cfg)
    store = tmp_path / "store"
    out = run([str(BIN / "pre-commit"), "run", "--all-files"], cwd=cfg, PRE_COMMIT_HOME=str(store))
    assert "allot validate" in out and "Passed" in out
    (allot,) = store.glob("repo*/py_env-*/bin/allot")
    assert run([str(allot), "--version"]).strip() == f"allot {VERSION} (pure Python (not compiled))"
    site = allot.parent.parent / "lib"
    assert not [*site.glob("python*/site-packages/allotment/**/*.so"), *site.glob("python*/site-packages/*__mypyc*")]
