#!/usr/bin/env bash
# Starts or stops the local Citus cluster (a coordinator and two workers)
# the tests against a distributed target share; builds and installs Citus
# from ../shared/citus/ first when it is missing (scripts/citus.sh).
# usage: citus_fixture.sh start|stop   (IDEMLOAD_CITUSDIR: where it lives)
set -euo pipefail
dir=${IDEMLOAD_CITUSDIR:?IDEMLOAD_CITUSDIR not set}
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../../scripts/citus.sh" "$1" "$dir"
