"""Every place that pins allotment pins the version in pyproject.toml (issue 26, item 5).

The example workflow, the managers' guide and ``.pre-commit-hooks.yaml`` once pinned 0.2.0 while
the package was 0.1.0 and no tag existed: a config repository that copied them failed at its
install step.  The release workflow refuses a tag that is not ``v`` + this version.
"""

from __future__ import annotations

import re
import tomllib

import allotment
from tests.conftest import REPO_ROOT

VERSION = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
PINS = (
    re.compile(r"allotment[\w./-]*@v?(\d+\.\d+\.\d+\S*)"),  # uses: ORG/allotment/...@vX, git+...@vX
    re.compile(r"\brev:\s*[\"']?v?(\d+\.\d+\.\d+[^\s\"']*)"),  # pre-commit
    re.compile(r"allot-version:\s*[\"']?(\d+\.\d+\.\d+[^\s\"']*)"),
    re.compile(r"allotment==(\d+\.\d+\.\d+\S*)"),
)


def _pinned_files() -> list[str]:
    files = ["README.md", ".pre-commit-hooks.yaml"]
    files += [str(p.relative_to(REPO_ROOT)) for p in sorted((REPO_ROOT / "docs").rglob("*.md"))]
    for folder in (".github/config-repo-example", ".github/actions", ".github/workflows"):
        files += [str(p.relative_to(REPO_ROOT)) for p in sorted((REPO_ROOT / folder).rglob("*.yml"))]
    return files


def pins() -> list[tuple[str, int, str]]:
    out = []
    for name in _pinned_files():
        for n, line in enumerate((REPO_ROOT / name).read_text(encoding="utf-8").splitlines(), 1):
            for pattern in PINS:
                out += [(name, n, m.group(1)) for m in pattern.finditer(line)]
    return out


def test_the_package_says_its_own_version() -> None:
    assert allotment.__version__ == VERSION


def test_every_pin_in_docs_workflows_and_hooks_is_pyprojects_version() -> None:
    found = pins()
    where = {name for name, _, _ in found}
    # the places a config repository copies from are all covered
    assert {".pre-commit-hooks.yaml", "docs/managers-guide.md",
            ".github/config-repo-example/budget-plan.yml",
            ".github/config-repo-example/budget-plan-comment.yml"} <= where
    wrong = [f"{name}:{n}: {v}" for name, n, v in found if v.rstrip(".,;`\"')") != VERSION]
    assert not wrong, f"pins that are not {VERSION} (pyproject.toml): {wrong}"
