#!/usr/bin/env bash
# A throwaway local Citus cluster (a coordinator and two workers) for the
# tests against a distributed target, built from the Citus source kept in
# ../shared/citus/ beside the repository (Debian has no Citus package).
#   scripts/citus.sh build        install Citus into PostgreSQL 15 if missing
#                                 (its build packages too); quick when installed
#   scripts/citus.sh start DIR    build if needed, initdb (first time), start the
#                                 three nodes, add the workers; writes DIR/env
#   scripts/citus.sh stop DIR     stop the three nodes (the data stays in DIR)
# The nodes listen on Unix sockets in DIR only (no TCP port to collide with
# another suite's): the coordinator reaches the workers by that directory as
# their host name, with "ports" CITUS_PORT (default 57630) + 1 and + 2, which
# only name the sockets.  DIR/env exports PGHOST (DIR), PGPORT and PGUSER of
# the coordinator for psql and idemload, and CITUS_WORKER_PORTS.  As root the
# servers run as the postgres system user (initdb refuses root).
set -euo pipefail
cd "$(dirname "$0")/.."
src_root=$(pwd)
action=${1:?usage: citus.sh build|start|stop [DIR]}
tarball=${CITUS_TARBALL:-$src_root/../shared/citus/citus-13.2.2.tar.gz}
bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
pg_config=${bin}/pg_config
[ -x "$pg_config" ] || pg_config=/usr/lib/postgresql/15/bin/pg_config
base_port=${CITUS_PORT:-57630}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

installed() {
    [ -f "$("$pg_config" --pkglibdir 2>/dev/null || echo /usr/lib/postgresql/15/lib)/citus.so" ] &&
        [ -f /usr/share/postgresql/15/extension/citus.control ]
}

build() {
    if installed; then
        return 0
    fi
    # One build at a time on this machine (several suites may start at once).
    exec 9>/tmp/idemload-citus-build.lock
    flock 9
    if installed; then
        return 0
    fi
    [ -f "$tarball" ] || { echo "citus.sh: no Citus source at $tarball" >&2; exit 1; }
    if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null; then
        echo "citus.sh: need root or sudo to install Citus" >&2
        exit 1
    fi
    # The server headers must be those of the installed server, to the minor version.
    local server_version
    server_version=$(dpkg-query -W -f='${Version}' postgresql-15)
    local packages=(build-essential "postgresql-server-dev-15=$server_version" liblz4-dev libzstd-dev
                    libkrb5-dev flex bison libssl-dev libselinux1-dev libxslt1-dev libpam0g-dev
                    libreadline-dev)
    local missing=() p name
    for p in "${packages[@]}"; do
        name=${p%%=*}
        if [ "$name" = postgresql-server-dev-15 ]; then
            [ "$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null)" = "install ok installed $server_version" ] ||
                missing+=("$p")
        else
            dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
        fi
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "citus.sh: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        as_root apt-get install -o DPkg::Lock::Timeout=600 -y -q --no-install-recommends "${missing[@]}" ||
            { as_root apt-get update -q && as_root apt-get install -o DPkg::Lock::Timeout=600 -y -q --no-install-recommends "${missing[@]}"; }
    fi
    local work
    work=$(mktemp -d /tmp/citus-build.XXXXXX)
    echo "citus.sh: building Citus from $tarball in $work (about a minute)"
    tar xzf "$tarball" -C "$work"
    (
        cd "$work"
        ./configure PG_CONFIG="$pg_config" --without-libcurl >configure.log 2>&1 ||
            { tail -n 30 configure.log >&2; exit 1; }
        make -j"$(nproc)" with_llvm=no >make.log 2>&1 || { tail -n 30 make.log >&2; exit 1; }
        as_root make install with_llvm=no >install.log 2>&1 || { tail -n 30 install.log >&2; exit 1; }
    )
    rm -rf "$work"
    installed || { echo "citus.sh: Citus did not install" >&2; exit 1; }
    echo "citus.sh: Citus installed"
}

# psql on one node, as the cluster's user, through its socket.
node_psql() {
    local port=$1
    shift
    as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U "$user" -d postgres "$@"
}

start_node() {
    local name=$1 port=$2 data=$dir/$1
    if [ ! -f "$data/PG_VERSION" ]; then
        as_owner "$bin/initdb" -D "$data" -U "$user" -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb-$name.log" 2>&1 ||
            as_owner "$bin/initdb" -D "$data" -U "$user" -A trust -E UTF8 --no-locale >"$dir/initdb-$name.log" 2>&1 ||
            { cat "$dir/initdb-$name.log" >&2; exit 1; }
        cat >>"$data/postgresql.conf" <<CONF
shared_preload_libraries = 'citus'
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
fsync = off
max_connections = 200
max_prepared_transactions = 100
citus.shard_count = 8
CONF
    fi
    if ! as_owner "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        as_owner "$bin/pg_ctl" -D "$data" -l "$dir/$name.log" -w -t 60 start >/dev/null ||
            { tail -n 30 "$dir/$name.log" >&2; exit 1; }
    fi
}

case $action in
build)
    build
    ;;
start)
    dir=${2:?usage: citus.sh start DIR}
    build
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres "$dir"
        user=postgres
    else
        user=$(id -un)
    fi
    p=$dir
    while [ "$p" != / ]; do chmod o+x "$p" 2>/dev/null || true; p=$(dirname "$p"); done
    ports=("$base_port" $((base_port + 1)) $((base_port + 2)))
    start_node coordinator "${ports[0]}"
    start_node worker1 "${ports[1]}"
    start_node worker2 "${ports[2]}"
    for port in "${ports[@]}"; do
        node_psql "$port" -c "CREATE EXTENSION IF NOT EXISTS citus"
    done
    node_psql "${ports[0]}" -c "SELECT citus_set_coordinator_host('$dir', ${ports[0]})" >/dev/null
    for port in "${ports[1]}" "${ports[2]}"; do
        node_psql "${ports[0]}" -c "SELECT citus_add_node('$dir', $port)" >/dev/null
    done
    cat >"$dir/env" <<ENV
export PGHOST=$dir
export PGPORT=${ports[0]}
export PGUSER=$user
export PG_BIN=$bin
export PATH=$bin:\$PATH
export CITUS_WORKER_PORTS="${ports[1]} ${ports[2]}"
ENV
    chmod 644 "$dir/env"
    echo "Citus running in $dir: coordinator on port ${ports[0]}, workers on ${ports[1]} and ${ports[2]}; . $dir/env to use it"
    ;;
stop)
    dir=${2:?usage: citus.sh stop DIR}
    for name in coordinator worker1 worker2; do
        if [ -f "$dir/$name/PG_VERSION" ]; then
            as_owner "$bin/pg_ctl" -D "$dir/$name" -m fast -w stop >/dev/null 2>&1 || true
        fi
    done
    echo "Citus in $dir stopped"
    ;;
*)
    echo "usage: citus.sh build|start|stop [DIR]" >&2
    exit 2
    ;;
esac
