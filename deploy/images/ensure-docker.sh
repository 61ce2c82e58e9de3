#!/usr/bin/env bash
# Makes a working Docker engine available on this machine and builds the offline stand-in images.
#
# Idempotent: installs docker.io only when `dockerd` is missing, starts the daemon only when the
# socket does not answer, and build-standins.sh skips images that already exist. Safe to call from
# .ci/run and from developer shells alike (as root: it installs packages and starts a daemon).
#
# Usage: deploy/images/ensure-docker.sh [--no-build] [build-standins.sh options, e.g. --force]
# Env:   DOCKER_WAIT_S  seconds to wait for the daemon to answer (default 90)
#        DOCKERD_LOG    daemon log file (default /var/log/dockerd.log)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wait_s="${DOCKER_WAIT_S:-90}"
log="${DOCKERD_LOG:-/var/log/dockerd.log}"
build=1
args=()
for a in "$@"; do
  case "$a" in
    --no-build) build=0 ;;
    *) args+=("$a") ;;
  esac
done

t0=$SECONDS
step() { echo "[ensure-docker +$((SECONDS - t0))s] $*"; }

if ! command -v dockerd >/dev/null 2>&1; then
  step "installing docker.io"
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine may have empty package lists; update only when the package is unknown.
  if ! apt-cache show docker.io >/dev/null 2>&1; then apt-get update -qq; fi
  apt-get install -y -qq --no-install-recommends docker.io >/dev/null || {
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends docker.io >/dev/null
  }
  step "docker.io installed"
fi

# debootstrap builds the postgres stand-in's root filesystem.
if [ "$build" = 1 ] && ! command -v debootstrap >/dev/null 2>&1; then
  step "installing debootstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends debootstrap >/dev/null || {
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  }
fi

if docker info >/dev/null 2>&1; then
  step "docker daemon already answering"
else
  if pgrep -x dockerd >/dev/null 2>&1; then
    step "dockerd is running but not answering yet; waiting"
  else
    step "starting dockerd (log: $log)"
    # containerd is started by dockerd itself when no system containerd answers.
    setsid nohup dockerd >>"$log" 2>&1 </dev/null &
  fi
  deadline=$((SECONDS + wait_s))
  delay=0.2
  until docker info >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "ensure-docker: the Docker daemon did not answer on /var/run/docker.sock within ${wait_s}s." >&2
      echo "Last lines of $log:" >&2
      tail -n 30 "$log" >&2 || true
      exit 1
    fi
    sleep "$delay"
    delay=$(awk -v d="$delay" 'BEGIN { d = d * 2; if (d > 2) d = 2; print d }')
  done
  step "docker daemon answering ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
fi

if [ "$build" = 1 ]; then
  "$here/build-standins.sh" "${args[@]}"
fi
step "done"
