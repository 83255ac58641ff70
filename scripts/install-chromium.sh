#!/usr/bin/env bash
# Installs Debian's chromium for the test that opens the HTML reports in a headless browser
# (test/full/browser-reports.test.ts, driven by playwright-core at /usr/bin/chromium; test:full only).
# Debian replaces security builds and drops the old ones from its archive, so a full version pin
# breaks within weeks: the major version is pinned (the one playwright-core's CDP use was checked
# against), the archive's candidate of it is installed, and the version installed is printed.
set -euo pipefail
CHROMIUM_MAJOR=156
installed_major() { dpkg-query -W -f='${Version}' chromium 2>/dev/null | cut -d. -f1; }
if [ "$(installed_major || true)" = "$CHROMIUM_MAJOR" ]; then
  echo "chromium $(dpkg-query -W -f='${Version}' chromium) already installed"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
candidate="$(apt-cache policy chromium | awk '/Candidate:/ {print $2}')"
if [ "${candidate%%.*}" != "$CHROMIUM_MAJOR" ]; then
  echo "install-chromium: the archive's chromium is ${candidate:-absent}, not major ${CHROMIUM_MAJOR}:" \
    "check the browser test against it, then move CHROMIUM_MAJOR in $0" >&2
  exit 1
fi
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "chromium=${candidate}"
if [ "$(installed_major)" != "$CHROMIUM_MAJOR" ]; then
  echo "install-chromium: installed chromium $(dpkg-query -W -f='${Version}' chromium), not major ${CHROMIUM_MAJOR}" >&2
  exit 1
fi
echo "chromium $(dpkg-query -W -f='${Version}' chromium) installed"
