#!/usr/bin/env bash
# make test-slurm: bring up a real local Slurm (tests/slurm/up.sh, a copy of the shared recipe),
# run the Slurm integration tests and the backend contract suite against it, ALWAYS tear it
# down (trap), and exit with pytest's exit code.  Needs root (up.sh installs Debian's packages
# when they are missing).  SLURM_TEST_STATE may name the state dir (<= 60 characters).
set -Eeuo pipefail
cd "$(dirname "$0")/../.."
HERE=tests/slurm
STATE=${SLURM_TEST_STATE:-$(mktemp -d /tmp/slurm.XXXXXX)}

teardown() {
  local rc=$?
  bash "$HERE/down.sh" "$STATE" --purge >/dev/null 2>&1 || echo "run.sh: teardown of $STATE failed" >&2
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

bash "$HERE/up.sh" "$STATE"
# shellcheck disable=SC1091
source "$STATE/env.sh"
export SLURM_CONF SLURM_TEST_STATE=$STATE
rc=0
.venv/bin/pytest -q -m slurm -p no:cacheprovider "$HERE" "${@}" || rc=$?
exit "$rc"
