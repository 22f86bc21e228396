#!/usr/bin/env bash
# A real kube-apiserver v1.20.2 on Debian's etcd, on loopback, for the integration tests.
#   tests/k8s/apiserver.sh up     build (cached) + start etcd and the API server + install CRDs
#   tests/k8s/apiserver.sh stop   stop the API server only (etcd keeps the data; `start` resumes)
#   tests/k8s/apiserver.sh start  start the API server again on the same state
#   tests/k8s/apiserver.sh down   stop both and remove the state (certs, token, etcd data)
# Idempotent: `up` on a running server only checks it.  Throwaway certs and a static token are
# made with openssl; the kubeconfig is $STATE/kubeconfig.  No kubelet, controller-manager or
# scheduler run: tests create Nodes and bind Pods themselves (../shared/k8s-crds/APISERVER.md).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${ALLOTMENT_K8S_CACHE:-/var/cache/allotment}
BIN="$CACHE/kube-apiserver-1.20.2"
STATE=${ALLOTMENT_K8S_STATE:-/tmp/allotment-k8s}
PORT=${ALLOTMENT_K8S_PORT:-16443}
ETCD_PORT=${ALLOTMENT_K8S_ETCD_PORT:-12379}
PY=${PYTHON:-python3}
SHARED=${ALLOTMENT_SHARED:-$HERE/../../../shared}

running() { [ -f "$STATE/$1.pid" ] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

ready() {
  curl -sk --max-time 2 -H "Authorization: Bearer $(cat "$STATE/token")" \
    "https://127.0.0.1:$PORT/readyz" 2>/dev/null | grep -q '^ok$'
}

certs() {
  [ -f "$STATE/server.crt" ] && return 0
  mkdir -p "$STATE"
  cd "$STATE"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=allotment-test-ca" \
    -keyout ca.key -out ca.crt 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout server.key \
    -out server.csr 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default\n' > san.ext
  openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
    -extfile san.ext -out server.crt 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  openssl rand -hex 24 > token
  printf '%s,allotment-admin,uid-admin,system:masters\n' "$(cat token)" > tokens.csv
  cat > kubeconfig <<KC
apiVersion: v1
kind: Config
clusters:
- name: allotment-test
  cluster:
    server: https://127.0.0.1:$PORT
    certificate-authority: $STATE/ca.crt
users:
- name: admin
  user:
    token: $(cat token)
contexts:
- name: allotment-test
  context: {cluster: allotment-test, user: admin}
current-context: allotment-test
KC
  cd - >/dev/null
}

start_etcd() {
  running etcd && return 0
  mkdir -p "$STATE/etcd"
  nohup etcd --name allotment-test --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "allotment-test=http://127.0.0.1:$((ETCD_PORT + 1))" \
    > "$STATE/etcd.log" 2>&1 &
  echo $! > "$STATE/etcd.pid"
}

start_apiserver() {
  running apiserver && ready && return 0
  nohup "$BIN" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$PORT" \
    --tls-cert-file "$STATE/server.crt" --tls-private-key-file "$STATE/server.key" \
    --client-ca-file "$STATE/ca.crt" --token-auth-file "$STATE/tokens.csv" \
    --authorization-mode RBAC \
    --service-account-key-file "$STATE/sa.pub" --service-account-signing-key-file "$STATE/sa.key" \
    --service-account-issuer https://kubernetes.default.svc \
    --service-cluster-ip-range 10.96.0.0/24 \
    --disable-admission-plugins ServiceAccount \
    > "$STATE/apiserver.log" 2>&1 &
  echo $! > "$STATE/apiserver.pid"
  for _ in $(seq 1 120); do
    ready && { echo "kube-apiserver ready on https://127.0.0.1:$PORT (kubeconfig $STATE/kubeconfig)"; return 0; }
    running apiserver || { tail -20 "$STATE/apiserver.log"; echo "kube-apiserver exited" >&2; return 1; }
    sleep 0.5
  done
  tail -20 "$STATE/apiserver.log"; echo "kube-apiserver not ready after 60 s" >&2; return 1
}

stop_one() {
  if running "$1"; then
    kill "$(cat "$STATE/$1.pid")"
    for _ in $(seq 1 40); do running "$1" || break; sleep 0.25; done
    running "$1" && kill -9 "$(cat "$STATE/$1.pid")"
  fi
  rm -f "$STATE/$1.pid"
}

case "${1:-up}" in
  up)
    bash "$HERE/build_apiserver.sh"
    certs; start_etcd; start_apiserver
    "$PY" "$HERE/install_crds.py" --kubeconfig "$STATE/kubeconfig" --crds "$SHARED/k8s-crds"
    ;;
  start) start_etcd; start_apiserver ;;
  stop) stop_one apiserver ;;
  down) stop_one apiserver; stop_one etcd; rm -rf "$STATE" ;;
  status) running apiserver && ready && echo up || { echo down; exit 1; } ;;
  *) echo "usage: $0 up|start|stop|down|status" >&2; exit 2 ;;
esac
