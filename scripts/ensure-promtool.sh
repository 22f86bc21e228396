#!/usr/bin/env bash
# promtool, Prometheus' own rule parser and rule unit tester, for tests/deploy/test_monitoring.py
# (the alert rules and the dashboard's queries in deploy/): Debian's `prometheus` package ships
# it.  Does nothing when it is already installed; called by .ci/run before `make test`.  Needs
# root (or sudo) only when it has to install.  The package also installs a prometheus service,
# which nothing here starts.
set -euo pipefail
if command -v promtool >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends prometheus
promtool --version
