#!/usr/bin/env bash
# Builds local stand-ins for the upstream images gpunet uses, tagged with the upstream names, so the
# same Dockerfiles, compose file and testcontainers code work with and without a registry:
#
#   nats:2, nats:2-alpine   Debian's nats-server (with the glibc it links) in a scratch image;
#                           the -alpine variant adds a static busybox (sh, wget) for healthchecks
#   postgres:15, postgres:16  Debian bookworm (debootstrap minbase) + postgresql-15 + an entrypoint
#                           that follows the official image's contract. Bookworm has no
#                           PostgreSQL 16: the postgres:16 tag is PostgreSQL 15, labelled as such.
#   gpunet/job-base:torch-cpu  gpunet's own base image for job ranks (not a stand-in): Debian
#                           bookworm minbase + python3 + python3-torch (CPU), user 65532. Rebuilt
#                           when its content hash (job-base/packages.txt, Dockerfile, suite) changes.
#   gpunet/examples:torch-cpu  job-base + docs/examples/jobs under /opt/gpunet/examples: the example
#                           jobs' code in an image, for containerized jobs. Rebuilt when a job
#                           file, its Dockerfile or job-base changes.
#
# Every stand-in carries the label org.gpunet.standin=true and org.gpunet.standin.real-version.
# An image that already exists is left alone (a real upstream image is never overwritten) unless
# --force is given. The postgres root filesystem is cached in $GPUNET_IMAGE_CACHE (default
# <repo>/.cache/images) so that --force or a rebuild after `docker system prune` skips debootstrap;
# --refresh runs debootstrap again (newer Debian packages) and implies --force.
#
# Usage: build-standins.sh [--force | --refresh] [--only nats|postgres|job-base|examples]
# Env:   GPUNET_IMAGE_CACHE  cache directory;  DEBIAN_MIRROR  overrides the mirror found in
#        /etc/apt/sources.list*;  DEBIAN_SUITE  (default bookworm)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${GPUNET_IMAGE_CACHE:-$repo/.cache/images}"
suite="${DEBIAN_SUITE:-bookworm}"
force=0
refresh=0
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=1 ;;
    --refresh) refresh=1; force=1 ;;
    --only) only="${2:?--only needs nats, postgres, job-base or examples}"; shift ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "build-standins: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

# The classic builder works with every engine version (docker.io 20.10 ships no buildx plugin).
export DOCKER_BUILDKIT=0
t0=$SECONDS
step() { echo "[build-standins +$((SECONDS - t0))s] $*"; }
# docker build, quiet unless it fails (newer CLIs also print a deprecation notice for the classic builder).
docker_build() {
  docker build "$@" >"$work/build.log" 2>&1 || {
    cat "$work/build.log" >&2
    exit 1
  }
}
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }
# True when every tag exists and --force was not given.
all_exist() {
  [ "$force" = 1 ] && return 1
  local t
  for t in "$@"; do image_exists "$t" || return 1; done
}

work="$(mktemp -d /tmp/gpunet-standins.XXXXXX)"
rootfs_mounts=()
cleanup() {
  local m
  for m in "${rootfs_mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
apt_lists_ready=0
# Downloads one .deb from the Debian archive into $2 and unpacks it there.
fetch_deb() {
  local pkg="$1" dest="$2"
  mkdir -p "$dest"
  if [ "$apt_lists_ready" = 0 ] && ! apt-cache show "$pkg" >/dev/null 2>&1; then apt-get update -qq; fi
  apt_lists_ready=1
  # As root into a private temp dir: apt's _apt sandbox user could not write there.
  (cd "$work" && apt-get download -qq -o APT::Sandbox::User=root "$pkg" >/dev/null)
  dpkg -x "$work/$pkg"_*.deb "$dest"
}

# Copies a dynamically linked binary's shared libraries (as `ldd` resolves them) into a root tree.
copy_libs() {
  local bin="$1" root="$2" lib
  for lib in $(ldd "$bin" 2>/dev/null | grep -oE '/[^ ]+' || true); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}

build_nats() {
  if all_exist nats:2 nats:2-alpine; then
    step "nats:2 and nats:2-alpine exist (use --force to rebuild)"
    return
  fi
  step "building nats:2 and nats:2-alpine"
  local ctx="$work/nats" bin
  mkdir -p "$ctx/rootfs/tmp" "$ctx/rootfs/data" "$ctx/alpine/bin"
  chmod 1777 "$ctx/rootfs/tmp"
  # The archive's package is the source of truth; the host binary is the offline fallback.
  if fetch_deb nats-server "$work/nats-deb" 2>/dev/null; then
    bin="$work/nats-deb/usr/sbin/nats-server"
  elif [ -x /usr/sbin/nats-server ]; then
    bin=/usr/sbin/nats-server
  else
    echo "build-standins: cannot get nats-server (no archive, not installed)" >&2
    exit 1
  fi
  cp "$bin" "$ctx/rootfs/nats-server"
  # Debian builds nats-server with cgo: unlike upstream's binary it links glibc dynamically.
  copy_libs "$bin" "$ctx/rootfs"
  local version
  version="$("$bin" --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n1)"
  cp "$here/nats/nats-server.conf" "$ctx/rootfs/nats-server.conf"
  cp "$here/nats/Dockerfile" "$here/nats/Dockerfile.alpine" "$ctx/"

  fetch_deb busybox-static "$work/busybox-deb"
  cp "$work/busybox-deb/bin/busybox" "$ctx/alpine/bin/busybox"
  local applet
  for applet in sh wget cat ls ps kill sleep env; do ln -sf busybox "$ctx/alpine/bin/$applet"; done
  cp "$here/nats/docker-entrypoint.sh" "$ctx/alpine/docker-entrypoint.sh"
  chmod 755 "$ctx/alpine/docker-entrypoint.sh"

  docker_build --build-arg "NATS_VERSION=$version" -t nats:2 -f "$ctx/Dockerfile" "$ctx" >/dev/null
  docker_build --build-arg "NATS_VERSION=$version" -t nats:2-alpine -f "$ctx/Dockerfile.alpine" "$ctx" >/dev/null
  step "nats:2, nats:2-alpine built (nats-server $version)"
}

# The first Debian mirror this machine's apt uses for the main archive (not security).
debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; return; fi
  local m
  m="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { print $2 }' | grep -v security | head -n1 || true)"
  if [ -z "$m" ]; then
    m="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break } }' |
      grep -v security | grep debian | head -n1 || true)"
  fi
  echo "${m:-http://deb.debian.org/debian}"
}

build_postgres() {
  if all_exist postgres:15 postgres:16; then
    step "postgres:15 and postgres:16 exist (use --force to rebuild)"
    return
  fi
  local tarball="$cache/postgres-15-$suite-rootfs.tar"
  local base="gpunet-standin/postgres-rootfs:15-$suite"
  if [ "$refresh" = 1 ] || [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null 2>&1 || apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
    local mirror root="$work/pgroot"
    mirror="$(debian_mirror)"
    step "debootstrap --variant=minbase $suite from $mirror"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
      tail -n 40 "$work/debootstrap.log" >&2
      exit 1
    }
    step "installing postgresql-15 in the root filesystem"
    cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror $suite main
deb $mirror $suite-updates main
deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} $suite-security main
SOURCES
    # Like the official image: no service starts during install, and no default cluster — the
    # entrypoint runs initdb into $PGDATA on first start.
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    mkdir -p "$root/etc/postgresql-common"
    echo 'create_main_cluster = false' >"$root/etc/postgresql-common/createcluster.conf"
    mount -t proc proc "$root/proc"
    rootfs_mounts+=("$root/proc")
    local security_ok=1
    chroot "$root" apt-get update -qq >"$work/apt.log" 2>&1 || security_ok=0
    if [ "$security_ok" = 0 ]; then
      # A mirror without the security suite: fall back to the main suite alone.
      echo "deb $mirror $suite main" >"$root/etc/apt/sources.list"
      chroot "$root" apt-get update -qq >>"$work/apt.log" 2>&1
    fi
    chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      postgresql-15 >>"$work/apt.log" 2>&1 || {
      tail -n 40 "$work/apt.log" >&2
      exit 1
    }
    chroot "$root" apt-get clean
    umount "$root/proc"
    rootfs_mounts=()
    rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin "$root/usr/sbin/policy-rc.d" \
      "$root/var/log/"*.log "$root/tmp/"*
    mkdir -p "$cache"
    tar -C "$root" --numeric-owner -cf "$tarball.partial" .
    mv "$tarball.partial" "$tarball"
    step "root filesystem cached at $tarball ($(du -h "$tarball" | cut -f1))"
  else
    step "using cached root filesystem $tarball"
  fi
  if [ "$force" = 1 ] || [ "$refresh" = 1 ] || ! image_exists "$base"; then
    docker import "$tarball" "$base" >/dev/null
    step "imported $base"
  fi
  local version ctx="$work/postgres"
  mkdir -p "$ctx"
  cp "$here/postgres/Dockerfile" "$here/postgres/docker-entrypoint.sh" "$ctx/"
  version="$(docker run --rm --entrypoint dpkg-query "$base" -W -f '${Version}' postgresql-15)"
  docker_build --build-arg "BASE=$base" --build-arg "PG_VERSION=$version" \
    -t postgres:15 -t postgres:16 "$ctx" >/dev/null
  step "postgres:15, postgres:16 built (PostgreSQL $version)"
}

# The content hash of gpunet/job-base: what goes into it (package list, Dockerfile, suite). The root
# filesystem is cached under that hash, and the image carries it as a label, so a change to any
# input rebuilds exactly once — on developer machines and in CI alike — without --force.
job_base_hash() {
  { echo "suite=$suite"; cat "$here/job-base/packages.txt" "$here/job-base/Dockerfile"; } | sha256sum | cut -c1-16
}

build_job_base() {
  local tag=gpunet/job-base:torch-cpu hash
  hash="$(job_base_hash)"
  if [ "$force" = 0 ] && image_exists "$tag" &&
    [ "$(docker image inspect "$tag" --format '{{ index .Config.Labels "org.gpunet.image.content-hash" }}')" = "$hash" ]; then
    step "$tag exists with content hash $hash (use --force to rebuild)"
    return
  fi
  local rootfs_hash
  rootfs_hash="$({ echo "suite=$suite"; cat "$here/job-base/packages.txt"; } | sha256sum | cut -c1-16)"
  local tarball="$cache/job-base-$suite-$rootfs_hash-rootfs.tar"
  local base="gpunet-build/job-base-rootfs:$rootfs_hash"
  if [ "$refresh" = 1 ] || [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null 2>&1 || apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
    local mirror root="$work/jobroot" pkgs
    mirror="$(debian_mirror)"
    pkgs="$(grep -vE '^\s*(#|$)' "$here/job-base/packages.txt" | tr '\n' ' ')"
    step "debootstrap --variant=minbase $suite from $mirror (job-base)"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap-job.log" 2>&1 || {
      tail -n 40 "$work/debootstrap-job.log" >&2
      exit 1
    }
    step "installing $pkgs in the root filesystem"
    cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror $suite main
deb $mirror $suite-updates main
deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} $suite-security main
SOURCES
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    mount -t proc proc "$root/proc"
    rootfs_mounts+=("$root/proc")
    chroot "$root" apt-get update -qq >"$work/apt-job.log" 2>&1 || {
      echo "deb $mirror $suite main" >"$root/etc/apt/sources.list"
      chroot "$root" apt-get update -qq >>"$work/apt-job.log" 2>&1
    }
    # shellcheck disable=SC2086 # one word per package
    chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      $pkgs >>"$work/apt-job.log" 2>&1 || {
      tail -n 40 "$work/apt-job.log" >&2
      exit 1
    }
    chroot "$root" apt-get clean
    umount "$root/proc"
    rootfs_mounts=()
    # Documentation and test data are half of torch's footprint and useless to a rank.
    rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin "$root/usr/sbin/policy-rc.d" \
      "$root/var/log/"*.log "$root/tmp/"* "$root/usr/share/doc/"* "$root/usr/share/man/"* \
      "$root/usr/share/locale/"*
    mkdir -p "$cache"
    tar -C "$root" --numeric-owner -cf "$tarball.partial" .
    mv "$tarball.partial" "$tarball"
    rm -rf "$root"
    step "root filesystem cached at $tarball ($(du -h "$tarball" | cut -f1))"
  else
    step "using cached root filesystem $tarball"
  fi
  if [ "$force" = 1 ] || ! image_exists "$base"; then
    docker import "$tarball" "$base" >/dev/null
    step "imported $base"
  fi
  local torch ctx="$work/job-base"
  mkdir -p "$ctx"
  cp "$here/job-base/Dockerfile" "$ctx/"
  torch="$(docker run --rm --network none --entrypoint dpkg-query "$base" -W -f '${Version}' python3-torch)"
  docker_build --build-arg "BASE=$base" --build-arg "CONTENT_HASH=$hash" --build-arg "TORCH_VERSION=$torch" \
    -t "$tag" "$ctx" >/dev/null
  step "$tag built (python3-torch $torch, content hash $hash)"
  # Root filesystems of earlier package lists are no one's base any more.
  local old
  for old in $(docker image ls gpunet-build/job-base-rootfs --format '{{.Repository}}:{{.Tag}}'); do
    [ "$old" = "$base" ] || docker image rm "$old" >/dev/null 2>&1 || true
  done
}

# gpunet/examples: docs/examples/jobs on job-base, for containerized example jobs. Its content hash
# covers the job files, its Dockerfile and the base image's id, so an edit to any rebuilds it.
build_examples() {
  local tag=gpunet/examples:torch-cpu base=gpunet/job-base:torch-cpu jobs="$repo/docs/examples/jobs" hash
  image_exists "$base" || build_job_base
  hash="$({ docker image inspect "$base" --format '{{.Id}}'; cat "$here/examples/Dockerfile";
    (cd "$jobs" && find . -type f | LC_ALL=C sort | xargs sha256sum); } | sha256sum | cut -c1-16)"
  if [ "$force" = 0 ] && image_exists "$tag" &&
    [ "$(docker image inspect "$tag" --format '{{ index .Config.Labels "org.gpunet.image.content-hash" }}')" = "$hash" ]; then
    step "$tag exists with content hash $hash (use --force to rebuild)"
    return
  fi
  local ctx="$work/examples"
  mkdir -p "$ctx"
  cp "$here/examples/Dockerfile" "$ctx/"
  cp -r "$jobs" "$ctx/jobs"
  # World-readable: ranks run as uid 65532, and a checkout's umask may be stricter.
  chmod -R a+rX "$ctx/jobs"
  docker_build --build-arg "BASE=$base" --build-arg "CONTENT_HASH=$hash" -t "$tag" "$ctx" >/dev/null
  step "$tag built (content hash $hash)"
}

case "$only" in
  "") build_nats; build_postgres; build_job_base; build_examples ;;
  nats) build_nats ;;
  postgres) build_postgres ;;
  job-base) build_job_base ;;
  examples) build_examples ;;
  *) echo "build-standins: --only takes nats, postgres, job-base or examples" >&2; exit 2 ;;
esac
# Older builds of a stand-in lose their tag on rebuild; drop them.
docker image prune -f --filter label=org.gpunet.standin=true >/dev/null
docker image prune -f --filter label=org.gpunet.image=job-base >/dev/null
docker image prune -f --filter label=org.gpunet.image=examples >/dev/null
step "done"
docker image ls --filter label=org.gpunet.standin=true --format '  {{.Repository}}:{{.Tag}}  {{.Size}}'
docker image ls --filter label=org.gpunet.image --format '  {{.Repository}}:{{.Tag}}  {{.Size}}'
