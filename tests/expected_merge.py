#!/usr/bin/env python3
"""The table state SPEC.md's merge rules give after loading several files one
after another, worked out from gen_statements.py --expected files alone (no
idemload involved): an independent expectation for the database tests.

usage: expected_merge.py [--final-status 2[,3]] OUT EXPECTED_1 [EXPECTED_2 ...]

Each EXPECTED_i is the generator's expected state of file i loaded alone into
an empty table (one line per key: its winning version); the files are taken
in load order.  For a key already in the table, the incoming winner
  - is newer, or claims the same instant with another payload or status:
    it replaces payload and received_at; the status is the incoming one
    unless the active one is final (then it stays);
  - is older: the row stays, except that a final incoming status makes the
    key's status final when the active one is not ("final statuses do not
    depend on order");
  - is the same version: nothing changes.
Loading only each file's winner is enough for generator files: inside one
file a key's status never leaves a final status, and versions arriving out
of order are never final.

OUT gets the same CSV columns (payload: the winning version's text).  On
stderr: one JSON line of counts, with "order_dependent": keys where two files
claim the same instant with different versions (the load order decides those;
a test of concurrent loads needs 0) and "older_final": keys whose status came
from an older final version.
"""
import csv
import decimal
import json
import sys

csv.field_size_limit(1 << 30)


def value(text):
    # jsonb's equality: numbers by value (168.90 = 168.9), objects unordered.
    return json.loads(text, parse_float=decimal.Decimal, parse_int=decimal.Decimal)


def main(argv):
    final = {2}
    if len(argv) > 1 and argv[0] == "--final-status":
        final = {int(x) for x in argv[1].split(",")}
        argv = argv[2:]
    if len(argv) < 2:
        sys.exit(__doc__)
    out, inputs = argv[0], argv[1:]
    table = {}          # key -> [status, received_us, payload_text, payload_value]
    order = []
    n = dict(keys=0, order_dependent=0, older_final=0, updated=0, stale=0, unchanged=0)
    for path in inputs:
        with open(path, newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                key = (int(r["tenant_id"]), r["channel"], r["out_trade_no"], r["callback_type"])
                st, ts, text = int(r["status"]), int(r["received_at"]), r["payload"]
                cur = table.get(key)
                if cur is None:
                    table[key] = [st, ts, text, None]
                    order.append(key)
                    continue
                if cur[3] is None:
                    cur[3] = value(cur[2])
                val = value(text)
                if ts > cur[1] or (ts == cur[1] and (val != cur[3] or
                                                    (st != cur[0] and cur[0] not in final))):
                    if ts == cur[1]:
                        n["order_dependent"] += 1
                    if cur[0] not in final:
                        cur[0] = st
                    cur[1], cur[2], cur[3] = ts, text, val
                    n["updated"] += 1
                elif ts < cur[1]:
                    if st in final and cur[0] not in final:
                        cur[0] = st
                        n["older_final"] += 1
                        n["updated"] += 1
                    else:
                        n["stale"] += 1
                else:
                    n["unchanged"] += 1
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["tenant_id", "channel", "out_trade_no", "callback_type", "status",
                    "received_at", "payload"])
        for key in order:
            st, ts, text, _ = table[key]
            w.writerow([key[0], key[1], key[2], key[3], st, ts, text])
    n["keys"] = len(order)
    print(json.dumps(n), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
