#!/usr/bin/env bash
# Installs Schemathesis, pinned, into a virtualenv under the tools cache, for the test that runs
# it against `conform serve` (test/full/schemathesis.test.ts). Skips when that version is already there.
# `--path` prints the virtualenv's directory and installs nothing (the test finds `st` with it).
set -euo pipefail
SCHEMATHESIS_VERSION=4.32.5
dir="${CONFORM_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/conform-tools}/schemathesis-${SCHEMATHESIS_VERSION}"
if [ "${1:-}" = "--path" ]; then echo "$dir"; exit 0; fi
if [ -x "$dir/bin/st" ] && "$dir/bin/st" --version 2>/dev/null | grep -q "${SCHEMATHESIS_VERSION}"; then
  echo "schemathesis ${SCHEMATHESIS_VERSION} already in $dir"
  exit 0
fi
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "schemathesis==${SCHEMATHESIS_VERSION}"
echo "schemathesis ${SCHEMATHESIS_VERSION} installed in $dir"
