#!/usr/bin/env bash
# The side outputs are part of the load (SPEC.md "Crash safety, reruns and
# concurrency"; issue 26, items 1, 2, 3, 4 and 8): after any crash and the
# same command run again, every rejected row is in the rejects file, every
# line of it is one JSON object, the --changes file holds exactly one line
# per change of the whole file; a file is never completed while its rejects
# are not on disk; a failure after a commit reports the committed chunks; a
# bill refused by its own count or header check leaves no resumable entry.
# Expectations come from the generator below and from the table (psql),
# never from idemload's own figures alone.
. "$(dirname "$0")/../lib.sh"
pg_use
RANDOM=20261201          # the kill points are drawn from this seed

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
ledger_status() { q "SELECT coalesce(string_agg(status || ':' || chunks, ','), 'none') FROM idemload_ledger"; }
fstatus() { json "$1" "r['files'][${2:-0}]['status']"; }
count() { q "SELECT count(*) FROM payment_callback WHERE deleted_at IS NULL"; }
backends_gone() {
    for _ in $(seq 1 200); do
        [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'idemload'")" -eq 0 ] && return 0
        sleep 0.05
    done
    return 1
}
msleep() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

# gen OUT N [BAD [CHUNK_ROWS]]: N rows written by the rules below (BAD 0:
# no row validation rejects), and OUT.expect (JSON): the lines rejected by
# validation (status "x"), those the CHECK constraint no_r refuses (keys
# R...), the keys inserted, the keys updated by a newer version in a later
# chunk of CHUNK_ROWS (default 200) records, and the keys whose last version
# has status 2 (a newer version in the same chunk is deduplicated instead).
gen() {
    python3 - "$1" "$2" "${3:-1}" "${4:-200}" <<'PY'
import json, sys
out, n, with_bad, cs = sys.argv[1], int(sys.argv[2]), sys.argv[3] == '1', int(sys.argv[4])
status2 = []

rows, bad, refused, inserted, updated = [], [], [], [], []
half = n // 2
for i in range(n):
    line = i + 2                      # the header is line 1
    if i % 97 == 13 and with_bad:
        rows.append(f'1,wechat,B{i},pay,x,"{{}}",2026-11-28T10:00:00Z'); bad.append(line)
    elif i % 89 == 7:
        rows.append(f'1,wechat,R{i},pay,1,"{{""i"":{i}}}",2026-11-28T10:00:00Z'); refused.append(line)
    elif i >= half and (i - half) % 10 == 3 and (i - half) % 97 != 13 and (i - half) % 89 != 7:
        k = i - half                  # a newer version of an earlier key
        rows.append(f'1,wechat,K{k},pay,2,"{{""v"":2}}",2026-11-28T11:00:00Z'); status2.append(f'K{k}')
        if k // cs != i // cs:
            updated.append(f'K{k}')
    else:
        rows.append(f'1,wechat,K{i},pay,1,"{{""v"":1}}",2026-11-28T10:00:00Z'); inserted.append(f'K{i}')
with open(out, 'w') as f:
    f.write('tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n')
    f.write('\n'.join(rows) + '\n')
json.dump({'bad': bad, 'refused': refused, 'inserted': inserted, 'updated': updated,
           'status2': status2},
          open(out + '.expect', 'w'))
PY
}

# side_outputs_hold NAME FILE REJECTS CHANGES REPORT: everything beside the
# table holds what the table holds.  Prints nothing; fails with a reason.
side_outputs_hold() {
    local name=$1 f=$2 rj=$3 ch=$4 rep=$5 table
    table=$(q "SELECT string_agg(out_trade_no || ':' || status, ' ' ORDER BY out_trade_no) FROM payment_callback WHERE deleted_at IS NULL")
    python3 - "$f" "$rj" "$ch" "$rep" "$table" <<'PY'
import json, sys
f, rjp, chp, repp, table = sys.argv[1:]
exp = json.load(open(f + '.expect'))
bad = []
def lines(p):
    out = []
    data = open(p, 'rb').read() if p else b''
    if data and not data.endswith(b'\n'):
        bad.append(f'{p}: the last line is torn: {data[-60:]!r}')
    for no, l in enumerate(data.split(b'\n')[:-1] if data else [], 1):
        try:
            o = json.loads(l)
            if not isinstance(o, dict):
                raise ValueError('not an object')
            out.append(o)
        except ValueError as e:
            bad.append(f'{p}: line {no} is not one JSON object ({e}): {l[:120]!r}')
    return out
rj, ch = lines(rjp), lines(chp)
tab = dict(kv.split(':') for kv in table.split()) if table else {}
# the table: every good key, updated keys at their newer status
want_tab = {k: '1' for k in exp['inserted']}
want_tab.update({k: '2' for k in exp['status2']})
if tab != want_tab:
    bad.append(f'the table: {len(tab)} keys, want {len(want_tab)}; '
               f'missing {sorted(set(want_tab) - set(tab))[:5]}, '
               f'other {sorted(k for k in tab if want_tab.get(k) != tab[k])[:5]}')
# rejects: exactly the expected lines, each at least once, of this file
want_rj = set(exp['bad']) | set(exp['refused'])
got_rj = {o.get('line') for o in rj}
if got_rj != want_rj:
    bad.append(f'rejects: lines missing {sorted(want_rj - got_rj)[:5]}, unexpected {sorted(got_rj - want_rj)[:5]}')
if any(o.get('file') != f for o in rj):
    bad.append('rejects: a line names another file')
refused_keys = {o['line'] for o in rj if 'no_r' in o.get('reason', '')}
if refused_keys != set(exp['refused']):
    bad.append(f'rejects: the CHECK refusals are {len(refused_keys)}, want {len(exp["refused"])}')
# changes: one inserted line per key of the table, one updated line per
# newer version, nothing else; "after" as the table holds it
ins = sorted(o['out_trade_no'] for o in ch if o['action'] == 'inserted')
upd = sorted(o['out_trade_no'] for o in ch if o['action'] == 'updated')
if ins != sorted(tab):
    bad.append(f'changes: {len(ins)} inserted lines ({len(set(ins))} keys), the table has {len(tab)} keys')
if upd != sorted(exp['updated']):
    bad.append(f'changes: {len(upd)} updated lines, want {len(exp["updated"])}')
if len(ch) != len(ins) + len(upd):
    bad.append(f'changes: {len(ch) - len(ins) - len(upd)} lines of another action')
last = {}
for o in ch:
    last[o['out_trade_no']] = str(o['after']['status'])
if any(last.get(k) != v for k, v in tab.items()):
    bad.append('changes: the last "after" of a key is not what the table holds')
# the report: ok, and its figures the whole file's
r = json.load(open(repp))
t, fr = r['totals'], r['files'][0]
if fr['status'] != 'ok':
    bad.append(f'report: status {fr["status"]}')
if t['inserted'] != len(tab) or t['updated'] != len(exp['updated']):
    bad.append(f'report: inserted {t["inserted"]} updated {t["updated"]}, the table says {len(tab)} {len(exp["updated"])}')
if t['rows_rejected'] != len(want_rj):
    bad.append(f'report: rows_rejected {t["rows_rejected"]}, want {len(want_rj)}')
for a in ('inserted', 'updated', 'stale'):
    if sum(1 for o in ch if o['action'] == a) != t[a]:
        bad.append(f'report: the {a} lines do not add up to its figure {t[a]}')
for b in bad:
    print('#   ' + b)
sys.exit(1 if bad else 0)
PY
}

# =====================================================================
# 1. Refused rows that cannot be written: the file stays unfinished
# =====================================================================
gen f1.csv 3000 1 1000
init_db so_full
q "ALTER TABLE payment_callback ADD CONSTRAINT no_r CHECK (out_trade_no NOT LIKE 'R%')" >/dev/null
run import -d "$DB" --chunk-rows 1000 --rejects /dev/full --changes ch1.ndjson --report full1.json f1.csv
eq "--rejects /dev/full: exit 3" 3 "$RC"
check "--rejects /dev/full: says the rejects file cannot be written" contains "$ERR" "cannot write rejects file /dev/full"
check "--rejects /dev/full: the file is not ok" jtrue full1.json 'r["files"][0]["status"] in ("failed", "partial")'
eq "--rejects /dev/full: the ledger does not hold it completed" "" "$(q "SELECT status FROM idemload_ledger WHERE status = 'completed'")"
run import -d "$DB" --chunk-rows 1000 --rejects /dev/full --changes ch1.ndjson --report full1b.json f1.csv
eq "--rejects /dev/full again: exit 3 again, never skipped" "3" "$RC"
run import -d "$DB" --chunk-rows 1000 --rejects rj1.ndjson --changes ch1.ndjson --report ok1.json f1.csv
eq "rerun with a writable rejects file: exit 1 (rows rejected)" 1 "$RC"
check "rerun: the rejects, the changes and the report hold what the table holds" \
    side_outputs_hold full f1.csv rj1.ndjson ch1.ndjson ok1.json
eq "rerun: the ledger holds it completed" "completed:3" "$(ledger_status)"

# Only rows the server refuses (no row validation rejects, which are
# written while reading): they are found inside the lane's transaction.
gen f2.csv 300 0 1000     # one chunk, 4 refused rows: less than a stdio buffer
init_db so_full_only_refused
q "ALTER TABLE payment_callback ADD CONSTRAINT no_r CHECK (out_trade_no NOT LIKE 'R%')" >/dev/null
run import -d "$DB" --chunk-rows 1000 --rejects /dev/full --changes ch2.ndjson --report full2.json f2.csv
eq "only refused rows, --rejects /dev/full: exit 3" 3 "$RC"
eq "only refused rows, --rejects /dev/full: not completed in the ledger" 0 "$(q "SELECT count(*) FROM idemload_ledger WHERE status = 'completed'")"
check "only refused rows, --rejects /dev/full: the file is not ok" jtrue full2.json 'r["files"][0]["status"] in ("failed", "partial")'
eq "only refused rows, --rejects /dev/full: the report counts what the table holds (lanes that committed)" "$(count)" "$(json full2.json 'r["totals"]["inserted"]')"
run import -d "$DB" --chunk-rows 1000 --rejects /dev/full --changes ch2.ndjson --report full2b.json f2.csv
eq "only refused rows, --rejects /dev/full again: exit 3, not skipped" "3 false" "$RC $(jtrue full2b.json 'r["files"][0]["status"] == "skipped"' && echo true || echo false)"
run import -d "$DB" --chunk-rows 1000 --rejects rj2.ndjson --changes ch2.ndjson --report ok2.json f2.csv
eq "only refused rows, rerun: exit 1" 1 "$RC"
check "only refused rows, rerun: every refused row in the rejects file, changes, report" \
    side_outputs_hold only_refused f2.csv rj2.ndjson ch2.ndjson ok2.json

# A chunk of refused rows at the disk's end: refused by the server, then
# the rejects file fails: nothing of that chunk commits.
init_db so_full_refused
q "ALTER TABLE payment_callback ADD CONSTRAINT no_r CHECK (out_trade_no NOT LIKE 'R%')" >/dev/null
{ echo "$H"; echo '1,wechat,K1,pay,1,"{}",2026-11-28T10:00:00Z'; echo '1,wechat,R2,pay,1,"{}",2026-11-28T10:00:00Z'; } >r2.csv
run import -d "$DB" --rejects /dev/full --report full3.json r2.csv
eq "a refused row, /dev/full: exit 3" 3 "$RC"
eq "a refused row, /dev/full: its chunk rolled back (nothing of it loaded)" 0 "$(count)"
eq "a refused row, /dev/full: the report says the same" 0 "$(json full3.json 'r["totals"]["inserted"]')"
eq "a refused row, /dev/full: not completed" 0 "$(q "SELECT count(*) FROM idemload_ledger WHERE status = 'completed'")"
run import -d "$DB" --rejects rj3.ndjson --report ok3.json r2.csv
eq "a refused row, rerun: exit 1, K1 loaded, R2 in the rejects file" "1 1 3" "$RC $(count) $(python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["line"]) for l in open(sys.argv[1])))' rj3.ndjson)"

# =====================================================================
# 2. A failure after a commit reports the committed chunks (item 4)
# =====================================================================
gen f4.csv 12000 1 5000
init_db so_after_commit
q "ALTER TABLE payment_callback ADD CONSTRAINT no_r CHECK (out_trade_no NOT LIKE 'R%')" >/dev/null
run import -d "$DB" --chunk-rows 5000 --rejects rj4.ndjson --changes /dev/full --report full4.json f4.csv
eq "--changes /dev/full: exit 3" 3 "$RC"
eq "--changes /dev/full: the file is partial" partial "$(fstatus full4.json)"
n4=$(count)
check "--changes /dev/full: a chunk committed before the failure" test "$n4" -gt 0
eq "--changes /dev/full: the report counts what the table holds" "$n4" "$(json full4.json 'r["totals"]["inserted"]')"
eq "--changes /dev/full: and as many chunks as the ledger" "$(q "SELECT count(DISTINCT chunk_no) FROM idemload_ledger_chunk")" "$(json full4.json 'r["totals"]["chunks"]')"
check "--changes /dev/full: the error names the changes file, not the database" jtrue full4.json '"changes file" in r["files"][0]["error"] and "database" not in r["files"][0]["error"]'
eq "--changes /dev/full: not completed" "loading:1" "$(ledger_status)"
run import -d "$DB" --chunk-rows 5000 --rejects rj4.ndjson --changes ch4.ndjson --report ok4.json f4.csv
eq "rerun: exit 1 (rows rejected)" 1 "$RC"
check "rerun: resumed after chunk 1" jtrue ok4.json '"resumed after chunk 1" in (r["files"][0].get("note") or "")'
check "rerun: the changes of the whole file (chunk 1's from the ledger), rejects, report" \
    side_outputs_hold after_commit f4.csv rj4.ndjson ch4.ndjson ok4.json
eq "completed: the ledger keeps no --changes lines" 0 "$(q "SELECT count(*) FROM idemload_ledger_chunk WHERE changes IS NOT NULL")"

# =====================================================================
# 3. kill -9 at random points, the same command again (items 1, 2, 3)
# =====================================================================
gen k.csv 6000
# kill_runs NAME JOBS KILLS: KILLS times (at least; bounded in time): a
# fresh table, the load killed after a random delay, the same command again,
# then everything beside the table checked against it.
kill_runs() {
    local name=$1 jobs=$2 kills=$3 i=0 t0 clean_ms ms torn=0 cut=0 resumed=0 failed=0
    init_db "so_$name"
    q "ALTER TABLE payment_callback ADD CONSTRAINT no_r CHECK (out_trade_no NOT LIKE 'R%')" >/dev/null
    local cmd=(import -d "$DB" --jobs "$jobs" --chunk-rows 200 --rejects rj.ndjson --changes ch.ndjson --report rep.json k.csv)
    t0=$(date +%s%N)
    run "${cmd[@]}"
    clean_ms=$((($(date +%s%N) - t0) / 1000000))
    eq "$name: an uninterrupted load: exit 1" 1 "$RC"
    check "$name: an uninterrupted load: side outputs hold" side_outputs_hold "$name-clean" k.csv rj.ndjson ch.ndjson rep.json
    local deadline=$(($(date +%s) + 400))
    while [ $i -lt "$kills" ] && [ "$(date +%s)" -lt $deadline ]; do
        i=$((i + 1))
        q "TRUNCATE payment_callback; DROP TABLE IF EXISTS idemload_ledger_chunk, idemload_ledger" >/dev/null
        rm -f rj.ndjson ch.ndjson rep.json
        ms=$((RANDOM % (clean_ms * 9 / 10 + 1)))
        "$IDEMLOAD" "${cmd[@]}" >/dev/null 2>"$name.kill.err" &
        local pid=$!
        msleep $ms
        kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
        backends_gone || fail "$name #$i: the killed client's session did not end"
        if [ -s rj.ndjson ] && [ "$(tail -c 1 rj.ndjson | od -An -c | tr -d ' ')" != '\n' ]; then
            torn=$((torn + 1))
        elif [ -s rj.ndjson ] && [ $((i % 3)) -eq 0 ]; then
            # As a crash in the middle of a write leaves it.
            printf '{"file":"k.csv","li' >>rj.ndjson; cut=$((cut + 1))
        fi
        local before_chunks=0 done_before=0
        if table_exists idemload_ledger_chunk; then
            before_chunks=$(q "SELECT count(*) FROM idemload_ledger_chunk")
            done_before=$(q "SELECT count(*) FROM idemload_ledger WHERE status = 'completed'")
        fi
        [ "$before_chunks" -gt 0 ] && resumed=$((resumed + 1))
        run "${cmd[@]}"
        if [ "$done_before" -eq 1 ]; then
            # Killed after the file was completed: the rerun skips it, and
            # the killed run's rejects must all be there already.
            eq "$name #$i (killed once completed): skipped" "0 skipped" "$RC $(fstatus rep.json)"
            python3 - <<'PY' || { fail "$name #$i: the rejects of a completed file"; failed=$((failed + 1)); }
import json, sys
exp = json.load(open('k.csv.expect'))
got = {json.loads(l)['line'] for l in open('rj.ndjson')}
sys.exit(0 if got == set(exp['bad']) | set(exp['refused']) else 1)
PY
            continue
        fi
        if [ "$RC" -ne 1 ]; then
            fail "$name #$i (kill after $ms ms): the rerun: exit $RC: $(head -c 300 "$ERR")"; failed=$((failed + 1)); continue
        fi
        if ! side_outputs_hold "$name-$i" k.csv rj.ndjson ch.ndjson rep.json; then
            fail "$name #$i (kill after $ms ms, $before_chunks lane rows committed): the side outputs do not hold what the table holds"
            failed=$((failed + 1))
        fi
    done
    echo "# $name: $i kills over ${clean_ms} ms loads: $resumed resumed a committed chunk, $torn torn rejects lines, $cut fragments appended"
    check "$name: at least $kills kills" test $i -ge "$kills"
    check "$name: some kills fell after a commit (resumed)" test $resumed -ge 3
    eq "$name: every rerun's rejects, changes and report hold what the table holds" 0 "$failed"
}
# 12 kills each; 8 in the ThreadSanitizer build, whose slower client checks
# the same code paths for thread errors rather than more kill points.
kills=12
[ -n "${IDEMLOAD_INSTRUMENTED:-}" ] && kills=8
kill_runs one_lane 1 $kills
kill_runs two_lanes 2 $kills

# =====================================================================
# 4. A bill refused by its own count or header check (item 8)
# =====================================================================
python3 "$SRC/tests/make_bills.py" . >/dev/null || fail "make_bills.py failed"
init_db so_bills
for t in "count:wechat-trade:wechat-badcount.csv" "header:wechat-trade:stripe-balance.csv"; do
    IFS=: read -r what prof f <<<"$t"
    for round in 1 2 3; do
        run import -d "$DB" --profile "$prof" --set tenant_id=7 --rejects rjb.ndjson --report b.json "$f"
        eq "$what-refused bill, run $round: exit 3" 3 "$RC"
        eq "$what-refused bill, run $round: failed" failed "$(fstatus b.json)"
        eq "$what-refused bill, run $round: no ledger entry" 0 "$(q "SELECT count(*) FROM idemload_ledger WHERE digest = '$(sha256sum "$f" | cut -d' ' -f1)'")"
        run status -d "$DB"
        check "$what-refused bill, run $round: status calls nothing interrupted" sh -c "! grep -qi 'interrupted:\|resumes it' '$OUT'"
    done
done
eq "refused bills: nothing loaded" 0 "$(count)"
finish
