#!/usr/bin/env bash
# docs/results.md: 30 days of the ai2 scenario, seeds 1-5, under budgets, priority and fifo (15
# sequential runs, `nice`d), then the per-seed tables.  Usage: scripts/results.sh [OUT_DIR]
#   ALLOT=path/to/allot   PYTHON=python with allotment importable (for ATTRIBUTE=1)
#   SEEDS="1 2 3 4 5"     DAYS=30     SCENARIO=ai2
#   ATTRIBUTE=1           also keep the budgets event logs and attribute each run's hour-capped
#                         shortfall (scripts/owed_gap.py, a few minutes per 30-day run); the table
#                         then ends with the attribution summary
set -euo pipefail
cd "$(dirname "$0")/.."
ALLOT=${ALLOT:-.venv/bin/allot}
PYTHON=${PYTHON:-python3}
OUT=${1:-out/results}
SEEDS=${SEEDS:-1 2 3 4 5}
DAYS=${DAYS:-30}
SCENARIO=${SCENARIO:-ai2}  # ai2-big-gangs: the previous calibration (docs/results.md)
mkdir -p "$OUT"
for policy in budgets priority fifo; do
  for seed in $SEEDS; do
    events=()
    if [[ ${ATTRIBUTE:-0} == 1 && $policy == budgets ]]; then
      events=(--events "$OUT/budgets-$seed.events.jsonl")
    fi
    nice -n 10 "$ALLOT" simulate --scenario "$SCENARIO" --days "$DAYS" --seed "$seed" --policy "$policy" \
      --json "$OUT/${policy}_${seed}.json" "${events[@]}" >/dev/null
    if [[ ${#events[@]} -gt 0 ]]; then
      nice -n 10 "$PYTHON" scripts/owed_gap.py "${events[1]}" --json "$OUT/attribution-$seed.json" >/dev/null
    fi
  done
done
"$PYTHON" scripts/results_table.py "$OUT"
