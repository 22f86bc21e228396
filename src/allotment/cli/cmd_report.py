"""``allot report --run DIR [--baseline DIR] -o FILE.html``: one self-contained HTML file with
Ai2's pictures of a saved run: the GPU timeline (baseline beside), each team's usage against
its entitlement and owed hours, wait-time CDFs per job kind, and the budget tree's shares.
No network fetches: every picture is inline SVG."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run", type=Path, metavar="DIR", required=True, help="a saved run (allot simulate --save DIR)")
    p.add_argument("--baseline", type=Path, metavar="DIR", help="a saved run of the same workload under another policy")
    p.add_argument(
        "-o", "--output", type=Path, metavar="FILE.html", required=True, help="where to write the report"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from allotment.atomic_file import write_text
    from allotment.cli.out_paths import check_out_path
    from allotment.cli.progress import Progress, wanted
    from allotment.legible.report import read_for_report, render_report

    check_out_path(args.output, "-o", make_parents=True)
    with Progress(f"reading {args.run}", enabled=wanted()) as bar:
        new, ivs = read_for_report(args.run)
        base, base_ivs = read_for_report(args.baseline) if args.baseline is not None else (None, None)
        bar.phase(f"rendering {args.output}")
        html = render_report(new, base, ivs, base_ivs)
    write_text(args.output, html)
    print(f"wrote {args.output} ({len(html.encode()) / 1e6:.1f} MB)")
    return 0
