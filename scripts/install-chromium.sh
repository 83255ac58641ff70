#!/usr/bin/env bash
# Installs Debian's chromium, pinned, for the test that opens the HTML reports in a headless
# browser (test/browser-reports.test.ts, driven by playwright-core at /usr/bin/chromium).
# Skips when that version is installed. Debian's security archive keeps only recent builds: when
# this version has left it, the install fails naming the pin, which then moves to the new build.
set -euo pipefail
CHROMIUM_VERSION=156.0.8078.79-1~deb12u1
if [ "$(dpkg-query -W -f='${Version}' chromium 2>/dev/null || true)" = "$CHROMIUM_VERSION" ]; then
  echo "chromium ${CHROMIUM_VERSION} already installed"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "chromium=${CHROMIUM_VERSION}"; then
  echo "install-chromium: chromium ${CHROMIUM_VERSION} is not in the archive any more: update CHROMIUM_VERSION in $0 (apt-cache policy chromium)" >&2
  exit 1
fi
