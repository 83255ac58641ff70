#!/usr/bin/env bash
# Installs Debian's Prometheus, which test/full/load-prometheus.test.ts starts on loopback to
# receive `conform load --remote-write` (its remote-write receiver, since 2.33) and answer PromQL.
# Debian may rebuild a package (a new +debNuN suffix) and drop the old build, so the upstream
# version is pinned, the archive's candidate of it installed, and the version installed printed.
# The package's own service is never started here: the test runs the binary itself.
set -euo pipefail
PROMETHEUS_UPSTREAM=2.42.0
upstream() { dpkg-query -W -f='${Version}' prometheus 2>/dev/null | cut -d+ -f1; }
if command -v prometheus >/dev/null && [ "$(upstream || true)" = "$PROMETHEUS_UPSTREAM" ]; then
  echo "prometheus $(dpkg-query -W -f='${Version}' prometheus) already installed"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
candidate="$(apt-cache policy prometheus | awk '/Candidate:/ {print $2}')"
if [ "${candidate%%+*}" != "$PROMETHEUS_UPSTREAM" ]; then
  echo "install-prometheus: the archive's prometheus is ${candidate:-absent}, not ${PROMETHEUS_UPSTREAM}: move PROMETHEUS_UPSTREAM in $0" >&2
  exit 1
fi
# policy-rc.d exiting 101 keeps the package's postinst from starting its service (there may be no
# init at all); one already there is left as it is.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null && $sudo chmod +x /usr/sbin/policy-rc.d
  trap '$sudo rm -f /usr/sbin/policy-rc.d' EXIT
fi
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "prometheus=${candidate}"
echo "prometheus $(dpkg-query -W -f='${Version}' prometheus) installed"
