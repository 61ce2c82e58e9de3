#!/usr/bin/env bash
# The test command: bootstraps Node 24 and the dependencies, makes sure NATS, Postgres and Docker
# are up, then runs lint, typecheck and every test tier (unit, int, contract, e2e) through Nx. Keeps
# going after a failure so that one run shows everything; ends with "N passed, N failed" and
# exits non-zero if anything failed.
#
#   npm test                      everything
#   TIERS="unit" npm test         only some tiers (lint and typecheck always run)
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/bootstrap.sh
. scripts/bootstrap.sh || { echo "bootstrap failed"; echo "0 passed, 1 failed"; exit 1; }
bash scripts/ensure-services.sh || { echo "services are not available"; echo "0 passed, 1 failed"; exit 1; }

rm -rf reports
checks_failed=0
tiers_failed=0
step() { echo; echo "══ $* ══"; }

step format, lint and typecheck
npx prettier --check . --log-level warn || checks_failed=1
npx nx run-many -t lint typecheck --parallel=2 --outputStyle=stream || checks_failed=1
for tier in ${TIERS:-unit int contract e2e}; do
  # Suites isolate themselves (unique schemas and stream prefixes), so projects may run side by side.
  parallel=2
  [ "$tier" = contract ] && parallel=1
  step "test-$tier"
  npx nx run-many -t "test-$tier" --parallel=$parallel --outputStyle=stream --skip-nx-cache || tiers_failed=1
done

# A failed lint/typecheck counts as a failure; a failed tier whose reports show no failed test (a
# runner that crashed) counts as one too.
node scripts/summarize-tests.mjs reports "$checks_failed" "$tiers_failed"
status=$?
[ "$checks_failed" -eq 0 ] && [ "$tiers_failed" -eq 0 ] && [ "$status" -eq 0 ]
