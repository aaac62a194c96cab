#!/usr/bin/env bash
# Final statuses do not depend on order (SPEC.md): a version holding a final
# status makes the key's status final even when it is older than the active
# row or than another row of its chunk, while payload and received_at stay
# the newest version's.  So the order of files, the chunk size and the
# number of concurrent loaders never decide a key's final status; and with
# --on-conflict nothing the chunk size never changes the table either.
# Every table is compared with a model computed here, not with another run.
. "$(dirname "$0")/../lib.sh"
pg_use

HDR='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
# state: the active rows as "key|status|payload|epoch", in key order.
state() {
    q "SELECT concat_ws('|', tenant_id, channel, out_trade_no, callback_type, status, payload::text, extract(epoch from received_at)::bigint) FROM payment_callback WHERE deleted_at IS NULL ORDER BY tenant_id, channel COLLATE \"C\", out_trade_no COLLATE \"C\", callback_type COLLATE \"C\""
}
# snap: every row version of the table (a write shows as a new xmin/ctid).
snap() { q "SELECT string_agg(concat_ws('|', id, xmin, ctid, status), ',' ORDER BY id) FROM payment_callback"; }
fig() { json "$1" '" ".join("%s=%s" % (k, r["totals"][k]) for k in ("inserted","updated","unchanged","stale","existing","rows_deduplicated"))'; }

printf '%s\n1,wx,O1,pay,2,"{""v"": 1}",2026-01-01T10:00:00Z\n' "$HDR" >older_final.csv
printf '%s\n1,wx,O1,pay,1,"{""v"": 2}",2026-01-01T11:00:00Z\n' "$HDR" >newer_nonfinal.csv
WANT='1|wx|O1|pay|2|{"v": 2}|1767265200'

# =====================================================================
# 1. Two one-row files in both orders give the same row
# =====================================================================
new_db fs_ab; run init -d "$DB"; eq "init" 0 $RC
run import -d "$DB" --report ab1.json older_final.csv; eq "older final first: exit 0" 0 $RC
run import -d "$DB" --report ab2.json newer_nonfinal.csv; eq "then newer: exit 0" 0 $RC
eq "older final, then newer: final status, newer payload" "$WANT" "$(state)"
eq "the newer version counts as updated" "inserted=0 updated=1 unchanged=0 stale=0 existing=0 rows_deduplicated=0" "$(fig ab2.json)"

new_db fs_ba; run init -d "$DB"; eq "init" 0 $RC
run import -d "$DB" newer_nonfinal.csv; eq "newer first: exit 0" 0 $RC
before=$(snap)
run import -d "$DB" --dry-run --report ba_dry.json older_final.csv; eq "dry run of the older final: exit 0" 0 $RC
eq "dry run: the status change counts as updated" "inserted=0 updated=1 unchanged=0 stale=0 existing=0 rows_deduplicated=0" "$(fig ba_dry.json)"
eq "dry run: the table is untouched (same row versions)" "$before" "$(snap)"
run import -d "$DB" --report ba.json older_final.csv; eq "then the older final: exit 0" 0 $RC
eq "newer, then older final: final status, newer payload" "$WANT" "$(state)"
eq "the older final version counts as updated, not stale" "inserted=0 updated=1 unchanged=0 stale=0 existing=0 rows_deduplicated=0" "$(fig ba.json)"
before=$(snap)
run import -d "$DB" --force --report again.json older_final.csv newer_nonfinal.csv
eq "both again: exit 0" 0 $RC
eq "both again: nothing changes (stale and unchanged)" "inserted=0 updated=0 unchanged=1 stale=1 existing=0 rows_deduplicated=0" "$(fig again.json)"
eq "both again: no row written" "$before" "$(snap)"
# A final status of the active row stays against another final one: an
# older version's (stale) ...
printf '%s\n1,wx,O1,pay,3,"{""v"": 3}",2026-01-01T09:00:00Z\n' "$HDR" >oldest_other_final.csv
run import -d "$DB" --final-status 2,3 --report other.json oldest_other_final.csv
eq "an older version with another final status: exit 0" 0 $RC
eq "an active final status stays (stale)" "inserted=0 updated=0 unchanged=0 stale=1 existing=0 rows_deduplicated=0" "$(fig other.json)"
eq "the table keeps its final status 2" "$WANT" "$(state)"
# ... and a newer version's: its payload and received_at replace the row's
# (updated), the status stays the first final one to reach the table.
printf '%s\n1,wx,O1,pay,3,"{""v"": 4}",2026-01-01T12:00:00Z\n' "$HDR" >newer_other_final.csv
run import -d "$DB" --final-status 2,3 --report newer_other.json newer_other_final.csv
eq "a newer version with another final status: exit 0" 0 $RC
eq "a newer version with another final status: updated" "inserted=0 updated=1 unchanged=0 stale=0 existing=0 rows_deduplicated=0" "$(fig newer_other.json)"
eq "the newer payload and instant, the final status 2 kept (not 3)" \
    "1|wx|O1|pay|2|{\"v\": 4}|$(date -u -d 2026-01-01T12:00:00Z +%s)" "$(state)"

# =====================================================================
# 2. Both versions inside one file, in either order, at any chunk size
# =====================================================================
{ echo "$HDR"; tail -n 1 older_final.csv; tail -n 1 newer_nonfinal.csv; } >one_oldfirst.csv
{ echo "$HDR"; tail -n 1 newer_nonfinal.csv; tail -n 1 older_final.csv; } >one_newfirst.csv
for f in one_oldfirst one_newfirst; do
    for cr in 20000 1; do
        new_db fs_one; run init -d "$DB"
        run import -d "$DB" --chunk-rows $cr --report $f.$cr.json $f.csv
        eq "$f, --chunk-rows $cr: exit 0" 0 $RC
        eq "$f, --chunk-rows $cr: final status, newer payload" "$WANT" "$(state)"
    done
    eq "$f in one chunk: one row deduplicated" "inserted=1 updated=0 unchanged=0 stale=0 existing=0 rows_deduplicated=1" "$(fig $f.20000.json)"
done
# A dry run on a table that holds the newer version sees the update.
new_db fs_dry; run init -d "$DB"
run import -d "$DB" newer_nonfinal.csv
before=$(snap)
run import -d "$DB" --dry-run --report one_dry.json one_oldfirst.csv
eq "dry run of both versions on the newer one: the status would change" "inserted=0 updated=1 unchanged=0 stale=0 existing=0 rows_deduplicated=1" "$(fig one_dry.json)"
eq "dry run: no row version changed" "$before" "$(snap)"

# =====================================================================
# 3. --on-conflict nothing: the first row in file order, any chunk size
# =====================================================================
{ echo "$HDR"
  echo '1,wx,N1,pay,0,"{""v"": 10}",2026-01-01T10:00:00Z'
  echo '1,wx,N1,pay,1,"{""v"": 11}",2026-01-01T11:00:00Z'
  echo '1,wx,N2,pay,1,"{""v"": 20}",2026-01-01T11:00:00Z'
  echo '1,wx,N2,pay,2,"{""v"": 21}",2026-01-01T10:00:00Z'; } >nothing.csv
for cr in 20000 1 2 7; do
    new_db fs_nothing; run init -d "$DB"
    run import -d "$DB" --on-conflict nothing --chunk-rows $cr nothing.csv
    eq "--on-conflict nothing, --chunk-rows $cr: exit 0" 0 $RC
    eq "--on-conflict nothing, --chunk-rows $cr: the first version of each key" \
        "$(printf '1|wx|N1|pay|0|{"v": 10}|1767261600\n1|wx|N2|pay|1|{"v": 20}|1767265200')" "$(state)"
done

# =====================================================================
# 4. Property: random versions, any file order, chunk size and concurrency
# =====================================================================
# gen.py writes files f0..f2 (the versions of 300 keys, scattered and
# shuffled), model.txt (the expected state, computed independently: the
# latest version's payload and instant, status 2 if any version was 2) and
# first.txt (--on-conflict nothing over all.csv: the first row in file order).
cat >gen.py <<'EOF'
import csv, io, random, sys
rnd = random.Random(int(sys.argv[1]))
HDR = "tenant_id,channel,out_trade_no,callback_type,status,payload,received_at"
rows, model = [], []
base = 1767225600  # 2026-01-01T00:00:00Z
for k in range(300):
    key = (1 + k % 3, "wx" if k % 2 else "ali", "P%04d" % k, "pay")
    instants = rnd.sample(range(0, 40), rnd.randint(1, 4))
    versions = []
    for i, t in enumerate(instants):
        versions.append((t, rnd.choice((0, 1, 2)), "%d.%d" % (k, i)))
    # Some equal instants: a copy of a version at the same instant, either
    # identical or carrying the final status (order cannot matter then).
    if rnd.random() < 0.3:
        t, st, p = rnd.choice(versions)
        versions.append((t, rnd.choice((st, 2)), p))
    top = max(v[0] for v in versions)
    latest = [v for v in versions if v[0] == top]
    status = 2 if any(v[1] == 2 for v in versions) else latest[0][1]
    model.append((key, "%d|%s|%s|%s|%d|{\"v\": \"%s\"}|%d" % (key + (status, latest[0][2], base + top * 60))))
    for t, st, p in versions:
        rows.append((key, st, p, t))
rnd.shuffle(rows)
def line(r):
    key, st, p, t = r
    ts = "2026-01-01T%02d:%02d:00+00:00" % divmod(t, 60)
    return '%d,%s,%s,%s,%d,"{""v"": ""%s""}",%s' % (key + (st, p, ts))
files = [[], [], []]
for r in rows:
    files[rnd.randrange(3)].append(r)
for i, f in enumerate(files):
    with open("f%d.csv" % i, "w") as out:
        out.write(HDR + "\n" + "".join(line(r) + "\n" for r in f))
with open("all.csv", "w") as out:
    out.write(HDR + "\n" + "".join(line(r) + "\n" for r in rows))
first = {}
for key, st, p, t in rows:
    first.setdefault(key, "%d|%s|%s|%s|%d|{\"v\": \"%s\"}|%d" % (key + (st, p, base + t * 60)))
def order(k):
    return (k[0], k[1].encode(), k[2].encode(), k[3].encode())
open("model.txt", "w").write("\n".join(m for k, m in sorted(model, key=lambda km: order(km[0]))) + "\n")
open("first.txt", "w").write("\n".join(first[k] for k in sorted(first, key=order)) + "\n")
EOF
python3 gen.py 11 || fail "the generator ran"
check "the model holds 300 keys" test "$(wc -l <model.txt)" -eq 300
check "the model has final and non-final keys" bash -c 'grep -q "|2|{" model.txt && grep -q "|[01]|{" model.txt'
perms=("f0 f1 f2" "f0 f2 f1" "f1 f0 f2" "f1 f2 f0" "f2 f0 f1" "f2 f1 f0")
sizes=(20000 1 7 20000 3 50)
jobs=(2 1 3 4 2 1)
for i in 0 1 2 3 4 5; do
    new_db fs_perm; run init -d "$DB"
    order=${perms[$i]}
    for f in $order; do
        run import -d "$DB" -j "${jobs[$i]}" --chunk-rows "${sizes[$i]}" $f.csv
        [ "$RC" -eq 0 ] || fail "order $order: $f exit $RC"
    done
    state >perm$i.txt
    check "files in order $order, --chunk-rows ${sizes[$i]}, -j ${jobs[$i]}: the table equals the model" \
        cmp -s model.txt perm$i.txt
done
# 1 to 4 loaders at once, each going through the files in its own order.
for n in 2 4; do
    new_db fs_conc$n; run init -d "$DB"
    pids=()
    names=""
    gate_close 2727
    for l in $(seq 1 $n); do
        order=${perms[$(( (l * 2 + n) % 6 ))]}
        ( for f in $order; do PGAPPNAME=loader$l "$IDEMLOAD" import -d "$DB" -q --force --chunk-rows $((l * 5)) $f.csv \
              >/dev/null 2>>conc.err || exit 1; done ) &
        pids+=($!)
        names="$names loader$l"
    done
    gate_wait 2727 "${names# }" "${pids[@]}"
    gate_open 2727
    rcs=0
    for p in "${pids[@]}"; do wait "$p" || rcs=$((rcs + 1)); done
    eq "$n concurrent loaders: all exit 0" 0 $rcs
    state >conc$n.txt
    check "$n concurrent loaders: the table equals the model" cmp -s model.txt conc$n.txt
done
# --on-conflict nothing: one file at chunk sizes 1, 2, 7 and the default.
for cr in 1 2 7 20000; do
    new_db fs_first; run init -d "$DB"
    run import -d "$DB" --on-conflict nothing --chunk-rows $cr all.csv
    eq "--on-conflict nothing, --chunk-rows $cr: exit 0" 0 $RC
    state >first$cr.txt
    check "--on-conflict nothing, --chunk-rows $cr: the first version of each key" cmp -s first.txt first$cr.txt
done

# A partitioned target (no system columns to return): the same table and
# the same figures as a plain one.
for kind in plain partitioned; do
    new_db fs_$kind
    if [ $kind = plain ]; then
        run init -d "$DB"; eq "$kind: init" 0 $RC
    else
        q "CREATE TABLE payment_callback (id bigserial, tenant_id bigint NOT NULL, channel text NOT NULL, out_trade_no text NOT NULL, callback_type text NOT NULL, status smallint NOT NULL DEFAULT 0, payload jsonb NOT NULL, received_at timestamptz NOT NULL DEFAULT now(), handled_at timestamptz, deleted_at timestamptz) PARTITION BY LIST (tenant_id);
           CREATE TABLE pc_1 PARTITION OF payment_callback FOR VALUES IN (1);
           CREATE TABLE pc_other PARTITION OF payment_callback DEFAULT;
           CREATE UNIQUE INDEX uk_payment_callback_biz_active ON payment_callback (tenant_id, channel, out_trade_no, callback_type) WHERE deleted_at IS NULL" >/dev/null ||
            fail "$kind: create the table"
    fi
    : >$kind.figs
    for f in f0 f1 f2; do
        run import -d "$DB" --chunk-rows 50 --report $kind.$f.json $f.csv
        eq "$kind: $f exit 0" 0 $RC
        fig $kind.$f.json >>$kind.figs
    done
    state >$kind.txt
    check "$kind: the table equals the model" cmp -s model.txt $kind.txt
done
check "partitioned: the figures of a plain table" cmp -s plain.figs partitioned.figs
check "the figures include updates and stale rows" bash -c "grep -q 'updated=[1-9]' plain.figs && grep -q 'stale=[1-9]' plain.figs"

finish
