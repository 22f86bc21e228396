#!/usr/bin/env bash
# Build the reconciler's image from Containerfile with Debian's buildah, on a Debian bookworm
# base made from Debian's own packages (debootstrap), then check it: `allot --version` and
# `allot validate` of the bundled example run inside it as the image's unprivileged user.
#
#   bash scripts/build-image.sh [TAG]          (default localhost/allotment:ci)
#
# Why a debootstrap base: this machine and CI reach Debian's archive and PyPI, no image registry,
# so `FROM debian:bookworm-slim` cannot be pulled; the Containerfile takes the base as an ARG.
# Why vfs storage and chroot isolation: CI runs in a container without the privileges overlay
# mounts and new namespaces need; both are buildah's documented fallbacks and need none.
# ALLOTMENT_COMPILE=0 (CI's default here) skips mypyc in the image's build stage: the same
# files, pure Python, minutes faster; a release build leaves it at 1.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=${1:-localhost/allotment:ci}
base=localhost/allotment-debian-base:bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
b=(buildah --storage-driver vfs)

if ! command -v buildah >/dev/null || ! command -v debootstrap >/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "build-image: buildah and debootstrap are needed (apt-get install buildah debootstrap)" >&2
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -q >/dev/null
  apt-get -o DPkg::Lock::Timeout=600 install -y -q buildah debootstrap >/dev/null
fi

if ! "${b[@]}" inspect --type image "$base" >/dev/null 2>&1; then
  root=$(mktemp -d /tmp/allotment-base.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
  ctr=$("${b[@]}" from scratch)
  cp -a "$root"/. "$("${b[@]}" mount "$ctr")"/
  "${b[@]}" commit -q "$ctr" "$base" >/dev/null
  "${b[@]}" rm "$ctr" >/dev/null
fi

# the host's CA bundle, for a machine whose PyPI traffic passes a TLS-intercepting proxy
ca=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
"${b[@]}" build -q --isolation chroot --build-arg "BASE=$base" \
  --build-arg "ALLOTMENT_COMPILE=${ALLOTMENT_COMPILE:-0}" \
  --volume "$ca:/etc/ssl/host-ca.crt:ro" --build-arg PIP_CERT=/etc/ssl/host-ca.crt \
  -f Containerfile -t "$tag" . >/dev/null

# the image runs allot as uid 10001 and validates the bundled example (copied in, read-only)
ctr=$("${b[@]}" from "$tag")
trap '"${b[@]}" rm "$ctr" >/dev/null 2>&1 || true' EXIT
for d in budgets inventory policies; do
  "${b[@]}" copy --chown 10001:10001 "$ctr" "$d" "/var/lib/allotment/example/$d" >/dev/null
done
"${b[@]}" run --isolation chroot "$ctr" -- allot --version
"${b[@]}" run --isolation chroot "$ctr" -- sh -c 'test "$(id -u)" = 10001 && echo "runs as uid $(id -u)"'
"${b[@]}" run --isolation chroot "$ctr" -- allot validate --repo /var/lib/allotment/example
echo "build-image: $tag built and checked"
