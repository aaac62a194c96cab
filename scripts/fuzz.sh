#!/usr/bin/env bash
# fuzz.sh [SECONDS] - build the libFuzzer targets in build-fuzz/ (clang, ASan
# and UBSan) and run each for SECONDS (default 60).  Exits non-zero when a
# target crashes, leaks, times out or fails an invariant; the input that did
# it is kept as build-fuzz/artifacts/<target>/crash-*.
#
# Seeds: fuzz/corpus/<target>/ (small hand-made inputs, kept in git; for
# profile and profile_reader, the built-in profiles and synthetic bills) plus,
# when samples/ holds statement files, their first 64 KiB (and for the
# timestamp and JSON targets, received_at values and NDJSON lines taken from
# them).  What a run discovers goes to build-fuzz/corpus/<target>/, which
# later runs start from; the source tree is never written to.
set -euo pipefail

secs="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-fuzz"
# One target per fuzz/fuzz_<target>.c (scripts/test.sh counts them alike).
targets=()
for src in "$root"/fuzz/fuzz_*.c; do
    t=${src##*/fuzz_}
    targets+=("${t%.c}")
done

cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DIDEMLOAD_FUZZ=ON \
      -DIDEMLOAD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

# Seeds from samples/: the reader targets take one option byte first (0: ',').
seeds="$build/seeds"
rm -rf "$seeds"
mkdir -p "${targets[@]/#/$seeds/}"
shopt -s nullglob
for f in "$root"/samples/*; do
    [ -f "$f" ] || continue
    base="$(basename "$f")"
    # channel bills seed the profile reader; its option byte picks the profile
    case "$base" in
        bill-wechat-trade-*) printf '\0' ;; bill-alipay-trade-*) printf '\1' ;;
        bill-stripe-balance-*) printf '\2' ;; bill-paypal-stl-*) printf '\3' ;;
        *) false ;;
    esac >"$seeds/profile_reader/$base" && { head -c 65536 "$f" >>"$seeds/profile_reader/$base"; continue; }
    rm -f "$seeds/profile_reader/$base"
    case "$base" in
        *.csv|*.csv.gz) t=csv_reader ;;
        *.ndjson|*.ndjson.gz|*.jsonl|*.jsonl.gz) t=ndjson_reader ;;
        *) continue ;;
    esac
    # plain text (gzip samples decompressed), at most 64 KiB of it
    case "$base" in *.gz) text() { gzip -dc "$f" 2>/dev/null | head -c 65536 || true; } ;;
                    *) text() { head -c 65536 "$f"; } ;; esac
    # a small gzip sample goes in whole (to the gzip source target too, whose
    # option byte 0 takes the file as it is); a big one as the start of its text
    if [[ "$base" == *.gz && $(stat -c %s "$f") -le 65535 ]]; then
        { printf '\0'; cat "$f"; } > "$seeds/$t/$base"
        { printf '\0'; cat "$f"; } > "$seeds/gzip_source/$base"
    else
        { printf '\0'; text; } > "$seeds/$t/$base"
    fi
    text | grep -aoE '[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.,]+ ?([Zz]|[+-][0-9:]{2,5})?' \
        | sort -u | head -n 20 | nl -ba | while read -r i ts; do
            printf '%s' "$ts" > "$seeds/timestamp/$base.$i"
        done || true
    if [ "$t" = ndjson_reader ]; then
        text | head -n 20 | nl -ba | while read -r i line; do
            printf '%s' "$line" > "$seeds/json_scan/$base.$i"
        done || true
    fi
done

# The fast path's differential target reads CSV like the reader's target.
cp -R "$seeds/csv_reader/." "$seeds/csv_fastpath/"

# fuzz_one T: one target for $secs seconds; its summary goes to
# $build/fuzz_T.result, and its status is the target's.
fuzz_one() {
    local t=$1 corpus="$build/corpus/$1" artifacts="$build/artifacts/$1"
    local log="$build/fuzz_$1.log" out="$build/fuzz_$1.result"
    mkdir -p "$corpus" "$artifacts"
    echo "== fuzz_$t for ${secs}s (log: $log)" >"$out"
    if "$build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2560 \
            -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" \
            "$corpus" "$root/fuzz/corpus/$t" "$seeds/$t" >"$log" 2>&1; then
        grep -E '^stat::number_of_executed_units|^Done' "$log" >>"$out" || true
    else
        echo "fuzz_$t FAILED:" >>"$out"
        grep -E 'ERROR|invariant failed|SUMMARY|Test unit written' "$log" | head -n 20 >>"$out" || true
        return 1
    fi
}

# One target per core at a time (each libFuzzer run is single-threaded),
# the summaries printed in the targets' order whatever order they end in.
jobs=${FUZZ_JOBS:-$(nproc)}
status=0
pids=()
for ((i = 0; i < ${#targets[@]}; i++)); do
    fuzz_one "${targets[i]}" &
    pids[i]=$!
    if (((i + 1) % jobs == 0 || i + 1 == ${#targets[@]})); then
        for ((j = i + 1 - ((i % jobs) + 1); j <= i; j++)); do
            wait "${pids[j]}" || status=1
            cat "$build/fuzz_${targets[j]}.result"
        done
    fi
done
exit "$status"
