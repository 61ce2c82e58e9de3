#!/usr/bin/env bash
# The part of the official postgres image's entrypoint contract that gpunet (and testcontainers'
# PostgreSqlContainer) rely on:
#   - POSTGRES_USER (default postgres), POSTGRES_PASSWORD (required unless
#     POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_DB (default $POSTGRES_USER), POSTGRES_INITDB_ARGS,
#     POSTGRES_HOST_AUTH_METHOD, and the *_FILE variants of the first four;
#   - initdb as the postgres user on first start only, scripts in /docker-entrypoint-initdb.d
#     (*.sh, *.sql, *.sql.gz) run against a socket-only temporary server;
#   - then `postgres` listening on 0.0.0.0:5432. "database system is ready to accept connections"
#     is logged twice on first start (temporary server, then the real one) and once afterwards,
#     exactly as upstream does.
#   - arguments starting with `-` are passed to postgres (`docker run postgres:16 -c fsync=off`).
set -Eeo pipefail

# file_env VAR [DEFAULT]: VAR from $VAR or the file named by $VAR_FILE (not both).
file_env() {
  local var="$1" def="${2:-}" fileVar="${1}_FILE"
  if [ "${!var:-}" ] && [ "${!fileVar:-}" ]; then
    echo >&2 "error: both $var and $fileVar are set (but are exclusive)"
    exit 1
  fi
  local val="$def"
  if [ "${!var:-}" ]; then
    val="${!var}"
  elif [ "${!fileVar:-}" ]; then
    val="$(<"${!fileVar}")"
  fi
  export "$var"="$val"
  unset "$fileVar"
}

want_help() {
  local arg
  for arg; do
    case "$arg" in
      -'?' | --help | --describe-config | -V | --version) return 0 ;;
    esac
  done
  return 1
}

psql_init() {
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc "$@"
}

init_database() {
  file_env POSTGRES_USER postgres
  file_env POSTGRES_PASSWORD
  file_env POSTGRES_DB "$POSTGRES_USER"
  file_env POSTGRES_INITDB_ARGS
  : "${POSTGRES_HOST_AUTH_METHOD:=}"

  if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
    cat >&2 <<'MSG'
Error: Database is uninitialized and superuser password is not specified.
       You must specify POSTGRES_PASSWORD to a non-empty value for the superuser,
       or use POSTGRES_HOST_AUTH_METHOD=trust to allow all connections without a password.
MSG
    exit 1
  fi

  # The password goes through a pipe, never argv or a file. (A process substitution must sit in
  # the command itself: in an assignment its descriptor is closed before initdb could read it.)
  # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a word list, as upstream.
  if [ -n "$POSTGRES_PASSWORD" ]; then
    initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") $POSTGRES_INITDB_ARGS
  else
    initdb --username="$POSTGRES_USER" $POSTGRES_INITDB_ARGS
  fi

  if [ -z "$POSTGRES_HOST_AUTH_METHOD" ]; then
    POSTGRES_HOST_AUTH_METHOD="$(postgres -C password_encryption)"
  fi
  printf '\nhost all all all %s\n' "$POSTGRES_HOST_AUTH_METHOD" >>"$PGDATA/pg_hba.conf"

  # A temporary server on the socket only, so nobody connects before initialization ends.
  PGUSER="$POSTGRES_USER" pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start

  export PGPASSWORD="$POSTGRES_PASSWORD"
  if [ "$POSTGRES_DB" != postgres ]; then
    psql_init --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db" ;'
  fi
  local f
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh)
        echo "$0: running $f"
        if [ -x "$f" ]; then "$f"; else . "$f"; fi
        ;;
      *.sql)
        echo "$0: running $f"
        psql_init --dbname "$POSTGRES_DB" -f "$f"
        ;;
      *.sql.gz)
        echo "$0: running $f"
        gunzip -c "$f" | psql_init --dbname "$POSTGRES_DB"
        ;;
      */\*) ;;
      *) echo "$0: ignoring $f" ;;
    esac
  done
  unset PGPASSWORD

  PGUSER="$POSTGRES_USER" pg_ctl -D "$PGDATA" -m fast -w stop
  echo
  echo 'PostgreSQL init process complete; ready for start up.'
  echo
}

if [ "${1:0:1}" = '-' ]; then
  set -- postgres "$@"
fi

if [ "$1" = postgres ] && ! want_help "$@"; then
  if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    chmod 3777 /var/run/postgresql
    # Drop to the postgres user (util-linux setpriv, the minbase stand-in for gosu).
    exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
  fi
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    init_database
  else
    echo
    echo 'PostgreSQL Database directory appears to contain a database; Skipping initialization'
    echo
  fi
fi

exec "$@"
