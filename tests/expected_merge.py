#!/usr/bin/env python3
"""The table state SPEC.md's merge rules give after loading several files one
after another, worked out from gen_statements.py --expected files alone (no
idemload involved): an independent expectation for the database tests.

usage: expected_merge.py [--final-status 2[,3]] [--data] OUT INPUT_1 [INPUT_2 ...]

Each INPUT_i is the generator's expected state of file i loaded alone into
an empty table (one line per key: its winning version); the files are taken
in load order.  With --data, each INPUT_i is instead a data file as loaded
(the generator's CSV or NDJSON columns tenant_id, channel, out_trade_no,
callback_type, status, payload, received_at; .ndjson/.jsonl by name), taken
row by row in file order: the same rules, row after row, give what SPEC.md's
chunked load gives (inside a chunk the latest row wins and a tie goes to the
row later in the file, as a row-by-row load; a final status of a dropped
row is kept).  Data mode takes clean files only: a row it cannot read (a bad
row, a received_at without an offset) stops it with exit 2, never skipped.  For a key already in the table, the incoming winner
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
import datetime
import decimal
import json
import re
import sys

csv.field_size_limit(1 << 30)


def value(text):
    # jsonb's equality: numbers by value (168.90 = 168.9), objects unordered.
    return json.loads(text, parse_float=decimal.Decimal, parse_int=decimal.Decimal)


TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?"
                r"(Z|[+-]\d\d(?::?\d\d)?)")
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def micros(text):
    """received_at as written (ISO 8601 with an offset) -> microseconds since
    the epoch, the instant it names (10:00+08:00 is 02:00Z)."""
    m = TS.fullmatch(text)
    if not m:
        raise ValueError("received_at %r: not an instant with an offset" % text)
    y, mo, d, h, mi, sec = (int(x) for x in m.groups()[:6])
    frac = int((m.group(7) or "").ljust(6, "0"))
    off = m.group(8)
    off_s = 0
    if off != "Z":
        digits = off[1:].replace(":", "")
        off_s = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60
        off_s = -off_s if off[0] == "-" else off_s
    t = datetime.datetime(y, mo, d, h, mi, sec, tzinfo=datetime.timezone.utc)
    return ((t - EPOCH) // datetime.timedelta(seconds=1) - off_s) * 1000000 + frac


def dump(v):
    """JSON text of a value parsed with Decimal numbers, numbers as written."""
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dump(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dump(x) for x in v) + "]"
    if isinstance(v, decimal.Decimal):
        return str(v)
    return json.dumps(v)


def data_rows(path):
    """A data file's rows as the expected files' columns, in file order."""
    ndjson = path.endswith((".ndjson", ".jsonl"))
    with open(path, newline="", encoding="utf-8") as f:
        rows = (value(line) for line in f if line.strip()) if ndjson else csv.DictReader(f)
        for n, r in enumerate(rows, start=1):
            try:
                payload = r["payload"]
                if ndjson:
                    payload = dump(payload)
                elif value(payload) is None:
                    raise ValueError("payload null")
                yield {"tenant_id": str(r["tenant_id"]), "channel": r["channel"],
                       "out_trade_no": r["out_trade_no"], "callback_type": r["callback_type"],
                       "status": str(r["status"]), "payload": payload,
                       "received_at": micros(r["received_at"])}
            except (KeyError, ValueError, TypeError) as e:
                print("expected_merge.py: %s: row %d: %s (data mode takes clean files only)"
                      % (path, n, e), file=sys.stderr)
                sys.exit(2)


def expected_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        yield from csv.DictReader(f)


def main(argv):
    final = {2}
    data = False
    while argv and argv[0] in ("--final-status", "--data"):
        if argv[0] == "--data":
            data = True
            argv = argv[1:]
        elif len(argv) > 1:
            final = {int(x) for x in argv[1].split(",")}
            argv = argv[2:]
        else:
            break
    if len(argv) < 2:
        sys.exit(__doc__)
    out, inputs = argv[0], argv[1:]
    rows_of = data_rows if data else expected_rows
    table = {}  # key -> [status, received_us, payload_text, payload_value, input]
    order = []
    n = dict(rows=0, keys=0, order_dependent=0, older_final=0, updated=0, stale=0, unchanged=0)
    for fileno, path in enumerate(inputs):
        for r in rows_of(path):
            key = (int(r["tenant_id"]), r["channel"], r["out_trade_no"], r["callback_type"])
            st, ts, text = int(r["status"]), int(r["received_at"]), r["payload"]
            cur = table.get(key)
            n["rows"] += 1
            if cur is None:
                table[key] = [st, ts, text, None, fileno]
                order.append(key)
                continue
            if cur[3] is None:
                cur[3] = value(cur[2])
            val = value(text)
            if ts > cur[1] or (ts == cur[1] and (val != cur[3] or
                                                (st != cur[0] and cur[0] not in final))):
                # Two files claiming one instant: their load order decides.
                # (Inside one data file the later row wins: not order.)
                if ts == cur[1] and cur[4] != fileno:
                    n["order_dependent"] += 1
                if cur[0] not in final:
                    cur[0] = st
                cur[1], cur[2], cur[3], cur[4] = ts, text, val, fileno
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
            st, ts, text = table[key][:3]
            w.writerow([key[0], key[1], key[2], key[3], st, ts, text])
    n["keys"] = len(order)
    print(json.dumps(n), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
