"""Build hook: compile the scheduling core's and the simulator's hot modules with mypyc.

Why mypyc: the simulator replays tens of thousands of jobs through hundreds of thousands of
scheduling passes; compiled, the same typed source runs about twice as fast (docs/benchmarks.md),
with no second implementation to keep in step.  ``ALLOTMENT_COMPILE=0`` installs pure Python.
The list of modules lives in ``src/allotment/_compiled.py`` (read here without importing the
package, whose dependencies are not installed yet)."""

import os
import runpy

from setuptools import setup

ext_modules = []
if os.environ.get("ALLOTMENT_COMPILE", "1") != "0":
    from mypyc.build import mypycify

    hot = runpy.run_path("src/allotment/_compiled.py")["HOT"]
    files = ["src/" + name.replace(".", "/") + ".py" for name in hot]
    # --config-file= : build with mypy's defaults, not the project's lint config (its plugins)
    ext_modules = mypycify(["--config-file=", *files], opt_level="3")

setup(ext_modules=ext_modules)
