#!/usr/bin/env bash
# Makes a working Docker engine available on this machine and builds the offline stand-in images.
#
# Idempotent: installs docker.io only when `dockerd` is missing, installs Debian's gVisor (`runsc`)
# when missing and registers it in /etc/docker/daemon.json as the runtime `runsc` (merged into what
# the file already holds), starts the daemon only when the socket does not answer and restarts it
# only when daemon.json changed, and build-standins.sh skips images that already exist. Safe to call
# from .ci/run and from developer shells alike (as root: it installs packages and starts a daemon).
# Where runsc cannot be installed (no archive), it says so and goes on: the engine works without it.
#
# Usage: deploy/images/ensure-docker.sh [--no-build] [--no-runsc] [build-standins.sh options, e.g. --force]
# Env:   DOCKER_WAIT_S  seconds to wait for the daemon to answer (default 90)
#        DOCKERD_LOG    daemon log file (default /var/log/dockerd.log)
#        DOCKER_DAEMON_JSON  the daemon's configuration file (default /etc/docker/daemon.json)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
wait_s="${DOCKER_WAIT_S:-90}"
log="${DOCKERD_LOG:-/var/log/dockerd.log}"
daemon_json="${DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}"
build=1
runsc=1
args=()
for a in "$@"; do
  case "$a" in
    --no-build) build=0 ;;
    --no-runsc) runsc=0 ;;
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

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-cache show "$1" >/dev/null 2>&1; then apt-get update -qq || true; fi
  apt-get install -y -qq --no-install-recommends "$1" >/dev/null 2>&1 || {
    apt-get update -qq && apt-get install -y -qq --no-install-recommends "$1" >/dev/null 2>&1
  }
}

# gVisor as a Docker runtime: `docker run --runtime runsc`, chosen per rank by the provider's policy
# (`sandbox.runtime: runsc`). `--network=host` is runsc's own flag, not Docker's: the sandbox uses
# the network namespace Docker (or the edge's overlay) set up for the container instead of its
# user-space netstack, which copies the interfaces once at start and so would never see the
# WireGuard interface the overlay moves into a job's network sandbox later. The container keeps its
# own network namespace either way.
runsc_args='["--network=host"]'
daemon_json_changed=0
register_runsc() {
  local path="$1" want merged
  want="$(printf '{"path":"%s","runtimeArgs":%s}' "$path" "$runsc_args")"
  mkdir -p "$(dirname "$daemon_json")"
  [ -s "$daemon_json" ] || echo '{}' >"$daemon_json"
  if command -v jq >/dev/null 2>&1; then
    if jq -e --argjson want "$want" '.runtimes.runsc == $want' "$daemon_json" >/dev/null 2>&1; then return; fi
    merged="$(jq --argjson want "$want" '.runtimes = ((.runtimes // {}) + {runsc: $want})' "$daemon_json")"
  elif command -v python3 >/dev/null 2>&1; then
    merged="$(python3 - "$daemon_json" "$want" <<'PY'
import json, sys
conf = json.load(open(sys.argv[1]))
want = json.loads(sys.argv[2])
if conf.get("runtimes", {}).get("runsc") == want:
    sys.exit(3)
conf.setdefault("runtimes", {})["runsc"] = want
print(json.dumps(conf, indent=2))
PY
    )" || { [ $? = 3 ] && return; echo "ensure-docker: cannot read $daemon_json as JSON" >&2; exit 1; }
  else
    echo "ensure-docker: jq or python3 is needed to register runsc in $daemon_json" >&2
    exit 1
  fi
  printf '%s\n' "$merged" >"$daemon_json.partial"
  mv "$daemon_json.partial" "$daemon_json"
  daemon_json_changed=1
  step "registered runsc ($path) in $daemon_json"
}

if [ "$runsc" = 1 ]; then
  if ! command -v runsc >/dev/null 2>&1; then
    step "installing runsc (gVisor)"
    apt_install runsc || step "runsc could not be installed; Docker runs without it (sandbox.runtime runsc unavailable)"
  fi
  if command -v runsc >/dev/null 2>&1; then register_runsc "$(command -v runsc)"; fi
fi

wait_for_daemon() {
  local deadline=$((SECONDS + wait_s)) delay=0.2
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
}

start_dockerd() {
  step "starting dockerd (log: $log)"
  # containerd is started by dockerd itself when no system containerd answers.
  setsid nohup dockerd >>"$log" 2>&1 </dev/null &
}

# No systemd here: the daemon is ours to stop. It reads daemon.json only at start (runtimes could be
# reloaded by SIGHUP, but a restart is the one path that works for every key the file may hold).
stop_dockerd() {
  local pid
  pid="$(pgrep -x dockerd | head -n1 || true)"
  [ -n "$pid" ] || return 0
  step "stopping dockerd (pid $pid) to apply $daemon_json"
  kill "$pid"
  local deadline=$((SECONDS + wait_s))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "ensure-docker: dockerd (pid $pid) did not stop within ${wait_s}s" >&2
      exit 1
    fi
    sleep 0.2
  done
}

if docker info >/dev/null 2>&1 && [ "$daemon_json_changed" = 0 ]; then
  step "docker daemon already answering"
else
  if [ "$daemon_json_changed" = 1 ]; then stop_dockerd; fi
  if pgrep -x dockerd >/dev/null 2>&1; then
    step "dockerd is running but not answering yet; waiting"
  else
    start_dockerd
  fi
  wait_for_daemon
  step "docker daemon answering ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
fi
if [ "$runsc" = 1 ] && command -v runsc >/dev/null 2>&1 &&
  ! docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; then
  echo "ensure-docker: runsc is in $daemon_json but the daemon does not list it (was dockerd started with other flags?)" >&2
fi

if [ "$build" = 1 ]; then
  "$here/build-standins.sh" "${args[@]}"
fi
step "done"
