#!/usr/bin/env bash
# docs/results.md's headline: 30 days, seeds 1-5, budgets / priority / fifo, on `ai2` (b200 and
# h100) and `ai2-big-gangs` (h100): 45 sequential runs (`nice`d), then the tables and the issue-25
# targets (scripts/headline_tables.py).  Usage: scripts/headline.sh [OUT_DIR]
#   ALLOT=path/to/allot   PYTHON=python   SEEDS="1 2 3 4 5"   DAYS=30
# A run whose JSON is already in OUT_DIR is not run again (an interrupted sweep resumes).
set -euo pipefail
cd "$(dirname "$0")/.."
ALLOT=${ALLOT:-.venv/bin/allot}
PYTHON=${PYTHON:-python3}
OUT=${1:-out/headline}
SEEDS=${SEEDS:-1 2 3 4 5}
DAYS=${DAYS:-30}
mkdir -p "$OUT"
for case in "ai2 b200" "ai2 h100" "ai2-big-gangs h100"; do
  read -r scenario cluster <<<"$case"
  for policy in budgets priority fifo; do
    for seed in $SEEDS; do
      out="$OUT/$scenario-$cluster-$policy-$seed.json"
      [[ -s $out ]] && continue
      nice -n 10 "$ALLOT" simulate --scenario "$scenario" --cluster "$cluster" --days "$DAYS" --seed "$seed" \
        --policy "$policy" --json "$out" >/dev/null
    done
  done
done
"$PYTHON" scripts/headline_tables.py "$OUT"
