#!/usr/bin/env bash
# Installs the pinned wrk (Debian's package) that the REST load benchmark runs beside
# `conform load rest`. Only the benchmark needs it; the tests do not.
set -euo pipefail
WRK_VERSION="4.1.0-3+b2"
if command -v wrk >/dev/null && [ "$(dpkg-query -W -f='${Version}' wrk 2>/dev/null)" = "$WRK_VERSION" ]; then
  exit 0
fi
apt-get update
apt-get install -y "wrk=$WRK_VERSION"
