#!/usr/bin/env bash
# status --report and a file name that is not UTF-8 (issue 47, point 10;
# SPEC.md "Hostile input": a file name "is recorded in the ledger and the
# report escaped (and its bytes in base64)"): the ledger keeps the name
# escaped and its bytes beside it, status --report gives both
# (file_name, file_name_base64); a plain name has no base64; a ledger
# written before it kept the bytes is still read, and gains the column.
. "$(dirname "$0")/../lib.sh"
init_db status_names

name=$(printf 'bill-\xb6\xd4\033.csv')
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '1,wechat,G1,pay,0,{},2026-01-01T00:00:00Z' >"$name"
printf '%s\n' 'tenant_id,channel,out_trade_no,callback_type,status,payload,received_at' \
    '1,wechat,P1,pay,0,{},2026-01-01T00:00:00Z' >plain.csv
run import -d "$DB" "$name" plain.csv
eq "both files imported" 0 "$RC"
run status -d "$DB" --report st.json
eq "status: exit 0" 0 "$RC"
check "status --report: the name escaped" jtrue st.json \
    '[f["file_name"] for f in r["files"] if f["file_name"].startswith("bill-")] == ["bill-\\xB6\\xD4\\u001B.csv"]'
eq "status --report: its bytes in file_name_base64" "$(printf '%s' "$name" | base64)" \
    "$(json st.json '[f["file_name_base64"] for f in r["files"] if f["file_name"].startswith("bill-")][0]')"
check "status --report: a plain name has no file_name_base64" jtrue st.json \
    '[f for f in r["files"] if f["file_name"] == "plain.csv" and "file_name_base64" not in f] != []'
# A ledger written by an earlier idemload: read as it is.
q "ALTER TABLE idemload_ledger DROP COLUMN file_name_bytes" >/dev/null
run status -d "$DB" --report old.json
eq "status of a ledger without the column: exit 0" 0 "$RC"
check "... its files listed, without bytes" jtrue old.json \
    'len(r["files"]) == 2 and all("file_name_base64" not in f for f in r["files"])'
run import -d "$DB" --force "$name"
eq "an import on that ledger: exit 0" 0 "$RC"
run status -d "$DB" --report again.json
eq "... adds the column back: the bytes are there again" "$(printf '%s' "$name" | base64)" \
    "$(json again.json '[f.get("file_name_base64") for f in r["files"] if f["file_name"].startswith("bill-")][0]')"
finish
