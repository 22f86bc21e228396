"""The bundled files' ``$schema`` modelines resolve in a separate config repository too.

They once pointed at ``../src/allotment/schemas/...``, which exists only in allotment's own
repository.  Now they point at ``schemas/<kind>.schema.json`` at the repository root: a config
repository commits the output of ``allot schema KIND`` there (docs/managers-guide.md), and
allotment's own ``schemas`` is a link to the package's copy, so there is one copy of each schema.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from allotment.config.kinds import kind_of
from allotment.config.schemas import schema_file_name
from tests.conftest import REPO_ROOT

MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")


def modelines() -> list[tuple[Path, str]]:
    out = []
    for top in ("budgets", "inventory", "policies"):
        for f in sorted((REPO_ROOT / top).rglob("*.yaml")):
            m = MODELINE.match(f.read_text(encoding="utf-8").splitlines()[0])
            if m:
                out.append((f, m.group(1)))
    return out


def test_every_modeline_points_at_the_root_schemas_folder_and_the_files_kind() -> None:
    found = modelines()
    assert len(found) >= 5
    for f, target in found:
        resolved = (f.parent / target).resolve()
        kind = kind_of(str(f.relative_to(REPO_ROOT)))
        assert kind is not None, f
        # what a config repository has after `allot schema KIND > schemas/<file>`
        assert Path(os.path.normpath(f.parent / target)).parent == REPO_ROOT / "schemas", f
        assert Path(target).name == schema_file_name(kind), f
        assert resolved.is_file(), f


def test_the_root_schemas_folder_is_the_packages_copy() -> None:
    link = REPO_ROOT / "schemas"
    assert link.is_symlink() and link.resolve() == (REPO_ROOT / "src/allotment/schemas").resolve()
