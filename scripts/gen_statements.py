#!/usr/bin/env python3
"""Generate large, realistic, seeded payment-channel statement files for idemload.

The output is a CSV or NDJSON file (optionally gzip-compressed) of payment
callback rows:

    tenant_id, channel, out_trade_no, callback_type, status, payload, received_at

Business key: (tenant_id, channel, out_trade_no, callback_type).

What the file contains
----------------------
* New keys, one order after another; an order is mostly a "pay" callback, and
  some orders later get a "refund", "close" or "notify" key of their own.
* Repeats (--dup-rate): a row repeating an earlier key with a new version.
  85% of repeats pick a recent key (last 20,000 keys), 15% any earlier key, so
  repeats fall both inside one chunk and across chunks.
  - in order: received_at strictly later than every earlier version of the key;
    status advances 0 -> 1 -> 2|3 and never leaves 2 or 3 (final states are
    absorbing, so the result is the same with --final-status 2 or 2,3);
  - out of order (--out-of-order, a fraction of the repeats): received_at
    strictly EARLIER than every earlier version of the key, status 0 or 1
    (never above the key's earliest status);
  - ties (--ties, a fraction of the in-order repeats): the same instant as the
    key's latest version, usually written with another UTC offset, with a new
    payload (the later row in the file must win);
  - exact duplicates (--exact-dup-rate, a fraction of the in-order repeats):
    the key's current winning version again: same payload, status and instant
    (received_at possibly written in another form) -> "unchanged".
  Without --ties/--exact-dup-rate every version of a key has a distinct
  received_at instant.
* Payloads are compact JSON objects, 110-220 bytes, amounts are JSON numbers
  with two decimals ("amount":168.90).  --quirk-rate of them carry one extra:
  non-ASCII text, an escaped quote and comma inside a string, a 30-digit
  integer, JSON string escapes, or (CSV only) a newline inside the payload, so
  the quoted CSV field spans two lines.
* received_at mixes forms: "2026-11-28T10:00:00+08:00", "2026-11-28 02:00:00Z",
  "2026-11-28T10:00:00.123+0800", "...+08", "...123456Z", "-05:00", "+05:30".
* Bad rows (--bad-rate, default 0), see --bad-kinds. A bad row never changes
  the expected state.

--expected PATH
---------------
Writes a CSV (gzip if PATH ends in .gz) with one line per business key:
  tenant_id,channel,out_trade_no,callback_type,status,received_at,payload
received_at is the instant as integer microseconds since the Unix epoch (UTC);
payload is the exact JSON text the generator wrote for the winning row.  The
winner is the key's row with the latest received_at instant; on a tie the row
later in the file wins.  Lines are in order of the key's first appearance.

This is exactly the table state after loading the file into an EMPTY table in
one go (any chunk size) with --on-conflict update: the generator never lets a
newer version regress from a final status (2, or 3) to another status, so the
final-status rule never changes the outcome.  Compare payloads as JSON values
(jsonb re-formats whitespace and key order; 168.90 stays 168.90).

Counts (stderr summary, or --summary PATH as JSON): rows (records, header and
blank lines excluded), bad, good, keys; with one chunk for the whole file
`idemload validate` should report rows_read=rows, rows_rejected=bad,
rows_deduplicated=good-keys.

Examples
--------
  gen_statements.py --rows 5000000 --out big.csv.gz --expected big.expected.csv.gz
  gen_statements.py --rows 100000 --format ndjson --bad-rate 0.01 --seed 7 > x.ndjson
  gen_statements.py --rows 1000 --columns-order tenant_id,out_trade_no,callback_type,status,payload,received_at \\
      --channels unionpay --out unionpay.csv     # load with --set channel=unionpay
"""

import argparse
import array
import datetime
import gzip
import heapq
import json
import os
import queue
import random
import sys
import threading
import time

COLUMNS = ["tenant_id", "channel", "out_trade_no", "callback_type", "status",
           "payload", "received_at"]
EXTRA_COLUMNS = ["batch_id", "note"]
CTYPES = ["pay", "refund", "close", "notify"]
PAY, REFUND, CLOSE, NOTIFY = 0, 1, 2, 3
BAD_KINDS = ["blank_key", "tenant", "payload", "offset", "date", "status", "utf8", "nul"]
DEFAULT_BAD_KINDS = "blank_key,tenant,payload,offset,date"
MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1
US = 1000000

# Channel profiles: weight, out_trade_no prefix, currency, id member and its
# format, payer member and its format, state member, state names by status
# for pay/notify, close and refund.  Id/payer formats use the numbered
# arguments of the row template (see ROW ARGS below); DATE8 is the statement day.
CHANNELS = {
    "wechat": dict(w=40, prefix="WX", cur="CNY", idf="transaction_id", tid="42000{6:05d}DATE8{7:010d}",
                   payer="openid", payv="{8}", state="trade_state",
                   pay=["NOTPAY", "USERPAYING", "SUCCESS", "PAYERROR"],
                   close=["NOTPAY", "NOTPAY", "CLOSED", "PAYERROR"],
                   refund=["PROCESSING", "PROCESSING", "SUCCESS", "ABNORMAL"]),
    "alipay": dict(w=35, prefix="AP", cur="CNY", idf="trade_no", tid="DATE82200{6:05d}{7:011d}",
                   payer="buyer_id", payv="2088{10:012d}", state="trade_status",
                   pay=["WAIT_BUYER_PAY", "WAIT_BUYER_PAY", "TRADE_SUCCESS", "TRADE_CLOSED"],
                   close=["WAIT_BUYER_PAY", "WAIT_BUYER_PAY", "TRADE_CLOSED", "TRADE_CLOSED"],
                   refund=["REFUND_PROCESSING", "REFUND_PROCESSING", "REFUND_SUCCESS", "REFUND_FAIL"]),
    "unionpay": dict(w=10, prefix="UP", cur="CNY", idf="query_id", tid="DATE8{7:013d}",
                     payer="acc_no", payv="6222****{18:04d}", state="trade_state",
                     pay=["WAITING", "PROCESSING", "SUCCESS", "FAILED"],
                     close=["WAITING", "PROCESSING", "CLOSED", "FAILED"],
                     refund=["WAITING", "PROCESSING", "SUCCESS", "FAILED"]),
    "stripe": dict(w=10, prefix="ST", cur="USD", idf="payment_intent", tid="pi_3Q{9}{7:08x}",
                   payer="customer", payv="cus_{20}", state="status",
                   pay=["requires_payment_method", "processing", "succeeded", "canceled"],
                   close=["requires_payment_method", "processing", "canceled", "canceled"],
                   refund=["pending", "pending", "succeeded", "failed"]),
    "paypal": dict(w=5, prefix="PP", cur="USD", idf="capture_id", tid="9{6:05d}{7:011X}",
                   payer="payer_id", payv="{19}", state="status",
                   pay=["CREATED", "APPROVED", "COMPLETED", "DECLINED"],
                   close=["CREATED", "APPROVED", "VOIDED", "DECLINED"],
                   refund=["PENDING", "PENDING", "COMPLETED", "FAILED"]),
}
GENERIC_CHANNEL = dict(w=5, prefix="GN", cur="CNY", idf="transaction_id", tid="TDATE8{7:012d}",
                       payer="payer_id", payv="P{10:012d}", state="trade_state",
                       pay=["PENDING", "PROCESSING", "SUCCESS", "FAILED"],
                       close=["PENDING", "PROCESSING", "CLOSED", "FAILED"],
                       refund=["PENDING", "PROCESSING", "SUCCESS", "FAILED"])

# received_at forms: (precision_us, offset_us, separator, fraction digits, suffix, weight)
TS_FORMS = [
    (US,   8 * 3600 * US, "T", 0, "+08:00", 30),
    (US,   0,             " ", 0, "Z",      15),
    (1000, 8 * 3600 * US, "T", 3, "+0800",  15),
    (US,   8 * 3600 * US, "T", 0, "+08",    10),
    (1,    0,             "T", 6, "Z",       8),
    (1000, 8 * 3600 * US, " ", 3, "+08:00",  7),
    (US,  -5 * 3600 * US, "T", 0, "-05:00",  5),
    (US,  (5 * 3600 + 1800) * US, "T", 0, "+05:30", 4),
    (1000, 0,             "T", 3, "+00:00",  6),
]
MICRO_FORMS = [i for i, f in enumerate(TS_FORMS) if f[0] == 1]

# Payload extras (--quirk-rate).  Each starts with ','.
QUIRKS = [
    ',"body":"微信支付-线下门店 订单"',
    ',"attach":"size \\"L\\", color=red"',
    ',"raw_seq":123456789012345678901234567890',
    ',"memo":"line1\\nline2\\ttab caf\\u00e9 \\\\ end"',
    ',"discount":-0.50,"coupon":null,"tags":["vip","promo, 11.11"]',
    ',"body":"Café crème ☕ 🚀"',
]
MULTILINE_QUIRK = len(QUIRKS)  # CSV only: newline inside the payload


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n", 1)[0],
        epilog=__doc__.split("\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1000, help="records to write, bad rows included (default 1000)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1); same seed and options -> same bytes")
    p.add_argument("--dup-rate", type=float, default=0.05,
                   help="fraction of good rows that repeat an earlier key with a new version (default 0.05)")
    p.add_argument("--out-of-order", type=float, default=0.2,
                   help="fraction of the repeats that carry an OLDER received_at than the key's earlier versions (default 0.2)")
    p.add_argument("--ties", type=float, default=0.0,
                   help="fraction of in-order repeats with the SAME instant as the key's latest version, new payload (default 0)")
    p.add_argument("--exact-dup-rate", type=float, default=0.0,
                   help="fraction of in-order repeats that repeat the winning version exactly (same payload, status, instant) (default 0)")
    p.add_argument("--bad-rate", type=float, default=0.0, help="fraction of deliberately invalid rows (default 0)")
    p.add_argument("--bad-kinds", default=DEFAULT_BAD_KINDS,
                   help="comma list of bad-row kinds to draw from: %s (default %s). "
                        "blank_key: out_trade_no or callback_type empty/white space/null/missing; "
                        "tenant: tenant_id abc, 12a, out of int64 range or empty; payload: not JSON, or JSON null; "
                        "offset: received_at without UTC offset; date: 2026-02-30 and other impossible dates; "
                        "status: x, 2a, 40000; utf8: a 0xFF byte in out_trade_no; nul: a NUL byte in the payload"
                        % (",".join(BAD_KINDS), DEFAULT_BAD_KINDS))
    p.add_argument("--format", choices=["csv", "ndjson"], help="default: from --out (.csv/.ndjson/.jsonl[.gz]), else csv")
    p.add_argument("--gzip", action="store_true", help="gzip the output (implied by --out ending in .gz)")
    p.add_argument("--compresslevel", type=int, default=6, help="gzip level (default 6)")
    p.add_argument("--gzip-member-rows", type=int, default=0,
                   help="start a new gzip member every N rows (multi-member gzip, like cat a.gz b.gz)")
    p.add_argument("--out", default="-", help="output path, or - for stdout (default)")
    p.add_argument("--expected", metavar="PATH", help="write the expected final state per key (CSV, .gz ok)")
    p.add_argument("--summary", metavar="PATH", help="write counts as one JSON object")
    p.add_argument("--columns-order", default="standard",
                   help="'standard', 'shuffle' (seeded), or an explicit comma list of columns; "
                        "a list may omit channel (needs a single --channels), tenant_id (needs --tenants 1) "
                        "or status (all rows then have status 0). Applies to NDJSON member order too")
    p.add_argument("--extra-columns", action="store_true", help="add columns batch_id and note (to be ignored)")
    p.add_argument("--crlf", action="store_true", help="end lines with CRLF")
    p.add_argument("--bom", action="store_true", help="start the file with a UTF-8 byte-order mark")
    p.add_argument("--delimiter", default=",", help="CSV delimiter (default ,)")
    p.add_argument("--blank-line-rate", type=float, default=0.0,
                   help="NDJSON only: probability of a blank line after a record (default 0)")
    p.add_argument("--tenants", type=int, default=20, help="number of tenants (default 20)")
    p.add_argument("--tenant-ids", help="explicit comma list of tenant ids (overrides --tenants)")
    p.add_argument("--channels", default=",".join(CHANNELS),
                   help="comma list of channels (default %s)" % ",".join(CHANNELS))
    p.add_argument("--start-time", default="2026-11-28T00:00:00+08:00",
                   help="instant of the first row, ISO 8601 with offset (default 2026-11-28T00:00:00+08:00)")
    p.add_argument("--span", type=float, default=86400.0, help="seconds the file covers (default 86400)")
    p.add_argument("--quirk-rate", type=float, default=0.01,
                   help="fraction of payloads with an extra quirk (unicode, escaped quotes, 30-digit number, "
                        "CSV multi-line payload) (default 0.01)")
    p.add_argument("--quiet", action="store_true", help="no summary on stderr")
    a = p.parse_args(argv)

    if a.rows < 0:
        p.error("--rows must be >= 0")
    for name in ("dup_rate", "out_of_order", "ties", "exact_dup_rate", "bad_rate", "blank_line_rate", "quirk_rate"):
        v = getattr(a, name)
        if not 0.0 <= v <= 1.0:
            p.error("--%s must be between 0 and 1" % name.replace("_", "-"))
    if a.ties + a.exact_dup_rate > 1.0:
        p.error("--ties + --exact-dup-rate must be <= 1")
    if a.format is None:
        n = a.out.lower()
        if n.endswith(".gz"):
            n = n[:-3]
        a.format = "ndjson" if n.endswith((".ndjson", ".jsonl")) else "csv"
    if a.out != "-" and a.out.lower().endswith(".gz"):
        a.gzip = True
    if len(a.delimiter) != 1 or a.delimiter in '"\r\n':
        p.error("--delimiter must be one character, not a quote or newline")
    a.bad_kinds = [k.strip() for k in a.bad_kinds.split(",") if k.strip()]
    for k in a.bad_kinds:
        if k not in BAD_KINDS:
            p.error("unknown bad kind %r (known: %s)" % (k, ",".join(BAD_KINDS)))
    if a.bad_rate > 0 and not a.bad_kinds:
        p.error("--bad-rate needs at least one --bad-kinds")
    a.channels = [c.strip() for c in a.channels.split(",") if c.strip()]
    if not a.channels:
        p.error("--channels is empty")
    try:
        st = datetime.datetime.fromisoformat(a.start_time.replace("Z", "+00:00"))
    except ValueError:
        p.error("--start-time: not an ISO 8601 timestamp: %r" % a.start_time)
    if st.tzinfo is None:
        p.error("--start-time needs a UTC offset")
    a.start_dt = st
    rng = random.Random(a.seed ^ 0x5EED)
    cols = list(COLUMNS) + (EXTRA_COLUMNS if a.extra_columns else [])
    if a.columns_order == "standard":
        pass
    elif a.columns_order == "shuffle":
        rng.shuffle(cols)
    else:
        cols = [c.strip() for c in a.columns_order.split(",") if c.strip()]
        for c in cols:
            if c not in COLUMNS + EXTRA_COLUMNS:
                p.error("unknown column %r in --columns-order" % c)
        if len(set(cols)) != len(cols):
            p.error("duplicate column in --columns-order")
        for c in ("out_trade_no", "callback_type", "payload", "received_at"):
            if c not in cols:
                p.error("--columns-order must contain %s" % c)
        if "channel" not in cols and len(a.channels) != 1:
            p.error("without a channel column, give exactly one --channels (and load with --set channel=...)")
    a.cols = cols
    # a kind whose column is not written would yield a good row
    need = {"tenant": "tenant_id", "status": "status"}
    dropped = [k for k in a.bad_kinds if need.get(k, "payload") not in cols]
    a.bad_kinds = [k for k in a.bad_kinds if k not in dropped]
    if dropped:
        sys.stderr.write("gen_statements: bad kinds %s dropped (column not written)\n" % ",".join(dropped))
    if a.bad_rate > 0 and not a.bad_kinds:
        p.error("--bad-rate: no usable --bad-kinds for these columns")
    if a.tenant_ids:
        try:
            a.tenant_list = [int(x) for x in a.tenant_ids.split(",")]
        except ValueError:
            p.error("--tenant-ids: not integers")
    else:
        if a.tenants < 1:
            p.error("--tenants must be >= 1")
        a.tenant_list = make_tenants(a.tenants, a.seed)
    if "tenant_id" not in cols and len(a.tenant_list) != 1:
        p.error("without a tenant_id column, use --tenants 1 or one --tenant-ids (and load with --set tenant_id=...)")
    return a


def make_tenants(n, seed):
    """Tenant ids: mostly 5-6 digit numbers; with 4+ tenants also one above
    2**53 (breaks float parsing) and one at the int64 maximum."""
    rng = random.Random(seed * 7919 + 17)
    ids = []
    seen = set()
    while len(ids) < n:
        t = rng.randrange(10000, 999999)
        if t not in seen:
            seen.add(t)
            ids.append(t)
    if n >= 4:
        ids[2] = 9007199254740993          # 2**53 + 1
        ids[3] = 9223372036854775807       # int64 max
    return ids


def weighted_table(weights, size, rng):
    """A list of `size` indexes distributed by `weights`, shuffled."""
    tot = float(sum(weights))
    out = []
    for i, w in enumerate(weights):
        out.extend([i] * int(round(size * w / tot)))
    while len(out) < size:
        out.append(0)
    out = out[:size]
    rng.shuffle(out)
    return out


class Sink:
    """Buffered writer; gzip compression runs in a thread (zlib releases the GIL)."""

    def __init__(self, path, gz, level):
        self.raw = sys.stdout.buffer if path == "-" else open(path, "wb")
        self.close_raw = path != "-"
        self.gz = gz
        self.level = level
        self.q = queue.Queue(maxsize=16)
        self.err = None
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _new(self):
        # filename='' and mtime=0: deterministic bytes, no name in the header.
        return gzip.GzipFile(filename="", mode="wb", fileobj=self.raw,
                             compresslevel=self.level, mtime=0)

    def _run(self):
        try:
            out = self._new() if self.gz else self.raw
            while True:
                b = self.q.get()
                if b is None:
                    break
                if b is Sink.MEMBER:
                    if self.gz:
                        out.close()
                        out = self._new()
                    continue
                out.write(b)
            if self.gz:
                out.close()
            self.raw.flush()
        except BaseException as e:  # noqa: BLE001 - reported by close()
            self.err = e
            while self.q.get() is not None:
                pass

    MEMBER = object()

    def write(self, b):
        self.q.put(b)

    def new_member(self):
        self.q.put(Sink.MEMBER)

    def close(self):
        self.q.put(None)
        self.t.join()
        if self.close_raw:
            self.raw.close()
        if self.err:
            raise self.err


# ROW ARGS: every row line and payload is one str.format() call over this tuple:
#  0 tenant_id text     1 out_trade_no number   2 status        3 amount units
#  4 amount cents       5 state name            6 5-digit number 7 order number
#  8 openid-like text   9 14-char id text      10 12-digit number 11 attempt (version + 1)
# 12 payload extra     13 received_at text     14 refund units  15 refund cents
# 16 batch number      17 note text            18 4-digit number 19 13-char upper id
# 20 14-char id text

def build_templates(a, profiles, date8, csv_mode):
    """Per [channel][ctype][multiline]: (line template, payload JSON template)."""
    cols = a.cols
    d = a.delimiter
    eol = "\r\n" if a.crlf else "\n"
    out = []
    for ci, pf in enumerate(profiles):
        chan = a.channels[ci]
        tid = pf["tid"].replace("DATE8", date8)
        per_ct = []
        for ct in range(4):
            if ct == REFUND:
                pj = ('{{"amount":{3}.{4:02d},"refund_amount":{14}.{15:02d},"currency":"%s",'
                      '"refund_status":"{5}","refund_id":"50{6:05d}{7:013d}","%s":"%s","attempt":{11}{12}}}'
                      % (pf["cur"], pf["idf"], tid))
            else:
                pj = ('{{"amount":{3}.{4:02d},"currency":"%s","%s":"{5}","%s":"%s",'
                      '"payer":{{"%s":"%s"}},"attempt":{11}{12}}}'
                      % (pf["cur"], pf["state"], pf["idf"], tid, pf["payer"], pf["payv"]))
            per_ml = []
            for ml in (0, 1):
                pjm = pj.replace(',"currency"', ',\n  "currency"', 1) if ml else pj
                if csv_mode:
                    field = {"tenant_id": "{0}", "channel": chan,
                             "out_trade_no": pf["prefix"] + date8 + "{1:09d}",
                             "callback_type": CTYPES[ct], "status": "{2}",
                             "payload": '"' + pjm.replace('"', '""') + '"',
                             "received_at": "{13}", "batch_id": "B" + date8 + "-{16:03d}",
                             "note": "{17}"}
                    line = d.join(field[c] for c in cols) + eol
                else:
                    field = {"tenant_id": '"tenant_id":{0}', "channel": '"channel":"%s"' % chan,
                             "out_trade_no": '"out_trade_no":"%s%s{1:09d}"' % (pf["prefix"], date8),
                             "callback_type": '"callback_type":"%s"' % CTYPES[ct],
                             "status": '"status":{2}', "payload": '"payload":' + pjm,
                             "received_at": '"received_at":"{13}"',
                             "batch_id": '"batch_id":"B%s-{16:03d}"' % date8, "note": '"note":"{17}"'}
                    line = "{{" + ",".join(field[c] for c in cols) + "}}" + eol
                per_ml.append((line, pjm))
            per_ct.append(per_ml)
        out.append(per_ct)
    return out


def generate(a):
    rng = random.Random(a.seed)
    rnd = rng.random
    csv_mode = a.format == "csv"
    d = a.delimiter
    eol = "\r\n" if a.crlf else "\n"
    cols = a.cols
    status_col = "status" in cols

    # ---- tables ------------------------------------------------------------
    tenants = a.tenant_list
    tenant_table = weighted_table([1.0 / (i + 1) for i in range(len(tenants))], 1024, rng)
    tenant_str = [str(t) for t in tenants]
    chans = a.channels
    profiles = [CHANNELS.get(c, GENERIC_CHANNEL) for c in chans]
    chan_table = weighted_table([pf["w"] for pf in profiles], 1024, rng)
    form_table = weighted_table([f[5] for f in TS_FORMS], 1000, rng)
    start_us = int(a.start_dt.timestamp()) * US + a.start_dt.microsecond
    span_us = int(a.span * US)
    local_start = a.start_dt.astimezone(datetime.timezone(datetime.timedelta(hours=8)))
    date8 = local_start.strftime("%Y%m%d")
    seq_base = rng.randrange(0, 10 ** 6)

    def pool(alphabet, length, first=""):
        tr = bytes(ord(alphabet[i % len(alphabet)]) for i in range(256))
        raw = rng.randbytes(4096 * length).translate(tr).decode("ascii")
        return [first + raw[i * length:(i + 1) * length] for i in range(4096)]
    alnum = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"
    pool_openid = pool(alnum + "-_", 27, "o")
    pool_id = pool(alnum, 14)
    pool_upper = pool("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", 13)
    quirk_limit = int(a.quirk_rate * 65536)
    nquirks = len(QUIRKS) + (1 if csv_mode else 0)
    quirk_json = QUIRKS + [""]
    quirk_line = [q.replace('"', '""') for q in quirk_json] if csv_mode else quirk_json
    notes = ["ok", "ok", "ok", "checked, no diff", "retry #2", "对账完成"]
    if csv_mode:
        notes = [('"%s"' % n.replace('"', '""')) if (d in n or '"' in n) else n for n in notes]
    else:
        notes = [json.dumps(n, ensure_ascii=False)[1:-1] for n in notes]
    nnotes = len(notes)
    tpl = build_templates(a, profiles, date8, csv_mode)
    states = [[pf["pay"], pf["refund"], pf["close"], pf["pay"]] for pf in profiles]

    # ---- state ---------------------------------------------------------------
    korder = array.array("q")
    kctype = bytearray()
    kmax = array.array("q")      # latest instant of the key
    kmin = array.array("q")      # earliest instant of the key
    kwinst = bytearray()         # status of the winning (latest, later-in-file) version
    kminst = bytearray()         # status of the earliest version
    kwin = array.array("L")      # version number of the winner
    knver = array.array("L")     # versions written so far

    # tabulation hashing: per-order and per-version pseudo-random bits, cheap and seeded
    hrng = random.Random(a.seed * 1000003 + 11)
    HA, HB, HC = ([hrng.getrandbits(62) for _ in range(65536)] for _ in range(3))
    QA, QB, QC = ([hrng.getrandbits(30) for _ in range(65536)] for _ in range(3))

    def row_args(k, ver, st, ra, extra_tab):
        """(channel index, ctype, multiline, format args) of version `ver` of key k."""
        o = korder[k]
        ct = kctype[k]
        h = HA[o & 0xFFFF] ^ HB[(o >> 16) & 0xFFFF] ^ HC[o >> 32 & 0xFFFF]
        ci = chan_table[(h >> 10) & 1023]
        hv = QA[k & 0xFFFF] ^ QB[(k >> 16) & 0xFFFF] ^ QC[(ver + (k >> 32)) & 0xFFFF]
        q = (hv >> 16) % nquirks if (hv & 0xFFFF) < quirk_limit else -1
        cents = 100 + (h >> 20) % 199900
        if (h >> 40) & 7 == 0:
            cents -= cents % 100             # whole amounts: 200.00
        rc = cents * (20 + (h >> 50) % 81) // 100
        return ci, ct, q == MULTILINE_QUIRK, (
            tenant_str[tenant_table[h & 1023]], o + seq_base, st, cents // 100, cents % 100,
            states[ci][ct][st], (h >> 13) % 100000, o, pool_openid[(h >> 24) & 4095],
            pool_id[(h >> 13) & 4095], (h >> 22) % 1000000000000, ver + 1, extra_tab[q],
            ra, rc // 100, rc % 100, (k >> 12) % 1000, notes[(k + ver) % nnotes],
            (h >> 22) % 10000, pool_upper[(h >> 26) & 4095], pool_id[(h >> 26) & 4095])

    def payload_json(k, ver, st):
        ci, ct, ml, args = row_args(k, ver, st, "", quirk_json)
        return tpl[ci][ct][ml][1].format(*args)

    def ident(k):
        o = korder[k]
        h = HA[o & 0xFFFF] ^ HB[(o >> 16) & 0xFFFF] ^ HC[o >> 32 & 0xFFFF]
        ci = chan_table[(h >> 10) & 1023]
        return (tenant_str[tenant_table[h & 1023]], chans[ci],
                "%s%s%09d" % (profiles[ci]["prefix"], date8, o + seq_base), CTYPES[kctype[k]])

    # ---- timestamps ------------------------------------------------------------
    forms = TS_FORMS
    epoch = datetime.date(1970, 1, 1)
    minute_cache = {}
    MIN = 60 * US

    def render(ts, f):
        prec, off, sep, fd, suf, _w = forms[f]
        mn, rem = divmod(ts + off, MIN)
        key = mn * 16 + f
        pre = minute_cache.get(key)
        if pre is None:
            if len(minute_cache) > 200000:
                minute_cache.clear()
            day, mod = divmod(mn, 1440)
            pre = minute_cache[key] = "%s%s%02d:%02d:" % (
                (epoch + datetime.timedelta(days=day)).isoformat(), sep, mod // 60, mod % 60)
        if fd == 0:
            return "%s%02d%s" % (pre, rem // US, suf)
        if fd == 3:
            return "%s%02d.%03d%s" % (pre, rem // US, rem % US // 1000, suf)
        return "%s%02d.%06d%s" % (pre, rem // US, rem % US, suf)

    # ---- bad rows ----------------------------------------------------------------
    def csv_field(v):
        if v is None:
            return ""
        if d in v or '"' in v or "\n" in v or "\r" in v:
            return '"' + v.replace('"', '""') + '"'
        return v

    def bad_line(fields):
        """fields: column -> text (CSV) or raw JSON text (NDJSON); None: empty (CSV) / omitted (NDJSON)."""
        if csv_mode:
            out = []
            for c in cols:
                v = fields.get(c)
                if c == "payload" and v is not None:
                    out.append('"' + v.replace('"', '""') + '"')
                else:
                    out.append(csv_field(v))
            return d.join(out) + eol
        return "{" + ",".join('"%s":%s' % (c, fields[c]) for c in cols if fields.get(c) is not None) + "}" + eol

    def make_bad(kind):
        """One invalid row, modelled on an existing key; the key state is not touched."""
        nk = len(korder)
        k = int(rnd() * nk) if nk else None
        if k is None:                         # no key yet: a fresh order
            korder.append(10 ** 8)
            kctype.append(PAY)
            k = 0
            ten, chan, otn, ctn = ident(0)
            p = payload_json(0, 7, 2)
            st = 2
            korder.pop()
            kctype.pop()
        else:
            st = kwinst[k]
            ten, chan, otn, ctn = ident(k)
            p = payload_json(k, knver[k] + 7, st)
        f = form_table[int(rnd() * 1000)]
        ts = start_us + int(rnd() * span_us)
        ts -= ts % forms[f][0]
        ra = render(ts, f)
        v = int(rnd() * 4)
        if csv_mode:
            q = str
            fl = {"tenant_id": ten, "channel": chan, "out_trade_no": otn, "callback_type": ctn,
                  "status": str(st), "payload": p, "received_at": ra}
        else:
            def q(s):
                return json.dumps(s, ensure_ascii=False)
            fl = {"tenant_id": ten, "channel": q(chan), "out_trade_no": q(otn), "callback_type": q(ctn),
                  "status": str(st), "payload": p, "received_at": q(ra)}
        if "batch_id" in cols:
            fl["batch_id"] = q("B%s-%03d" % (date8, (k >> 12) % 1000))
            fl["note"] = q("ok")
        if kind == "blank_key":
            col = "out_trade_no" if v < 3 else "callback_type"
            r = int(rnd() * 4)
            fl[col] = ["", "   ", "", "\t "][r] if csv_mode else ['""', '"   "', "null", None][r]
        elif kind == "tenant":
            if csv_mode:
                fl["tenant_id"] = ["abc", "12a", "99999999999999999999", ""][v]
            else:
                fl["tenant_id"] = ['"abc"', '"12a"', "99999999999999999999", "null"][v]
        elif kind == "payload":
            if csv_mode:
                amount = p.split(":", 2)[1].split(",")[0]
                fl["payload"] = [p[:-1],                                           # truncated
                                 "{'amount': %s, 'currency': 'CNY'}" % amount,      # Python repr
                                 "amount=%s&currency=CNY&trade_state=SUCCESS" % amount,  # form-encoded
                                 "null"][v]                                         # JSON null
            else:
                fl["payload"] = [p[:-1] + ',"x":',                                  # line not JSON
                                 "{'amount': 168.90, 'currency': 'CNY'}",           # line not JSON
                                 "null",                                            # JSON null
                                 '{"amount":168.90,"currency":"CNY",}'][v]          # trailing comma
        elif kind == "offset":
            fl["received_at"] = q(ra[:len(ra) - len(forms[f][4])])
        elif kind == "date":
            fl["received_at"] = q(["2026-02-30", "2026-02-30", "2026-11-31", "2026-13-01"][v] + ra[10:])
        elif kind == "status":
            fl["status"] = ["x", "2a", "40000", "x"][v] if csv_mode else ['"x"', '"2a"', "40000", '"x"'][v]
        elif kind == "utf8":
            fl["out_trade_no"] = q(otn[:6] + "\udcff" + otn[6:])     # written as the byte 0xFF
        elif kind == "nul":
            # CSV: a raw NUL byte; NDJSON: the escape \u0000 (valid JSON, refused by jsonb)
            fl["payload"] = p.replace('"attempt"', '"memo":"x\x00y","attempt"' if csv_mode
                                      else '"memo":"x\\u0000y","attempt"', 1)
        return bad_line(fl)

    # ---- main loop -----------------------------------------------------------------
    pending = []                 # heap of (due row, seq, order, ctype) of later callback types
    next_order = 1
    pseq = 0
    window = 20000
    n_rows = a.rows
    bad_rate = a.bad_rate
    dup_rate = a.dup_rate
    oo_rate = a.out_of_order
    tie_rate = a.ties
    exact_rate = a.ties + a.exact_dup_rate
    blank_rate = a.blank_line_rate if not csv_mode else 0.0
    bad_kinds = a.bad_kinds
    member_rows = a.gzip_member_rows
    stats = dict(rows=0, good=0, bad=0, keys=0, new_keys=0, repeats=0, in_order=0, out_of_order=0,
                 ties=0, exact_dups=0, blank_lines=0, bad_by_kind={k: 0 for k in bad_kinds})
    first_status = {
        PAY:    [0] * 10 + [1] * 15 + [2] * 65 + [3] * 10,
        REFUND: [1] * 30 + [2] * 60 + [3] * 10,
        CLOSE:  [0] * 10 + [2] * 85 + [3] * 5,
        NOTIFY: [0] * 30 + [1] * 20 + [2] * 50,
    }
    next_status = {0: [1] * 40 + [2] * 50 + [3] * 10, 1: [1] * 15 + [2] * 75 + [3] * 10}

    sink = Sink(a.out, a.gzip, a.compresslevel)
    buf = []
    if a.bom:
        buf.append("\ufeff")
    if csv_mode:
        buf.append(d.join(cols) + eol)
    append = buf.append
    n_good = n_new = n_rep = n_in = n_oo = n_tie = n_exact = n_blank = 0

    for i in range(n_rows):
        if member_rows and i and i % member_rows == 0:
            sink.write("".join(buf).encode("utf-8", "surrogateescape"))
            buf = []
            append = buf.append
            sink.new_member()
        elif len(buf) >= 4096:
            sink.write("".join(buf).encode("utf-8", "surrogateescape"))
            buf = []
            append = buf.append

        if bad_rate and rnd() < bad_rate:
            kind = bad_kinds[int(rnd() * len(bad_kinds))]
            append(make_bad(kind))
            stats["bad"] += 1
            stats["bad_by_kind"][kind] += 1
            continue

        nkeys = len(korder)
        f = form_table[int(rnd() * 1000)]
        prec = forms[f][0]
        if nkeys and rnd() < dup_rate:
            n_rep += 1
            if rnd() < 0.85:
                k = nkeys - 1 - int(rnd() * (nkeys if nkeys < window else window))
            else:
                k = int(rnd() * nkeys)
            if rnd() < oo_rate:
                # older than every earlier version of the key; never a final status
                ts = kmin[k] - 1000 - int(rnd() ** 2 * 3600 * US)
                ts -= ts % prec
                st = 0 if (kminst[k] == 0 or not status_col) else (0 if rnd() < 0.5 else 1)
                ver = knver[k]
                knver[k] = ver + 1
                kmin[k] = ts
                kminst[k] = st
                n_oo += 1
            else:
                r = rnd()
                if r < exact_rate:
                    ts = kmax[k]
                    if ts % prec:                 # a form that writes this instant exactly
                        f = MICRO_FORMS[int(rnd() * len(MICRO_FORMS))]
                    if r < tie_rate:
                        ws = kwinst[k]
                        st = ws if (ws >= 2 or not status_col) else next_status[ws][int(rnd() * 100)]
                        ver = knver[k]
                        knver[k] = ver + 1
                        kwin[k] = ver
                        kwinst[k] = st
                        n_tie += 1
                    else:
                        ver = kwin[k]
                        st = kwinst[k]
                        n_exact += 1
                else:
                    ts = kmax[k] + 1000 + int(rnd() ** 3 * 7200 * US)
                    base = start_us + (i * span_us) // n_rows
                    if ts < base - 600 * US and rnd() < 0.5:
                        ts = base - int(rnd() * 600 * US)
                    ts += -ts % prec
                    ws = kwinst[k]
                    st = ws if (ws >= 2 or not status_col) else next_status[ws][int(rnd() * 100)]
                    ver = knver[k]
                    knver[k] = ver + 1
                    kwin[k] = ver
                    kwinst[k] = st
                    kmax[k] = ts
                    n_in += 1
        else:
            if pending and pending[0][0] <= i:
                _, _, o, ct = heapq.heappop(pending)
            else:
                o = next_order
                next_order += 1
                if rnd() < 0.96:
                    ct = PAY
                    r = rnd()
                    if r < 0.11:
                        pseq += 1
                        if r < 0.06:
                            heapq.heappush(pending, (i + 50 + int(rnd() * 20000), pseq, o, REFUND))
                        elif r < 0.08:
                            heapq.heappush(pending, (i + 50 + int(rnd() * 5000), pseq, o, CLOSE))
                        else:
                            heapq.heappush(pending, (i + 1 + int(rnd() * 2000), pseq, o, NOTIFY))
                else:
                    ct = NOTIFY
            k = nkeys
            ts = start_us + (i * span_us) // n_rows + int(rnd() * 90 * US)
            ts -= ts % prec
            st = first_status[ct][int(rnd() * 100)] if status_col else 0
            ver = 0
            korder.append(o)
            kctype.append(ct)
            kmax.append(ts)
            kmin.append(ts)
            kwinst.append(st)
            kminst.append(st)
            kwin.append(0)
            knver.append(1)
            n_new += 1
        ci, ct, ml, args = row_args(k, ver, st, render(ts, f), quirk_line)
        append(tpl[ci][ct][ml][0].format(*args))
        n_good += 1
        if blank_rate and rnd() < blank_rate:
            append(eol if rnd() < 0.7 else "   " + eol)
            n_blank += 1

    if buf:
        sink.write("".join(buf).encode("utf-8", "surrogateescape"))
    sink.close()

    stats.update(good=n_good, new_keys=n_new, repeats=n_rep, in_order=n_in, out_of_order=n_oo,
                 ties=n_tie, exact_dups=n_exact, blank_lines=n_blank)
    stats["rows"] = stats["good"] + stats["bad"]
    stats["keys"] = len(korder)
    stats["dedup_one_chunk"] = stats["good"] - stats["keys"]

    if a.expected:
        write_expected(a.expected, len(korder), ident, payload_json, kwin, kwinst, kmax)
    return stats


def write_expected(path, nkeys, ident, payload_json, kwin, kwinst, kmax):
    raw = sys.stdout.buffer if path == "-" else open(path, "wb")
    gz = path != "-" and path.lower().endswith(".gz")
    out = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) if gz else raw
    buf = ["tenant_id,channel,out_trade_no,callback_type,status,received_at,payload\n"]
    for k in range(nkeys):
        ten, chan, otn, ctn = ident(k)
        p = payload_json(k, kwin[k], kwinst[k])
        buf.append('%s,%s,%s,%s,%d,%d,"%s"\n' % (ten, chan, otn, ctn, kwinst[k], kmax[k], p.replace('"', '""')))
        if len(buf) >= 8192:
            out.write("".join(buf).encode("utf-8"))
            buf = []
    out.write("".join(buf).encode("utf-8"))
    if gz:
        out.close()
    if path != "-":
        raw.close()
    else:
        raw.flush()


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    t0 = time.time()
    stats = generate(a)
    stats["total_seconds"] = round(time.time() - t0, 3)
    if a.summary:
        with open(a.summary, "w") as fh:
            json.dump(stats, fh, indent=1, ensure_ascii=False)
            fh.write("\n")
    if not a.quiet:
        sys.stderr.write(
            "gen_statements: %d rows (%d good, %d bad), %d keys, %d repeats "
            "(%d newer, %d older/out-of-order, %d ties, %d exact), dedup in one chunk %d, "
            "%d blank lines, %.1fs\n" % (
                stats["rows"], stats["good"], stats["bad"], stats["keys"], stats["repeats"],
                stats["in_order"], stats["out_of_order"], stats["ties"], stats["exact_dups"],
                stats["dedup_one_chunk"], stats["blank_lines"], stats["total_seconds"]))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        try:
            sys.stdout = None
        except Exception:
            pass
        sys.exit(1)
