#!/usr/bin/env bash
# Starts or stops the throwaway PostgreSQL the database tests share.
# usage: pg_fixture.sh start|stop   (IDEMLOAD_PGDIR: where it lives)
# The server listens on a Unix socket only (no TCP port to collide with);
# as root it runs as the postgres system user, since initdb refuses root.
set -euo pipefail
dir=${IDEMLOAD_PGDIR:?IDEMLOAD_PGDIR not set}
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../../scripts/pg_local.sh" "$1" "$dir"
