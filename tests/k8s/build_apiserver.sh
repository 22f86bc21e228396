#!/usr/bin/env bash
# Build kube-apiserver v1.20.2 from Debian's own `kubernetes` source package with Debian's Go,
# following ../shared/k8s-crds/APISERVER.md. Idempotent: the binary is cached OUTSIDE the work
# tree ($ALLOTMENT_K8S_CACHE, default /var/cache/allotment), so a second run takes milliseconds.
# Every input is a Debian package; the deb-src entry exists only while `apt-get source` runs.
set -euo pipefail

CACHE=${ALLOTMENT_K8S_CACHE:-/var/cache/allotment}
BIN="$CACHE/kube-apiserver-1.20.2"
BUILD="$CACHE/build-kubernetes"
SRC_LIST=/etc/apt/sources.list.d/allotment-deb-src.sources
APT="apt-get -o DPkg::Lock::Timeout=600"

if [ -x "$BIN" ] && "$BIN" --version 2>/dev/null | grep -q 'v1.20'; then
  echo "kube-apiserver cached: $BIN"; exit 0
fi
mkdir -p "$CACHE" "$BUILD"
need=()
for p in golang-go rsync jq etcd-server openssl dpkg-dev curl; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then $APT update -q && $APT install -y -q "${need[@]}"; fi

cd "$BUILD"
if ! ls kubernetes_*.dsc >/dev/null 2>&1; then
  # The deb-src entry mirrors the bookworm main entry; removed again whatever happens.
  trap 'rm -f "$SRC_LIST"' EXIT
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "${uri:-http://deb.debian.org/debian}" > "$SRC_LIST"
  $APT update -q
  $APT source --download-only kubernetes
  rm -f "$SRC_LIST"; trap - EXIT
fi
if ! ls golang-github-modern-go-reflect2-dev_*.deb >/dev/null 2>&1; then
  $APT download golang-github-modern-go-reflect2-dev
fi
tree=$(find . -maxdepth 1 -type d -name 'kubernetes-*' | head -1)
if [ -z "$tree" ]; then
  dpkg-source -x kubernetes_*.dsc
  tree=$(find . -maxdepth 1 -type d -name 'kubernetes-*' | head -1)
fi
tree=$(cd "$tree" && pwd)

# Vendored reflect2 v1.0.1 faults under Go >= 1.18 (SIGSEGV in mapiternext on the first custom
# object); swap in Debian's 1.0.2 sources, without go.mod and tests.
rm -rf reflect2-deb && mkdir reflect2-deb && dpkg -x golang-github-modern-go-reflect2-dev_*.deb reflect2-deb
r2=reflect2-deb/usr/share/gocode/src/github.com/modern-go/reflect2
rm -rf "$tree/vendor/github.com/modern-go/reflect2"
mkdir -p "$tree/vendor/github.com/modern-go/reflect2"
find "$r2" -maxdepth 1 -type f -name '*.go' ! -name '*_test.go' -exec cp {} "$tree/vendor/github.com/modern-go/reflect2/" \;
cp "$r2"/LICENSE "$tree/vendor/github.com/modern-go/reflect2/" 2>/dev/null || true

# As debian/rules does: a GOPATH with the tree at k8s.io/kubernetes, no cgo.
mkdir -p "$BUILD/.go/src/k8s.io"
ln -sfn "$tree" "$BUILD/.go/src/k8s.io/kubernetes"
cd "$BUILD/.go/src/k8s.io/kubernetes"
export GOPATH="$BUILD/.go" CGO_ENABLED=0 GO111MODULE=off GOFLAGS=
nice -n 10 make WHAT=cmd/kube-apiserver
install -m 0755 _output/bin/kube-apiserver "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
"$BIN" --version
# The 1.8 GB of objects are not needed once the binary is cached.
[ "${ALLOTMENT_K8S_KEEP_BUILD:-0}" = 1 ] || rm -rf "$tree/_output"
echo "built $BIN"
