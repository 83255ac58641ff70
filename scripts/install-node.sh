#!/usr/bin/env bash
# Installs Node.js of a supported line (package.json `engines`: 22 and 24), pinned, from the npm
# registry: the `node` package, whose install script fetches the binary for this platform
# (node-<os>-<arch>) from the same registry, so nothing but the registry is contacted. Each goes
# into the tools cache (CONFORM_TOOLS_DIR, default ~/.cache/conform-tools) once, shared by every
# clone on the machine, so CI on a fresh clone takes it from there; the folder holding its `node`
# is printed on stdout, for PATH. CI (.ci/run) runs on one of these whatever Node the machine has,
# and test:full runs the unit tier under each (test/full/node-lines.test.ts).
#   bash scripts/install-node.sh 22      # prints the bin folder of Node 22, installing it if need be
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
tools="${CONFORM_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/conform-tools}"
prefix="$tools/node-$version"
bin="$prefix/node_modules/.bin"
if [ "$("$bin/node" --version 2>/dev/null || true)" != "v$version" ]; then
  mkdir -p "$tools"
  # Built beside its place and moved in whole, so a run stopped half-way, or another clone
  # installing the same version at the same time, never leaves a broken Node where one is looked for.
  staging="$(mktemp -d "$tools/.node-$version.XXXXXX")"
  trap 'rm -rf "$staging"' EXIT
  # An empty package.json makes the folder its own project, so npm installs here and nowhere up the tree.
  echo '{"private": true}' >"$staging/package.json"
  # As environment, the settings reach the npm the `node` package's install script starts as well.
  npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false npm_config_loglevel=error \
    npm install --prefix "$staging" --no-save --no-package-lock "node@$version" >&2
  if [ "$("$staging/node_modules/.bin/node" --version)" != "v$version" ]; then
    echo "install-node: node@$version did not install a Node $version binary" >&2
    exit 1
  fi
  chmod 755 "$staging"
  rm -rf "$prefix"
  # The binary is linked within the folder and .bin/node is a relative link: the move keeps both.
  # Should another install have moved its copy in meanwhile, that one serves.
  mv -T "$staging" "$prefix" 2>/dev/null || [ "$("$bin/node" --version 2>/dev/null)" = "v$version" ]
fi
echo "$bin"
