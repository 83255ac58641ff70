#!/usr/bin/env bash
# Installs Debian's wrk, which the REST load benchmark runs beside `conform load rest` (only the
# benchmark needs it; the tests do not). Debian may rebuild a package (a new +bN suffix) and drop
# the old build, so the upstream version is pinned, the archive's candidate of it installed, and
# the version installed printed.
set -euo pipefail
WRK_UPSTREAM=4.1.0
upstream() { dpkg-query -W -f='${Version}' wrk 2>/dev/null | cut -d- -f1; }
if command -v wrk >/dev/null && [ "$(upstream || true)" = "$WRK_UPSTREAM" ]; then
  echo "wrk $(dpkg-query -W -f='${Version}' wrk) already installed"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
candidate="$(apt-cache policy wrk | awk '/Candidate:/ {print $2}')"
if [ "${candidate%%-*}" != "$WRK_UPSTREAM" ]; then
  echo "install-wrk: the archive's wrk is ${candidate:-absent}, not ${WRK_UPSTREAM}: move WRK_UPSTREAM in $0" >&2
  exit 1
fi
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "wrk=${candidate}"
echo "wrk $(dpkg-query -W -f='${Version}' wrk) installed"
