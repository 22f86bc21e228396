"""Build hook: compile the scheduling core's and the simulator's hot modules with mypyc.

Why mypyc: the simulator replays tens of thousands of jobs through hundreds of thousands of
scheduling passes; compiled, the same typed source runs about twice as fast (docs/benchmarks.md),
with no second implementation to keep in step.  ``ALLOTMENT_COMPILE=0`` installs pure Python, and
so does a build inside pre-commit's cache: its hooks only validate YAML, and compiling the core
for that took about three minutes (docs/managers-guide.md, "Pre-commit hooks").
The list of modules lives in ``src/allotment/_compiled.py`` (read here without importing the
package, whose dependencies are not installed yet)."""

import os
import runpy
import sys
from pathlib import Path

from setuptools import setup


def _in_pre_commit_store() -> bool:
    """pre-commit clones a hook repository into its store and runs ``pip install .`` there."""
    store = os.environ.get("PRE_COMMIT_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pre-commit"
    )
    return Path(__file__).resolve().is_relative_to(Path(store).resolve())


def _metadata_only(argv: list[str]) -> bool:
    """A build frontend runs this file once per step: ``egg_info`` and ``dist_info`` (metadata),
    ``sdist``, then ``bdist_wheel``.  Only a step that builds extensions needs mypyc's pass (a
    whole-core type check and C generation, each time): ``python -m build`` ran it four times."""
    commands = [a for a in argv[1:] if not a.startswith("-")]
    return bool(commands) and commands[0] in ("egg_info", "dist_info", "sdist")


ext_modules = []
if (
    os.environ.get("ALLOTMENT_COMPILE", "1") != "0"
    and not _in_pre_commit_store()
    and not _metadata_only(sys.argv)
):
    from mypyc.build import mypycify

    compiled = runpy.run_path("src/allotment/_compiled.py")
    hot = compiled["HOT"]
    # what is compiled, by content: the package's staleness check compares hashes, not mtimes
    # (an install writes the .py files after the extensions)
    compiled["write_record"](Path("src"))
    files = ["src/" + name.replace(".", "/") + ".py" for name in hot]
    # --config-file= : build with mypy's defaults, not the project's lint config (its plugins)
    ext_modules = mypycify(["--config-file=", *files], opt_level="3")

setup(ext_modules=ext_modules)
