#!/usr/bin/env bash
# Makes sure what the tests need is up: NATS with JetStream on 127.0.0.1:4222, PostgreSQL on
# 127.0.0.1:5432, and (unless --no-docker) a Docker engine with the offline stand-in images for the
# contract tier. Starts what is down, using the machine's own packages (ENVIRONMENT.md); never
# stops anything. Each check is bounded in time.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
docker=1
[ "${1:-}" = "--no-docker" ] && docker=0

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
  local port=$1 what=$2
  for _ in $(seq 1 60); do port_open "$port" && return 0; sleep 0.5; done
  echo "[services] $what did not open 127.0.0.1:$port in 30 s" >&2
  return 1
}

if port_open 4222; then
  echo "[services] NATS is up on 4222"
else
  echo "[services] starting NATS with JetStream"
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_port 4222 NATS
fi

if port_open 5432; then
  echo "[services] PostgreSQL is up on 5432"
else
  echo "[services] starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  wait_port 5432 PostgreSQL
fi

# Real distributed training on CPU (Gloo) in the example jobs (docs/examples/jobs): Debian's torch
# and grpcio for /usr/bin/python3, and Open MPI's mpirun for the hostfile example.
if /usr/bin/python3 -c 'import torch, grpc' >/dev/null 2>&1 && command -v mpirun >/dev/null; then
  echo "[services] /usr/bin/python3 has torch and grpc; mpirun is installed"
else
  echo "[services] installing python3-torch python3-grpcio openmpi-bin (Debian) for the CPU training examples"
  export DEBIAN_FRONTEND=noninteractive
  pkgs="python3-torch python3-grpcio openmpi-bin"
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1 || {
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
  }
fi

# The job overlay's namespace testbed (F7): userspace WireGuard, its tools, ip/iptables, iperf3.
if command -v wireguard-go >/dev/null && command -v wg >/dev/null && command -v iperf3 >/dev/null \
  && command -v ip >/dev/null && command -v iptables >/dev/null; then
  echo "[services] wireguard-go, wireguard-tools, iproute2, iptables and iperf3 are installed"
else
  echo "[services] installing wireguard-go wireguard-tools iproute2 iptables iperf3 (Debian) for the overlay testbed"
  export DEBIAN_FRONTEND=noninteractive
  pkgs="wireguard-go wireguard-tools iproute2 iptables iperf3"
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1 || {
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
  }
fi

if [ "$docker" = 1 ]; then
  bash "$root/deploy/images/ensure-docker.sh"
fi
