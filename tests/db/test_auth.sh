#!/usr/bin/env bash
# Passwords against a server that really asks for one (scram-sha-256): the
# password reaches libpq through PGPASSWORD, ~/.pgpass, a service file, a URI
# or a conninfo string, and is never printed: not on stderr, not on stdout,
# not in the report (its error field included), whether the password is
# right or wrong.
#
# A server of its own (in $WORK/pg), so that the shared fixture's
# authentication stays as it is for the other tests.
. "$(dirname "$0")/../lib.sh"
pg_use

PG2=$WORK/pg
PORT2=$((20000 + ($$ + 7919) % 20000))
pg2_cleanup() { PG_PORT=$PORT2 bash "$SRC/scripts/pg_local.sh" stop "$PG2" >/dev/null 2>&1; }
trap pg2_cleanup EXIT
if ! PG_PORT=$PORT2 bash "$SRC/scripts/pg_local.sh" start "$PG2" >/dev/null; then
    fail "cannot start a server of our own in $PG2"
    finish
fi
export PGHOST=$PG2 PGPORT=$PORT2
unset PGPASSWORD PGSERVICE PGSERVICEFILE PGPASSFILE
export HOME=$WORK/home
mkdir -p "$HOME"

RIGHT='Pw_right_4711xq'
WRONG='Pw_wrong_0815zk'
createdb authdb || fail "createdb authdb"
export PGDATABASE=authdb
run init -d authdb; eq "init (as the superuser, trusted)" 0 $RC
q "CREATE ROLE pwuser LOGIN PASSWORD '$RIGHT'"
q "GRANT ALL ON payment_callback, payment_callback_id_seq TO pwuser; GRANT CREATE ON SCHEMA public TO pwuser"
# pwuser must give a password (first matching line wins); the rest trusted.
hba=$PG2/data/pg_hba.conf
{ echo "local all pwuser scram-sha-256"; cat "$hba"; } >hba.new && cat hba.new >"$hba"
q "SELECT pg_reload_conf()" >/dev/null
eq "the server asks pwuser for a scram-sha-256 password" "scram-sha-256" \
    "$(q "SELECT auth_method FROM pg_hba_file_rules WHERE 'pwuser' = ANY (user_name) ORDER BY line_number LIMIT 1")"
eq "the stored password is a SCRAM verifier" t "$(q "SELECT rolpassword LIKE 'SCRAM-SHA-256\$%' FROM pg_authid WHERE rolname = 'pwuser'")"

H='tenant_id,channel,out_trade_no,callback_type,status,payload,received_at'
n=0
newfile() {
    n=$((n + 1))
    printf '%s\n%s\n' "$H" "8,wechat,AUTH$n,pay,1,\"{\"\"n\"\":$n}\",2026-11-28T10:00:00Z" >auth$n.csv
    F=auth$n.csv
}
# no_secret WHAT: neither password appears in stdout, stderr, the report.
no_secret() {
    local f hit=
    for f in "$OUT" "$ERR" rep.json; do
        [ -f "$f" ] && grep -q -e "$RIGHT" -e "$WRONG" "$f" && hit="$hit ${f##*/}"
    done
    check "$1: no password printed (stdout, stderr, report)${hit:+: found in$hit}" test -z "$hit"
}
# refused WHAT: exit 4, says the password failed; the report's file failed.
refused() {
    eq "$1: exit 4" 4 $RC
    check "$1: says password authentication failed" grep -q "password authentication failed for user \"pwuser\"" "$ERR"
    check "$1: the report says the file failed, with an error" jtrue rep.json 'r["files"][0]["status"] == "failed" and r["files"][0]["error"]'
    no_secret "$1"
}
loaded() {
    eq "$1: exit 0" 0 $RC
    eq "$1: the row arrived" 1 "$(q "SELECT count(*) FROM payment_callback WHERE out_trade_no = 'AUTH$n'")"
    no_secret "$1"
}
SOCK="host=$PG2 port=$PORT2 dbname=authdb user=pwuser"
URI="postgresql:///authdb?host=$PG2&port=$PORT2&user=pwuser"

# --- no password at all: the server really refuses
newfile; rm -f rep.json
run import -d "$SOCK" --report rep.json $F
eq "no password: exit 4" 4 $RC
check "no password: says one is needed" grep -qi "password" "$ERR"

# --- PGPASSWORD
newfile; rm -f rep.json
PGPASSWORD=$WRONG run import -d "$SOCK" --report rep.json $F
refused "PGPASSWORD wrong"
newfile; rm -f rep.json
PGPASSWORD=$RIGHT run import -d "$SOCK" --report rep.json $F
loaded "PGPASSWORD right"

# --- a password in the URI and in a conninfo string
newfile; rm -f rep.json
run import -d "postgresql://pwuser:$WRONG@/authdb?host=$PG2&port=$PORT2" --report rep.json $F
refused "URI with a wrong password"
newfile; rm -f rep.json
run import -d "postgresql://pwuser:$RIGHT@/authdb?host=$PG2&port=$PORT2" --report rep.json $F
loaded "URI with the right password"
newfile; rm -f rep.json
run import -d "$SOCK password=$WRONG" --report rep.json $F
refused "conninfo with a wrong password"
newfile; rm -f rep.json
run import -d "$SOCK password=$RIGHT" --report rep.json $F
loaded "conninfo with the right password"

# --- ~/.pgpass (HOME is a directory of this test)
echo "*:*:authdb:pwuser:$WRONG" >"$HOME/.pgpass"; chmod 600 "$HOME/.pgpass"
newfile; rm -f rep.json
run import -d "$URI" --report rep.json $F
refused "~/.pgpass with a wrong password"
echo "*:*:authdb:pwuser:$RIGHT" >"$HOME/.pgpass"
newfile; rm -f rep.json
run import -d "$URI" --report rep.json $F
loaded "~/.pgpass with the right password"
rm -f "$HOME/.pgpass"

# --- a service file (PGSERVICEFILE), by -d service=NAME and by PGSERVICE
printf '[idem_bad]\nhost=%s\nport=%s\ndbname=authdb\nuser=pwuser\npassword=%s\n\n[idem]\nhost=%s\nport=%s\ndbname=authdb\nuser=pwuser\npassword=%s\n' \
    "$PG2" "$PORT2" "$WRONG" "$PG2" "$PORT2" "$RIGHT" >services.conf
export PGSERVICEFILE=$WORK/services.conf
newfile; rm -f rep.json
run import -d "service=idem_bad" --report rep.json $F
refused "service file with a wrong password"
newfile; rm -f rep.json
run import -d "service=idem" --report rep.json $F
loaded "service file with the right password (-d service=idem)"
newfile; rm -f rep.json
PGSERVICE=idem run import --report rep.json $F
loaded "service file with the right password (PGSERVICE)"
# The tools connect the same way.
rm -f rep.json
run check -d "service=idem_bad" --report rep.json
check "check, service with a wrong password: fails" test $RC -ne 0
no_secret "check, service with a wrong password"
unset PGSERVICEFILE

# --- every output of every command, with the password in the URI: the
# HTML page, --changes, status, dedupe, create-index (SPEC.md: "never in
# any log line, report or error message"), right and wrong password.
# leaks FILE...: the files that hold either password.
leaks() { local f h=; for f in "$@"; do [ -f "$f" ] && grep -aq -e "$RIGHT" -e "$WRONG" "$f" && h="$h ${f##*/}"; done; echo "${h# }"; }
for pw in RIGHT WRONG; do
    U="postgresql://pwuser:${!pw}@/authdb?host=$PG2&port=$PORT2"
    newfile; rm -f page.html ch.ndjson rep.json
    run import -d "$U" --report rep.json --html page.html --changes ch.ndjson $F
    cp "$OUT" imp.out; cp "$ERR" imp.err2
    if [ $pw = RIGHT ]; then
        eq "$pw password: the import with --html and --changes loads (exit 0)" 0 $RC
        check "$pw password: the page and the changes were written" test -s page.html -a -s ch.ndjson
    fi
    eq "$pw password: not in the page, --changes, report, stdout, stderr" "" \
        "$(leaks page.html ch.ndjson rep.json imp.out imp.err2)"
    for cmd in status dedupe create-index check; do
        rm -f rep.json
        rep=(--report rep.json); [ $cmd = create-index ] && rep=()   # (it has no --report)
        run $cmd -d "$U" "${rep[@]}"
        cp "$OUT" "$cmd.out"; cp "$ERR" "$cmd.err2"
        [ $pw = RIGHT ] && check "$pw password: $cmd connects (exit $RC)" test "$RC" -le 1
        eq "$pw password: $cmd prints no password (stdout, stderr, report)" "" \
            "$(leaks "$cmd.out" "$cmd.err2" rep.json)"
    done
done

pg2_cleanup
trap - EXIT
finish
