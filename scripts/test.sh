#!/usr/bin/env bash
# Installs what is needed, builds, and runs the whole test suite: unit tests,
# command-line tests and database tests (ctest starts its own throwaway
# PostgreSQL), then the same suite under AddressSanitizer and
# UndefinedBehaviorSanitizer, then the tests of the threads under
# ThreadSanitizer (clang, and gzip inflated by zlib only: the build without
# ISA-L; tests/CMakeLists.txt's TSAN_RUN), then each fuzz target for a
# bounded time.
#   scripts/test.sh            everything
#   QUICK=1 scripts/test.sh    the normal build only
#   FUZZ_SECONDS=N             seconds per fuzz target (default 20; 0 skips)
# The last line is "N passed, M failed": ctest's tests of both builds plus
# one per fuzz target (fuzz/fuzz_*.c: a target that did not run is a
# failure); the line before it says what QUICK or FUZZ_SECONDS=0 skipped,
# and the "time:" lines before that how long each build, each build's
# layers (unit, cli, install, db, citus) and fuzzing took, and the whole.
set -uo pipefail
cd "$(dirname "$0")/.."
suite_start=$(date +%s)
bash scripts/setup.sh build || { echo "0 passed, 1 failed"; exit 1; }
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

timings=()
# layer_times: each layer's (unit, cli, install, db, citus) summed test
# time from ctest's log (under -j2 two tests run at once, so the sums add
# up to about twice the wall time).
layer_times() {
    awk '/Test +#[0-9]+: [a-z]+\// {
             split($0, a, ": "); split(a[2], b, "/"); l = b[1]
             if (match($0, /[0-9.]+ sec/)) { t[l] += substr($0, RSTART, RLENGTH - 4) }
         }
         END { for (l in t) printf "%s %.0fs, ", l, t[l] }' "$log" | sed 's/, $//'
}
# Runs ctest in build dir $1 (extra env in the rest), adding up its counts
# and recording its time.
run_ctest() {
    local dir=$1 t0
    shift
    t0=$(date +%s)
    (cd "$dir" && env "$@" ctest --output-on-failure -j2) 2>&1 | tee "$log"
    timings+=("$dir: $(($(date +%s) - t0))s wall (tests' own times by layer: $(layer_times))")
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

skipped=()
run_ctest build CTEST_DUMMY=1
if [ -z "${QUICK:-}" ]; then
    # (The sanitizer options, exit codes 86/87 on a finding, are set per
    # test by tests/CMakeLists.txt.)
    t0=$(date +%s)
    if bash scripts/setup.sh build-asan -DIDEMLOAD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug; then
        timings+=("build-asan: built in $(($(date +%s) - t0))s")
        run_ctest build-asan CTEST_DUMMY=1
    else
        failed=$((failed + 1))
    fi
    # Threads checked by a tool: the lanes, the reader thread and the log
    # must share nothing unguarded (a race exits 88 and fails its test).
    # It runs the unit tests and the tests that start, share and stop the
    # threads (TSAN_RUN in tests/CMakeLists.txt), and inflates gzip with
    # zlib alone (IDEMLOAD_ISAL=OFF), so the loads of the build without
    # ISA-L are tested too.
    t0=$(date +%s)
    if bash scripts/setup.sh build-tsan -DIDEMLOAD_TSAN=ON -DCMAKE_C_COMPILER=clang \
            -DCMAKE_BUILD_TYPE=Debug -DIDEMLOAD_ISAL=OFF; then
        timings+=("build-tsan: built in $(($(date +%s) - t0))s")
        run_ctest build-tsan CTEST_DUMMY=1
    else
        failed=$((failed + 1))
    fi
    secs=${FUZZ_SECONDS:-20}
    shopt -s nullglob
    targets=(fuzz/fuzz_*.c)
    shopt -u nullglob
    if [ "$secs" != 0 ]; then
        t0=$(date +%s)
        bash scripts/fuzz.sh "$secs" 2>&1 | tee "$log"
        fuzz_rc=${PIPESTATUS[0]}
        timings+=("fuzzing (${#targets[@]} targets, ${secs}s each, and their build): $(($(date +%s) - t0))s wall")
        # A target ran to the end when fuzz.sh printed its final stats.
        fuzz_ok=$(grep -c '^stat::number_of_executed_units' "$log")
        fuzz_bad=$((${#targets[@]} - fuzz_ok))
        if [ "$fuzz_rc" -ne 0 ] && [ "$fuzz_bad" -le 0 ]; then
            fuzz_bad=1     # failed outside any target (the build, say)
        fi
        echo "fuzzing: $fuzz_ok of ${#targets[@]} targets ran clean, fuzz.sh exit $fuzz_rc"
        passed=$((passed + fuzz_ok))
        failed=$((failed + fuzz_bad))
    else
        skipped+=("fuzzing (FUZZ_SECONDS=0: ${#targets[@]} targets not run)")
    fi
else
    skipped+=("the ASan+UBSan and ThreadSanitizer builds' suites and fuzzing (QUICK=1)")
fi
# How long each part took (builds included in the whole), then the whole.
for t in "${timings[@]}"; do echo "time: $t"; done
echo "time: the whole suite: $(($(date +%s) - suite_start))s wall"
if [ ${#skipped[@]} -gt 0 ]; then
    echo "skipped: $(IFS=';'; echo "${skipped[*]}" | sed 's/;/; /g')"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
