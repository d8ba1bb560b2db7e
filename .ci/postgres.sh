#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the tests and prints the line
#   export DOCSAPI_TEST_POSTGRES_URL=postgres://...
# for the caller to eval. It installs PostgreSQL first when the machine has
# none. The cluster lives in a temporary folder (in memory when there is
# room); in the shell that evaluated those lines,
#   bash .ci/postgres.sh stop
# stops it and removes its folder.
set -euo pipefail

as_owner() { "$@"; }
if [ "$(id -u)" = 0 ]; then
  # initdb refuses to run as root: the cluster belongs to the postgres user.
  as_owner() { su postgres -s /bin/sh -c "$(printf '%q ' "$@")"; }
fi

if [ "${1:-}" = stop ]; then
  dir=${DOCSAPI_TEST_POSTGRES_DIR:?"no DOCSAPI_TEST_POSTGRES_DIR: run this in the shell that evaluated .ci/test-env.sh"}
  [ -f "$dir/data/PG_VERSION" ] || { echo "$dir holds no cluster: nothing stopped or removed" >&2; exit 1; }
  as_owner "$DOCSAPI_TEST_POSTGRES_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >&2
  # Only what this script made there, however the variable was set.
  rm -rf "$dir/data"
  rm -f "$dir/initdb.log" "$dir/server.log"
  rmdir "$dir" 2>/dev/null || true
  exit 0
fi

pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
if [ -z "$(pgbin)" ]; then
  # shellcheck source=apt.sh
  . "$(dirname "$0")/apt.sh"
  apt_install postgresql
fi
bin=$(pgbin)
[ -n "$bin" ] || { echo "no PostgreSQL server found or installed" >&2; exit 1; }

port=${DOCSAPI_TEST_POSTGRES_PORT:-54329}
# In memory where there is room (a GiB free in /dev/shm): the tests create
# and drop a database for almost every test, which on a disk costs more
# than their queries do. fsync is off anyway.
if [ "$(df --output=avail -k /dev/shm 2>/dev/null | tail -n 1)" -ge 1048576 ] 2>/dev/null; then
  dir=$(mktemp -d -p /dev/shm)
else
  dir=$(mktemp -d)
fi
chmod 755 "$dir"
[ "$(id -u)" != 0 ] || chown postgres "$dir"
as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
# fsync off: a test cluster needs speed, not durability across power loss.
# A port can be taken, or still held by a cluster shutting down: try the
# next ones before giving up.
for attempt in $(seq 1 20); do
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >&2; then
    break
  fi
  if [ "$attempt" = 20 ] || ! grep -q "could not bind\|could not create any TCP/IP sockets" "$dir/server.log"; then
    cat "$dir/server.log" >&2
    exit 1
  fi
  port=$((port + 1))
done
echo "export DOCSAPI_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
echo "export DOCSAPI_TEST_POSTGRES_DIR=$dir"
echo "export DOCSAPI_TEST_POSTGRES_BIN=$bin"
