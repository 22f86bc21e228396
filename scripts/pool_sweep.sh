#!/usr/bin/env bash
# docs/results.md, "Issue 29: the dedicated pool": 30 days, seeds 1-5, the bundled example under
# budgets with grace and restore and no pool (`today`), a pool of the cluster's last P nodes
# without the notice or hook (`pool P`), and both (`both P`), on `ai2` (h100 P=8, b200 P=1,2) and
# `ai2-big-gangs` (h100 P=8); then `priority` and `fifo` as they are, where issue 25's targets
# compare budgets with them.  Two runs at a time, `nice`d; a run whose JSON exists is skipped.
# Usage: scripts/pool_sweep.sh OUT_DIR   (ALLOT=path/to/allot SEEDS="1 2 3 4 5" DAYS=30)
# Tables: python scripts/pool_tables.py OUT_DIR
set -euo pipefail
ALLOT=${ALLOT:-.venv/bin/allot}
OUT=${1:-out/pool}
SEEDS=${SEEDS:-1 2 3 4 5}
DAYS=${DAYS:-30}
mkdir -p "$OUT"
NOHOOK="--set interactive.grace=0s --set interactive.restore_hook=none"
runs=()
for case in "ai2 h100 8" "ai2 b200 2" "ai2 b200 1" "ai2-big-gangs h100 8"; do
  read -r scenario cluster p <<<"$case"
  for seed in $SEEDS; do
    runs+=("$scenario $cluster $seed today budgets|")
    runs+=("$scenario $cluster $seed both$p budgets|--set interactive.pool=$p")
    [[ $p == 1 ]] || runs+=("$scenario $cluster $seed pool$p budgets|--set interactive.pool=$p $NOHOOK")
  done
done
for case in "ai2 h100" "ai2-big-gangs h100"; do
  read -r scenario cluster <<<"$case"
  for seed in $SEEDS; do
    for policy in priority fifo; do runs+=("$scenario $cluster $seed today $policy|"); done
  done
done
one() {
  local head=${1%%|*} sets=${1#*|}
  read -r scenario cluster seed variant policy <<<"$head"
  local out="$OUT/$scenario-$cluster-$policy-$variant-$seed.json"
  [[ -s $out ]] && return 0
  # shellcheck disable=SC2086
  nice -n 10 "$ALLOT" simulate --scenario "$scenario" --cluster "$cluster" --days "$DAYS" --seed "$seed" \
    --policy "$policy" --json "$out.tmp" $sets >/dev/null && mv "$out.tmp" "$out"
}
export -f one; export ALLOT OUT DAYS
printf '%s\n' "${runs[@]}" | sort -u | xargs -P 2 -I{} bash -c 'one "$@"' _ {}
