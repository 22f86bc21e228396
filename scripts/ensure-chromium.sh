#!/usr/bin/env bash
# Headless Chromium for the page tests (tests/legible/test_pages_in_chromium.py): Debian's
# `chromium` package.  Does nothing when it is already installed; called by .ci/run before
# `make test`.  Needs root (or sudo) only when it has to install.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends chromium
chromium --version
