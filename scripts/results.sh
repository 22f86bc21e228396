#!/usr/bin/env bash
# docs/results.md: 30 days of the ai2 scenario, seeds 1-5, under budgets, priority and fifo (15
# sequential runs, `nice`d), then the per-seed tables.  Usage: scripts/results.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
ALLOT=${ALLOT:-.venv/bin/allot}
OUT=${1:-out/results}
mkdir -p "$OUT"
for policy in budgets priority fifo; do
  for seed in 1 2 3 4 5; do
    nice -n 10 "$ALLOT" simulate --scenario ai2 --days 30 --seed "$seed" --policy "$policy" \
      --json "$OUT/${policy}_${seed}.json" >/dev/null
  done
done
"${PYTHON:-python3}" scripts/results_table.py "$OUT"
