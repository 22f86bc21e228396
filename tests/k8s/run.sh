#!/usr/bin/env bash
# make test-k8s: build kube-apiserver 1.20.2 from Debian's source package (cached in
# $ALLOTMENT_K8S_CACHE, default /var/cache/allotment), start it on Debian's etcd, install the
# KAI and Kueue CRDs, run the k8s integration tests, ALWAYS tear down (trap), exit with pytest's
# exit code.  Needs root the first time (apt-get source/install, the cache directory).
set -Eeuo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/bin/python}
export PYTHON=$PY
export ALLOTMENT_K8S_STATE=${ALLOTMENT_K8S_STATE:-$(mktemp -d /tmp/allotment-k8s.XXXXXX)}

teardown() {
  local rc=$?
  bash tests/k8s/apiserver.sh down >/dev/null 2>&1 || echo "run.sh: teardown failed" >&2
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

bash tests/k8s/apiserver.sh up
export ALLOTMENT_KUBECONFIG=$ALLOTMENT_K8S_STATE/kubeconfig
rc=0
"$(dirname "$PY")/pytest" -q -m k8s -p no:cacheprovider tests/k8s "${@}" || rc=$?
exit "$rc"
