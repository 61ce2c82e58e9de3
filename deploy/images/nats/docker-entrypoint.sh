#!/bin/sh
# Upstream nats:*-alpine contract: `docker run nats:2-alpine -js` runs `nats-server -js`.
set -e
if [ "${1#-}" != "$1" ]; then
  set -- nats-server "$@"
fi
exec "$@"
