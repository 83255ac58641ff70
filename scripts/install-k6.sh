#!/usr/bin/env bash
# Installs the pinned k6 release into a per-version cache directory and prints the binary's path.
# The build is skipped when that exact version is already there, so CI and tests pay for it once.
# Tests and the README find the binary through CONFORM_K6 (default: the path printed here).
set -euo pipefail
K6_VERSION="v1.8.1"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/conform/k6"
DEST="$CACHE_ROOT/$K6_VERSION"
BIN="$DEST/k6"
if [ "${1:-}" = "--print-path" ]; then
  echo "$BIN"
  exit 0
fi
if [ -x "$BIN" ] && "$BIN" version 2>/dev/null | grep -q "k6 $K6_VERSION"; then
  echo "$BIN"
  exit 0
fi
command -v go >/dev/null || { echo "install-k6: go is not on PATH (needed to build k6 $K6_VERSION)" >&2; exit 2; }
mkdir -p "$DEST"
# Build into a temporary directory and move into place, so an interrupted build never leaves
# a binary that looks installed.
TMP="$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
GOBIN="$TMP" CGO_ENABLED=0 go install "go.k6.io/k6@$K6_VERSION" >&2
mv "$TMP/k6" "$BIN"
echo "$BIN"
