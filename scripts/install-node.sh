#!/usr/bin/env bash
# Installs Node.js of a supported line (package.json `engines`: 22 and 24), pinned, from the npm
# registry: the `node` package, whose install script fetches the binary for this platform
# (node-<os>-<arch>) from the same registry, so nothing but the registry is contacted. Each goes
# into .tools/node-<version>/ (git-ignored) once; the folder holding its `node` is printed on
# stdout, for PATH. CI (.ci/run) runs on one of these whatever Node the machine has, and test:full
# runs the unit tier under each (test/full/node-lines.test.ts).
#   bash scripts/install-node.sh 22      # prints the bin folder of Node 22
#   bash scripts/install-node.sh --list  # prints each supported line and its pinned version
set -euo pipefail
# One version per supported line; move a pin forward within its line, and add a line here, in
# package.json `engines` and in the workflows' matrix together (test/unit/node-lines.test.ts).
declare -A PINNED=([22]=22.23.3 [24]=24.21.0)
LINES="22 24"

if [ "${1:-}" = "--list" ]; then
  for line in $LINES; do echo "$line ${PINNED[$line]}"; done
  exit 0
fi
line="${1:?usage: install-node.sh LINE (one of: $LINES) | --list}"
version="${PINNED[$line]:-}"
if [ -z "$version" ]; then
  echo "install-node: Node $line is not a supported line (supported: $LINES)" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$root/.tools/node-$version"
bin="$prefix/node_modules/.bin"
if [ "$("$bin/node" --version 2>/dev/null || true)" != "v$version" ]; then
  rm -rf "$prefix"
  mkdir -p "$prefix"
  # An empty package.json makes the folder its own project, so npm installs here and nowhere up the tree.
  echo '{"private": true}' >"$prefix/package.json"
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --no-package-lock --loglevel=error \
    "node@$version" >&2
  if [ "$("$bin/node" --version)" != "v$version" ]; then
    echo "install-node: node@$version did not install a Node $version binary in $bin" >&2
    exit 1
  fi
fi
echo "$bin"
