#!/usr/bin/env bash
# The product's whole story on the bundled example, in one command (called by `make run`):
# the org's shares, a simulated week under budgets vs the old priority scheduler, a sample plan comment.
set -euo pipefail
cd "$(dirname "$0")/.."
ALLOT=${ALLOT:-.venv/bin/allot}
OUT=${OUT:-out}
mkdir -p "$OUT"

echo
echo "== A simulated week on the largest cluster: budgets vs the old priority scheduler vs fifo =="
for policy in budgets priority fifo; do
  "$ALLOT" simulate --scenario ai2 --days 7 --seed 1 --policy "$policy" --json "$OUT/sim-$policy.json"
  echo
done

if "$ALLOT" plan --help >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
  echo "== A sample budget pull request and the comment allot plan would post =="
  bash scripts/sample_plan.sh "$OUT"
fi
