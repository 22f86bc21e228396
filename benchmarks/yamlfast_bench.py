"""Does ``config/yamlfast.py`` still earn its keep?  Time the loader's two fast paths on every
budget file of the bundled example, repeated to a 10,000-file tree's worth.

Usage: python benchmarks/yamlfast_bench.py [--repo .] [--files 10000] [--repeat 5]

Prints the median time to parse ``--files`` files with ``yamlfast.fast_parse`` and with the
libyaml path the loader falls back to (``yamlsafe._fast_load``), and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from allotment.config.yamlfast import fast_parse
from allotment.config.yamlsafe import _fast_load


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, default=Path("."))
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    texts = [p.read_text(encoding="utf-8") for p in sorted((args.repo / "budgets").rglob("*.yaml"))]
    batch = (texts * (args.files // len(texts) + 1))[: args.files]
    assert all(fast_parse(t) == _fast_load(t) for t in texts)
    for name, fn in (("yamlfast.fast_parse", fast_parse), ("libyaml (_fast_load)", _fast_load)):
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            for text in batch:
                fn(text)
            times.append(time.perf_counter() - t)
        print(f"{name:<22} {args.files:,} files: median {statistics.median(times) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
