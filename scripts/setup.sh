#!/usr/bin/env bash
# Installs what idemload needs (Debian packages) and builds it.
#   scripts/setup.sh [BUILD_DIR] [extra cmake args...]
# Works as root or as a user with sudo; skips apt when everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true

packages=(build-essential cmake pkg-config libpq-dev libcsv-dev libjansson-dev zlib1g-dev libssl-dev
          libcurl4-openssl-dev   # objects in S3-compatible storage (src/input/s3.c)
          libxml2-dev            # camt.053 bank statements (src/settle/bank_camt.c)
          libisal-dev            # ISA-L's igzip: the faster gzip inflater (CMake IDEMLOAD_ISAL)
          libcmocka-dev postgresql-15 postgresql-client-15 python3 clang libclang-rt-14-dev
          lintian man-db file    # the package and man page tests
          strace                 # kills a run at each fsync and rename (tests/cli/test_outputs_whole.sh)
          tzdata                 # IANA zones for --timezone (and their tests)
          chromium)              # renders the --html report in tests/cli/test_html.sh
# The object storage tests run s3rver (npm) on Node.js; a machine with a
# Node.js of its own (and its npm) keeps it.
command -v npm >/dev/null || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q
    # The postgresql package would start a system-wide cluster; we run our own.
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S . -B "$build" -DIDEMLOAD_WERROR=$werror "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
echo "setup: built $build/idemload"
