# Helpers of the tests against a Citus cluster (sourced after tests/lib.sh).
# citus_use: the coordinator of the fixture cluster (PGHOST, PGPORT, PGUSER).
citus_use() {
    local env=${IDEMLOAD_CITUSDIR:?}/env
    [ -f "$env" ] || { echo "no Citus cluster: $env missing (run via ctest)"; exit 1; }
    # shellcheck disable=SC1090
    . "$env"
}
# citus_new_db NAME: (re)creates database NAME on the coordinator and both
# workers, with the citus extension and the workers added; exports
# PGDATABASE and CDB (a URI of the coordinator).
citus_new_db() {
    citus_use
    local port
    for port in $PGPORT $CITUS_WORKER_PORTS; do
        dropdb -p "$port" --if-exists --force "$1" >/dev/null 2>&1
        createdb -p "$port" "$1" || { echo "createdb $1 on port $port failed"; exit 1; }
        psql -X -q -p "$port" -d "$1" -c "CREATE EXTENSION citus" || exit 1
    done
    psql -X -q -d "$1" -c "SELECT citus_set_coordinator_host('$PGHOST', $PGPORT)" >/dev/null || exit 1
    for port in $CITUS_WORKER_PORTS; do
        psql -X -q -d "$1" -c "SELECT citus_add_node('$PGHOST', $port)" >/dev/null || exit 1
    done
    export PGDATABASE=$1
    CDB="postgresql:///$1?host=$PGHOST&port=$PGPORT&user=$PGUSER"
}
