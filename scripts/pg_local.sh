#!/usr/bin/env bash
# A throwaway local PostgreSQL in a directory of your choice.
#   scripts/pg_local.sh start DIR   initdb (first time) and start; writes DIR/env
#   scripts/pg_local.sh stop DIR    stop it (the data stays until you remove DIR)
# DIR/env exports PGHOST, PGPORT and PGUSER for psql and idemload.
# The server runs with fsync=off (a test server's data is thrown away); with
# PG_DURABLE=1 it keeps PostgreSQL's default durability (fsync,
# synchronous_commit and full_page_writes on), as users' servers do: what
# scripts/bench measures on.
# It listens on a Unix socket in DIR only, so it never collides with another
# server's TCP port.  As root, the server runs as the postgres system user
# (initdb refuses root), and DIR is handed to that user.
set -euo pipefail
action=${1:?usage: pg_local.sh start|stop DIR}
dir=${2:?usage: pg_local.sh start|stop DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
bin=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
[ -x "$bin/initdb" ] || { echo "pg_local.sh: no PostgreSQL server binaries (install postgresql-15)" >&2; exit 1; }
port=${PG_PORT:-5432}

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $action in
start)
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres "$dir"
        user=postgres
    else
        user=$(id -un)
    fi
    # The server must be able to reach its directory through every parent.
    p=$dir
    while [ "$p" != / ]; do chmod o+x "$p" 2>/dev/null || true; p=$(dirname "$p"); done
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "$bin/initdb" -D "$dir/data" -U "$user" -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
            as_owner "$bin/initdb" -D "$dir/data" -U "$user" -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
            { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    durability="-c fsync=off"
    [ "${PG_DURABLE:-}" = 1 ] && durability=""
    if ! as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-k $dir -p $port -c listen_addresses='' $durability -c max_connections=100 -c log_line_prefix='%m [%p] db=%d '" start >/dev/null ||
            { cat "$dir/server.log" >&2; exit 1; }
    fi
    cat >"$dir/env" <<ENV
export PGHOST=$dir
export PGPORT=$port
export PGUSER=$user
export PG_BIN=$bin
export PATH=$bin:\$PATH
ENV
    chmod 644 "$dir/env"
    echo "PostgreSQL running in $dir (socket), user $user; . $dir/env to use it"
    ;;
stop)
    if [ -f "$dir/data/PG_VERSION" ]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    echo "PostgreSQL in $dir stopped"
    ;;
*)
    echo "usage: pg_local.sh start|stop DIR" >&2
    exit 2
    ;;
esac
