#!/usr/bin/env bash
# A sample budget pull request on a throw-away clone: the pretrain owners move 10 points of their split
# from core-lm to scaling; `allot plan` shows the comment the bot would post (and the same plan as an
# HTML page, --report).  Touches nothing here.
set -euo pipefail
cd "$(dirname "$0")/.."
ALLOT=$(realpath "${ALLOT:-.venv/bin/allot}")
OUT=$(realpath -m "${1:-out}")
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q . "$work/repo"
f="$work/repo/budgets/ai2/olmo/pretrain/budget.yaml"
python3 - "$f" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
text = re.sub(r"(core-lm:\n\s+share: )50", r"\g<1>40", text)
text = re.sub(r"(scaling:\n\s+share: )25", r"\g<1>35", text)
open(path, "w", encoding="utf-8").write(text)
PY
git -C "$work/repo" diff --stat
set +e
"$ALLOT" plan --repo "$work/repo" --base HEAD --days "${PLAN_DAYS:-7}" --format markdown --out "$OUT/plan.md" \
  --report "$OUT/plan.html"
rc=$?
set -e
sed -n '1,40p' "$OUT/plan.md"
echo "(full comment: $OUT/plan.md; the pictures: $OUT/plan.html; allot plan exit code $rc)"
