#!/usr/bin/env bash
# Renders auth.conf (accounts, users, permissions) for gpunet.conf:
#   deploy/nats/render-auth.sh services.json edges.txt > deploy/nats/auth.conf
# services.json: {"discovery": "U…", "scheduler": "U…", …} (each service's public nkey)
# edges.txt:     one admitted edge id (its public nkey, printed by `gpunet edge init`) per line
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
exec npx --prefix "$root" tsx "$root/services/discovery/src/infra/nats-auth/render-nats-auth.main.ts" "$@"
