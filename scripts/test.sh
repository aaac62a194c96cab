#!/usr/bin/env bash
# Installs what is needed, builds, and runs the whole test suite: unit tests,
# command-line tests and database tests (ctest starts its own throwaway
# PostgreSQL), then the same suite under AddressSanitizer and
# UndefinedBehaviorSanitizer, then each fuzz target for a bounded time.
#   scripts/test.sh            everything
#   QUICK=1 scripts/test.sh    the normal build only
#   FUZZ_SECONDS=N             seconds per fuzz target (default 60; 0 skips)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build
status=0
(cd build && ctest --output-on-failure -j2) || status=1
if [ -z "${QUICK:-}" ]; then
    bash scripts/setup.sh build-asan -DIDEMLOAD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --output-on-failure -j2) || status=1
    if [ "${FUZZ_SECONDS:-60}" != 0 ] && [ -f scripts/fuzz.sh ]; then
        bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}" || status=1
    fi
fi
if [ $status -eq 0 ]; then echo "test.sh: all suites passed"; else echo "test.sh: FAILURES above"; fi
exit $status
