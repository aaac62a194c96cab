#!/usr/bin/env bash
# Installs what is needed, builds, and runs the whole test suite: unit tests,
# command-line tests and database tests (ctest starts its own throwaway
# PostgreSQL), then the same suite under AddressSanitizer and
# UndefinedBehaviorSanitizer, then each fuzz target for a bounded time.
#   scripts/test.sh            everything
#   QUICK=1 scripts/test.sh    the normal build only
#   FUZZ_SECONDS=N             seconds per fuzz target (default 60; 0 skips)
# The last line is "N passed, M failed": ctest's tests of both builds plus
# one per fuzz target.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh build || { echo "0 passed, 1 failed"; exit 1; }
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Runs ctest in build dir $1 (extra env in the rest), adding up its counts.
run_ctest() {
    local dir=$1
    shift
    (cd "$dir" && env "$@" ctest --output-on-failure -j2) 2>&1 | tee "$log"
    local line total bad
    line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1)
    if [ -z "$line" ]; then
        failed=$((failed + 1))
        return
    fi
    total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
    bad=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<<"$line")
    passed=$((passed + total - bad))
    failed=$((failed + bad))
}

run_ctest build CTEST_DUMMY=1
if [ -z "${QUICK:-}" ]; then
    if bash scripts/setup.sh build-asan -DIDEMLOAD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug; then
        run_ctest build-asan ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
    else
        failed=$((failed + 1))
    fi
    secs=${FUZZ_SECONDS:-60}
    if [ "$secs" != 0 ]; then
        bash scripts/fuzz.sh "$secs" 2>&1 | tee "$log"
        fuzz_failed=$(grep -c 'FAILED:' "$log")
        fuzz_run=$(grep -c '^== fuzz_' "$log")
        [ "$fuzz_run" -eq 0 ] && fuzz_failed=1
        passed=$((passed + fuzz_run - fuzz_failed))
        failed=$((failed + fuzz_failed))
    fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
