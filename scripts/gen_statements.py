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
rows_deduplicated=good-keys.  (A CSV record whose payload holds a newline
spans two lines, so `wc -l` is not the record count.)

Output is deterministic: the same options and seed give the same bytes,
whatever --jobs.  Rows are planned in this process and rendered (and
deflated) in blocks of 16384 rows by --jobs worker processes; a gzip output
is one gzip member (or one per --gzip-member-rows) made of independently
deflated blocks, which any gzip reader reads as one stream.  Memory: about
20 bytes per key plus ~50 MB.

Examples
--------
  gen_statements.py --rows 5000000 --out big.csv.gz --expected big.expected.csv.gz
  gen_statements.py --rows 100000 --format ndjson --bad-rate 0.01 --seed 7 > x.ndjson
  gen_statements.py --rows 1000 --columns-order tenant_id,out_trade_no,callback_type,status,payload,received_at \\
      --channels unionpay --out unionpay.csv     # load with --set channel=unionpay
"""

import argparse
import array
import collections
import datetime
import heapq
import itertools
import json
import multiprocessing
import os
import random
import string
import struct
import sys
import time
import zlib

COLUMNS = ["tenant_id", "channel", "out_trade_no", "callback_type", "status",
           "payload", "received_at"]
EXTRA_COLUMNS = ["batch_id", "note"]
CTYPES = ["pay", "refund", "close", "notify"]
PAY, REFUND, CLOSE, NOTIFY = 0, 1, 2, 3
BAD_KINDS = ["blank_key", "tenant", "payload", "offset", "date", "status", "utf8", "nul"]
DEFAULT_BAD_KINDS = "blank_key,tenant,payload,offset,date"
US = 1000000

# Channel profiles: weight, out_trade_no prefix, currency, id member and its
# format, payer member and its format, state member, state names by status
# for pay/notify, close and refund.  Id/payer formats use the numbered
# arguments of the row template (see ROW ARGS below); DATE8 is the statement day.
CHANNELS = {
    "wechat": dict(w=40, prefix="WX", cur="CNY", idf="transaction_id", tid="42000{6}DATE8{7:010d}",
                   payer="openid", payv="{8}", state="trade_state",
                   pay=["NOTPAY", "USERPAYING", "SUCCESS", "PAYERROR"],
                   close=["NOTPAY", "NOTPAY", "CLOSED", "PAYERROR"],
                   refund=["PROCESSING", "PROCESSING", "SUCCESS", "ABNORMAL"]),
    "alipay": dict(w=35, prefix="AP", cur="CNY", idf="trade_no", tid="DATE82200{6}{7:011d}",
                   payer="buyer_id", payv="2088{10}", state="trade_status",
                   pay=["WAIT_BUYER_PAY", "WAIT_BUYER_PAY", "TRADE_SUCCESS", "TRADE_CLOSED"],
                   close=["WAIT_BUYER_PAY", "WAIT_BUYER_PAY", "TRADE_CLOSED", "TRADE_CLOSED"],
                   refund=["REFUND_PROCESSING", "REFUND_PROCESSING", "REFUND_SUCCESS", "REFUND_FAIL"]),
    "unionpay": dict(w=10, prefix="UP", cur="CNY", idf="query_id", tid="DATE8{7:013d}",
                     payer="acc_no", payv="6222****{18}", state="trade_state",
                     pay=["WAITING", "PROCESSING", "SUCCESS", "FAILED"],
                     close=["WAITING", "PROCESSING", "CLOSED", "FAILED"],
                     refund=["WAITING", "PROCESSING", "SUCCESS", "FAILED"]),
    "stripe": dict(w=10, prefix="ST", cur="USD", idf="payment_intent", tid="pi_3Q{9}{7:08x}",
                   payer="customer", payv="cus_{20}", state="status",
                   pay=["requires_payment_method", "processing", "succeeded", "canceled"],
                   close=["requires_payment_method", "processing", "canceled", "canceled"],
                   refund=["pending", "pending", "succeeded", "failed"]),
    "paypal": dict(w=5, prefix="PP", cur="USD", idf="capture_id", tid="9{6}{7:011X}",
                   payer="payer_id", payv="{19}", state="status",
                   pay=["CREATED", "APPROVED", "COMPLETED", "DECLINED"],
                   close=["CREATED", "APPROVED", "VOIDED", "DECLINED"],
                   refund=["PENDING", "PENDING", "COMPLETED", "FAILED"]),
}
GENERIC_CHANNEL = dict(w=5, prefix="GN", cur="CNY", idf="transaction_id", tid="TDATE8{7:012d}",
                       payer="payer_id", payv="P{10}", state="trade_state",
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
    p.add_argument("--jobs", type=int, default=0,
                   help="processes rendering and compressing blocks (default: CPUs available); "
                        "the output bytes do not depend on it")
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
    if a.jobs <= 0:
        try:
            a.jobs = len(os.sched_getaffinity(0))
        except AttributeError:
            a.jobs = os.cpu_count() or 1
    if not 1 <= a.compresslevel <= 9:
        p.error("--compresslevel must be 1..9")
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


# ---- CRC-32 of concatenated blocks (zlib's crc32_combine) ----------------------

def _gf2_times(mat, vec):
    s = 0
    i = 0
    while vec:
        if vec & 1:
            s ^= mat[i]
        vec >>= 1
        i += 1
    return s


def _gf2_square(mat):
    return [_gf2_times(mat, mat[n]) for n in range(32)]


_CRC_OPS = []


def crc32_combine(crc1, crc2, len2):
    """CRC-32 of A+B from crc1=crc32(A), crc2=crc32(B), len2=len(B)."""
    if not _CRC_OPS:
        m = [0xEDB88320] + [1 << n for n in range(31)]      # one zero bit
        for _ in range(3):
            m = _gf2_square(m)                               # one zero byte
        for _ in range(64):
            _CRC_OPS.append(m)                               # 2**i zero bytes
            m = _gf2_square(m)
    i = 0
    while len2:
        if len2 & 1:
            crc1 = _gf2_times(_CRC_OPS[i], crc1)
        len2 >>= 1
        i += 1
    return crc1 ^ crc2


# ROW ARGS: every row line and payload is one str.format() call over this tuple:
#  0 tenant_id text     1 out_trade_no number   2 status         3 amount text "168.90"
#  4 (unused)           5 state name            6 5-digit text   7 order number
#  8 openid-like text   9 14-char id text      10 12-digit text 11 attempt (version + 1)
# 12 payload extra     13 received_at text     14 refund amount text
# 15 (unused)          16 batch number         17 note text     18 4-digit text
# 19 13-char upper id  20 14-char id text      (received_at forms add 21-23)
# Everything derived from the order comes from one row of Renderer.ORD, picked
# by a tabulation hash of the order number.

def compile_template(tpl):
    """A str.format() template over the ROW ARGS, as a function built from an
    f-string: the template text is not parsed again for every row (2x faster)."""
    parts = []
    for lit, field, spec, conv in string.Formatter().parse(tpl):
        parts.append(lit.replace("{", "{{").replace("}", "}}"))
        if field is not None:
            assert conv is None and field.isdigit()
            parts.append("{a%s%s}" % (field, ":" + spec if spec else ""))
    params = ", ".join("a%d" % i for i in range(21)) + ", a21=0, a22=0, a23=0"
    return eval("lambda %s: f%r" % (params, "".join(parts)))


class Renderer:
    """Everything needed to turn (key, order, callback type, version, status,
    instant, form) into text.  Built from the seed alone, so worker processes
    (forked after it is built) render exactly what the main process would."""

    def __init__(self, a):
        rng = random.Random(a.seed * 1000003 + 11)
        self.csv = csv_mode = a.format == "csv"
        self.d = d = a.delimiter
        self.eol = "\r\n" if a.crlf else "\n"
        self.cols = a.cols
        self.chans = a.channels
        self.profiles = profiles = [CHANNELS.get(c, GENERIC_CHANNEL) for c in a.channels]
        tenants = a.tenant_list
        self.tenant_table = weighted_table([1.0 / (i + 1) for i in range(len(tenants))], 1024, rng)
        self.tenant_str = [str(t) for t in tenants]
        self.chan_table = weighted_table([pf["w"] for pf in profiles], 1024, rng)
        self.form_table = weighted_table([f[5] for f in TS_FORMS], 1000, rng)
        local_start = a.start_dt.astimezone(datetime.timezone(datetime.timedelta(hours=8)))
        self.date8 = date8 = local_start.strftime("%Y%m%d")
        self.seq_base = rng.randrange(0, 10 ** 6)

        def pool(alphabet, length, first=""):
            tr = bytes(ord(alphabet[i % len(alphabet)]) for i in range(256))
            raw = rng.randbytes(4096 * length).translate(tr).decode("ascii")
            return [first + raw[i * length:(i + 1) * length] for i in range(4096)]
        alnum = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"
        self.pool_openid = pool(alnum + "-_", 27, "o")
        self.pool_id = pool(alnum, 14)
        self.pool_upper = pool("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", 13)
        # tabulation hashing: 16 pseudo-random bits per order and per (key, version)
        self.HA, self.HB, self.HC = ([rng.getrandbits(16) for _ in range(65536)] for _ in range(3))
        self.QA, self.QB, self.QC = ([rng.getrandbits(16) for _ in range(65536)] for _ in range(3))
        self.nquirks = len(QUIRKS) + (1 if csv_mode else 0)
        # quirk index (-1: none) by (key, version) hash
        qr = random.Random(a.seed * 7 + 3)
        self.QT = [int(qr.random() * self.nquirks) if qr.random() < a.quirk_rate else -1
                   for _ in range(65536)]
        self.quirk_json = QUIRKS + [""]
        self.quirk_line = [q.replace('"', '""') for q in self.quirk_json] if csv_mode else self.quirk_json
        notes = ["ok", "ok", "ok", "checked, no diff", "retry #2", "对账完成"]
        if csv_mode:
            notes = [('"%s"' % n.replace('"', '""')) if (d in n or '"' in n) else n for n in notes]
        else:
            notes = [json.dumps(n, ensure_ascii=False)[1:-1] for n in notes]
        self.notes = notes
        self.states = [[pf["pay"], pf["refund"], pf["close"], pf["pay"]] for pf in profiles]
        self.tpl = self._templates()
        # line templates with received_at spelled out per form: {13} is then the
        # 'YYYY-MM-DD HH:MM:' prefix, {21} seconds, {22} milliseconds, {23} microseconds
        ts_field = []
        for prec, off, sep, fd, suf, _w in TS_FORMS:
            frac = "" if fd == 0 else (".{22}" if fd == 3 else ".{23:06d}")
            ts_field.append("{13}{21}" + frac + suf)
        self.tpl_ts = [[[[compile_template(line.replace("{13}", tsf)) for tsf in ts_field]
                         for line, _pj in per_ml] for per_ml in per_ct] for per_ct in self.tpl]
        self.tpl_payload = [[[compile_template(pj) for _line, pj in per_ml] for per_ml in per_ct]
                            for per_ct in self.tpl]
        # --expected lines: key, status, instant ({21}: UTC microseconds), payload as CSV field
        self.tpl_exp = [[[compile_template('{0},%s,%s%s{1:09d},%s,{2},{21},"%s"\n' % (
            self.chans[ci], self.profiles[ci]["prefix"], self.date8, CTYPES[ct], pj.replace('"', '""')))
            for _line, pj in per_ml] for ct, per_ml in enumerate(per_ct)]
            for ci, per_ct in enumerate(self.tpl)]
        self.quirk_csv = [q.replace('"', '""') for q in self.quirk_json]
        self._build_orders(rng)
        self.minute_cache = {}
        # zero-padded digit strings: a list lookup is much cheaper than a format spec
        self.D2 = ["%02d" % i for i in range(100)]
        self.D3 = ["%03d" % i for i in range(1000)]
        self.nonascii_q = [any(ord(c) > 127 for c in q) for q in self.quirk_line]

    def _templates(self):
        """[channel][ctype][multiline] -> (line template, payload JSON template)."""
        cols, d, eol, date8 = self.cols, self.d, self.eol, self.date8
        out = []
        for ci, pf in enumerate(self.profiles):
            chan = self.chans[ci]
            tid = pf["tid"].replace("DATE8", date8)
            per_ct = []
            for ct in range(4):
                if ct == REFUND:
                    pj = ('{{"amount":{3},"refund_amount":{14},"currency":"%s",'
                          '"refund_status":"{5}","refund_id":"50{6}{7:013d}","%s":"%s","attempt":{11}{12}}}'
                          % (pf["cur"], pf["idf"], tid))
                else:
                    pj = ('{{"amount":{3},"currency":"%s","%s":"{5}","%s":"%s",'
                          '"payer":{{"%s":"%s"}},"attempt":{11}{12}}}'
                          % (pf["cur"], pf["state"], pf["idf"], tid, pf["payer"], pf["payv"]))
                per_ml = []
                for ml in (0, 1):
                    pjm = pj.replace(',"currency"', ',\n  "currency"', 1) if ml else pj
                    if self.csv:
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

    def _build_orders(self, rng):
        """ORD: 65536 order profiles (tenant, channel, amounts, ids), pre-rendered."""
        self.ORD = ORD = []
        for _ in range(65536):
            h = rng.getrandbits(62)
            ci = self.chan_table[(h >> 10) & 1023]
            cents = 100 + (h >> 20) % 199900
            if (h >> 40) & 7 == 0:
                cents -= cents % 100             # whole amounts: 200.00
            rc = cents * (20 + (h >> 50) % 81) // 100
            ORD.append((self.tenant_str[self.tenant_table[h & 1023]], ci, self.tpl_ts[ci], self.states[ci],
                        "%d.%02d" % divmod(cents, 100), "%d.%02d" % divmod(rc, 100),
                        "%05d" % ((h >> 13) % 100000), self.pool_openid[(h >> 24) & 4095],
                        self.pool_id[(h >> 13) & 4095], "%012d" % ((h >> 22) % 1000000000000),
                        "%04d" % ((h >> 22) % 10000), self.pool_upper[(h >> 26) & 4095],
                        self.pool_id[(h >> 26) & 4095]))

    def order_profile(self, o):
        return self.ORD[self.HA[o & 0xFFFF] ^ self.HB[(o >> 16) & 0xFFFF] ^ self.HC[(o >> 32) & 0xFFFF]]

    def quirk(self, k, ver):
        return self.QT[self.QA[k & 0xFFFF] ^ self.QB[(k >> 16) & 0xFFFF] ^ self.QC[(ver + (k >> 32)) & 0xFFFF]]

    def row_args(self, k, o, ct, ver, st, ra, extra_tab):
        """(channel index, multiline, format args) of version `ver` of key k (order o, type ct)."""
        ten, ci, _tc, sc, amt, ramt, d5, op, pid, n12, d4, pup, pid2 = self.order_profile(o)
        q = self.quirk(k, ver)
        return ci, q == MULTILINE_QUIRK, (
            ten, o + self.seq_base, st, amt, "", sc[ct][st], d5, o, op, pid, n12, ver + 1, extra_tab[q],
            ra, ramt, "", (k >> 12) % 1000, self.notes[(k + ver) % len(self.notes)], d4, pup, pid2)

    def payload_json(self, k, o, ct, ver, st):
        ci, ml, args = self.row_args(k, o, ct, ver, st, "", self.quirk_json)
        return self.tpl_payload[ci][ct][ml](*args)

    def ident(self, o, ct):
        """(tenant_id, channel, out_trade_no, callback_type) texts."""
        prof = self.order_profile(o)
        ci = prof[1]
        return (prof[0], self.chans[ci],
                "%s%s%09d" % (self.profiles[ci]["prefix"], self.date8, o + self.seq_base), CTYPES[ct])

    def render_ts(self, ts, f):
        prec, off, sep, fd, suf, _w = TS_FORMS[f]
        mn, rem = divmod(ts + off, 60000000)
        key = mn * 16 + f
        pre = self.minute_cache.get(key)
        if pre is None:
            if len(self.minute_cache) > 200000:
                self.minute_cache.clear()
            day, mod = divmod(mn, 1440)
            pre = self.minute_cache[key] = "%s%s%02d:%02d:" % (
                (EPOCH + datetime.timedelta(days=day)).isoformat(), sep, mod // 60, mod % 60)
        if fd == 0:
            return "%s%02d%s" % (pre, rem // US, suf)
        if fd == 3:
            return "%s%02d.%03d%s" % (pre, rem // US, rem % US // 1000, suf)
        return "%s%02d.%06d%s" % (pre, rem // US, rem % US, suf)

    def _minute(self, mn, f):
        """'YYYY-MM-DD HH:MM:' of local minute mn in form f (cached)."""
        if len(self.minute_cache) > 200000:
            self.minute_cache.clear()
        day, mod = divmod(mn, 1440)
        pre = self.minute_cache[mn * 16 + f] = "%s%s%02d:%02d:" % (
            (EPOCH + datetime.timedelta(days=day)).isoformat(), TS_FORMS[f][2], mod // 60, mod % 60)
        return pre

    def rows_text(self, rows, inserts):
        """Lines of good rows; inserts: [(row position, text)] put before that row.
        This is row_args() + render_ts() inlined (the hot path); test_consistency
        in the checks compares both."""
        chunks = []                      # bytes
        out = []                         # str lines of the current ASCII run
        append = out.append
        D2, D3 = self.D2, self.D3
        nonascii_q = self.nonascii_q
        HA, HB, HC, QA, QB, QC = self.HA, self.HB, self.HC, self.QA, self.QB, self.QC
        ORD, QT, ql = self.ORD, self.QT, self.quirk_line
        notes, nn, seq_base = self.notes, len(self.notes), self.seq_base
        mc = self.minute_cache
        minute = self._minute
        offs = [f[1] for f in TS_FORMS]
        extra = "batch_id" in self.cols or "note" in self.cols
        notes_nonascii = [any(ord(c) > 127 for c in n) for n in notes]
        ins = iter(inserts)
        nxt = next(ins, None)
        npos = nxt[0] if nxt is not None else -1
        j = 0
        for k, o, ct, ver, st, ts, f in rows:
            if j == npos:
                chunks.append("".join(out).encode("ascii"))
                out.clear()
                while nxt is not None and nxt[0] == j:
                    chunks.append(nxt[1].encode("utf-8", "surrogateescape"))
                    nxt = next(ins, None)
                npos = nxt[0] if nxt is not None else -1
            j += 1
            mn, rem = divmod(ts + offs[f], 60000000)
            pre = mc.get(mn * 16 + f)
            if pre is None:
                pre = minute(mn, f)
            ten, ci, tc, sc, amt, ramt, d5, op, pid, n12, d4, pup, pid2 = ORD[
                HA[o & 0xFFFF] ^ HB[(o >> 16) & 0xFFFF] ^ HC[(o >> 32) & 0xFFFF]]
            q = QT[QA[k & 0xFFFF] ^ QB[(k >> 16) & 0xFFFF] ^ QC[(ver + (k >> 32)) & 0xFFFF]]
            line = tc[ct][q == MULTILINE_QUIRK][f](
                ten, o + seq_base, st, amt, "", sc[ct][st], d5, o, op, pid, n12, ver + 1, ql[q],
                pre, ramt, "", (k >> 12) % 1000 if extra else 0, notes[(k + ver) % nn] if extra else "",
                d4, pup, pid2, D2[rem // 1000000], D3[rem % 1000000 // 1000], rem % 1000000)
            if nonascii_q[q] or (extra and notes_nonascii[(k + ver) % nn]):
                # keep the run ASCII: joining and encoding it is then a plain copy
                chunks.append("".join(out).encode("ascii"))
                out.clear()
                chunks.append(line.encode("utf-8"))
            else:
                append(line)
        chunks.append("".join(out).encode("ascii"))
        while nxt is not None:
            chunks.append(nxt[1].encode("utf-8", "surrogateescape"))
            nxt = next(ins, None)
        return b"".join(chunks)

    def expected_text(self, k0, os_, cts, vers, sts, tss, header):
        """--expected lines for keys k0.. (same values as row_args(), inlined)."""
        out = [header] if header else []
        append = out.append
        HA, HB, HC, QA, QB, QC = self.HA, self.HB, self.HC, self.QA, self.QB, self.QC
        ORD, QT, qc, te, seq_base = self.ORD, self.QT, self.quirk_csv, self.tpl_exp, self.seq_base
        for k, o, ct, ver, st, ts in zip(range(k0, k0 + len(os_)), os_, cts, vers, sts, tss):
            ten, ci, _tc, sc, amt, ramt, d5, op, pid, n12, d4, pup, pid2 = ORD[
                HA[o & 0xFFFF] ^ HB[(o >> 16) & 0xFFFF] ^ HC[(o >> 32) & 0xFFFF]]
            q = QT[QA[k & 0xFFFF] ^ QB[(k >> 16) & 0xFFFF] ^ QC[(ver + (k >> 32)) & 0xFFFF]]
            append(te[ci][ct][q == MULTILINE_QUIRK](
                ten, o + seq_base, st, amt, "", sc[ct][st], d5, o, op, pid, n12, ver + 1, qc[q],
                "", ramt, "", 0, "", d4, pup, pid2, ts))
        return "".join(out)


EPOCH = datetime.date(1970, 1, 1)
_R = None          # the Renderer, inherited by forked workers


def _work(job):
    """Render one block; with a gzip level, deflate it as a self-contained run of
    non-final deflate blocks.  Returns (bytes, crc32 of the text, text length)."""
    what, args, level = job
    if what == "rows-flat":              # rows sent to a worker as one flat array('q')
        flat, inserts = args
        args = (zip(*[iter(flat)] * 7), inserts)
        what = "rows"
    raw = _R.rows_text(*args) if what == "rows" else _R.expected_text(*args).encode("utf-8")
    if level is None:
        return raw, 0, len(raw)
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(raw) + c.flush(zlib.Z_SYNC_FLUSH), zlib.crc32(raw), len(raw)


class Output:
    """Writes blocks in order to a file or stdout; with gzip, frames them as
    gzip members (mtime 0, no name: deterministic bytes)."""

    GZ_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"

    def __init__(self, path, level, jobs):
        self.raw = sys.stdout.buffer if path == "-" else open(path, "wb")
        self.path = path
        self.level = level            # None: plain text
        self.in_member = False
        self.pool = None
        self.q = collections.deque()
        self.max_q = 2 * jobs + 2
        if jobs > 1:
            self.pool = multiprocessing.get_context("fork").Pool(jobs)

    def submit(self, what, args, new_member=False):
        if self.pool and what == "rows":   # an array pickles much faster than tuples
            what, args = "rows-flat", (array.array("q", itertools.chain.from_iterable(args[0])), args[1])
        job = (what, args, self.level)
        r = self.pool.apply_async(_work, (job,)) if self.pool else _work(job)
        self.q.append((new_member, r))
        while len(self.q) > self.max_q:
            self._drain_one()

    def _drain_one(self):
        new_member, r = self.q.popleft()
        data, crc, n = r.get() if self.pool else r
        if self.level is None:
            self.raw.write(data)
            return
        if new_member and self.in_member:
            self._end_member()
        if not self.in_member:
            self.raw.write(self.GZ_HEADER)
            self.crc, self.size, self.in_member = 0, 0, True
        self.raw.write(data)
        self.crc = crc32_combine(self.crc, crc, n)
        self.size += n

    def _end_member(self):
        self.raw.write(zlib.compressobj(self.level, zlib.DEFLATED, -15).flush())   # final empty block
        self.raw.write(struct.pack("<II", self.crc, self.size & 0xFFFFFFFF))
        self.in_member = False

    def close(self):
        while self.q:
            self._drain_one()
        if self.level is not None:
            if not self.in_member:
                self.raw.write(self.GZ_HEADER)
                self.crc, self.size, self.in_member = 0, 0, True
            self._end_member()
        if self.pool:
            self.pool.close()
            self.pool.join()
        if self.path == "-":
            self.raw.flush()
        else:
            self.raw.close()


BLOCK_ROWS = 16384


def generate(a):
    global _R
    R = _R = Renderer(a)
    rng = random.Random(a.seed)
    rnd = rng.random
    csv_mode = R.csv
    cols = a.cols
    eol = R.eol
    status_col = "status" in cols
    form_table = R.form_table
    forms = TS_FORMS
    start_us = int(a.start_dt.timestamp()) * US + a.start_dt.microsecond
    span_us = int(a.span * US)

    # ---- key state -----------------------------------------------------------
    # Compact: 18 bytes per key in arrays, plus a dict entry for the few keys
    # that have more than one version.
    korder = array.array("q")    # order number of the key
    kctype = bytearray()         # callback type of the key
    kmax = array.array("q")      # latest instant of the key
    kwinst = bytearray()         # status of the winning (latest, later-in-file) version
    # keys with repeats only: k -> [versions written, winner's version,
    #                                earliest instant, earliest version's status]
    krep = {}

    def make_bad(kind):
        """One invalid row, modelled on an existing key; the key state is not touched."""
        nk = len(korder)
        if nk:
            k = int(rnd() * nk)
            o, ct, st, ver = korder[k], kctype[k], kwinst[k], krep.get(k, (1,))[0] + 7
        else:
            k, o, ct, st, ver = 0, 10 ** 8, PAY, 2, 7
        ten, chan, otn, ctn = R.ident(o, ct)
        p = R.payload_json(k, o, ct, ver, st)
        f = form_table[int(rnd() * 1000)]
        ts = start_us + int(rnd() * span_us)
        ts -= ts % forms[f][0]
        ra = R.render_ts(ts, f)
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
            fl["batch_id"] = q("B%s-%03d" % (R.date8, (k >> 12) % 1000))
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
                fl["payload"] = [p[:-1],                                            # truncated
                                 "{'amount': %s, 'currency': 'CNY'}" % amount,       # Python repr
                                 "amount=%s&currency=CNY&trade_state=SUCCESS" % amount,  # form-encoded
                                 "null"][v]                                          # JSON null
            else:
                fl["payload"] = [p[:-1] + ',"x":',                                   # line not JSON
                                 "{'amount': 168.90, 'currency': 'CNY'}",            # line not JSON
                                 "null",                                             # JSON null
                                 '{"amount":168.90,"currency":"CNY",}'][v]           # trailing comma
        elif kind == "offset":
            fl["received_at"] = q(ra[:len(ra) - len(forms[f][4])])
        elif kind == "date":
            fl["received_at"] = q(["2026-02-30", "2026-02-30", "2026-11-31", "2026-13-01"][v] + ra[10:])
        elif kind == "status":
            fl["status"] = ["x", "2a", "40000", "x"][v] if csv_mode else ['"x"', '"2a"', "40000", '"x"'][v]
        elif kind == "utf8":
            fl["out_trade_no"] = q(otn[:6] + "\udcff" + otn[6:])      # written as the byte 0xFF
        elif kind == "nul":
            # CSV: a raw NUL byte; NDJSON: the escape \u0000 (valid JSON, refused by jsonb)
            fl["payload"] = p.replace('"attempt"', '"nul_field":"x\x00y","attempt"' if csv_mode
                                      else '"nul_field":"x\\u0000y","attempt"', 1)
        if csv_mode:
            out = []
            for c in cols:
                v = fl.get(c)
                if v is None:
                    out.append("")
                elif c == "payload" or R.d in v or '"' in v or "\n" in v or "\r" in v:
                    out.append('"' + v.replace('"', '""') + '"')
                else:
                    out.append(v)
            return R.d.join(out) + eol
        return "{" + ",".join('"%s":%s' % (c, fl[c]) for c in cols if fl.get(c) is not None) + "}" + eol

    # ---- main loop -------------------------------------------------------------
    jobs = a.jobs
    level = a.compresslevel if a.gzip else None
    out = Output(a.out, level, jobs)
    pending = []                 # heap of (due row, seq, order, ctype): later callback types of an order
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
    bad_by_kind = {k: 0 for k in bad_kinds}
    first_status = {
        PAY:    [0] * 10 + [1] * 15 + [2] * 65 + [3] * 10,
        REFUND: [1] * 30 + [2] * 60 + [3] * 10,
        CLOSE:  [0] * 10 + [2] * 85 + [3] * 5,
        NOTIFY: [0] * 30 + [1] * 20 + [2] * 50,
    }
    next_status = {0: [1] * 40 + [2] * 50 + [3] * 10, 1: [1] * 15 + [2] * 75 + [3] * 10}
    n_good = n_bad = n_new = n_rep = n_in = n_oo = n_tie = n_exact = n_blank = 0

    precs = [fm[0] for fm in TS_FORMS]
    first_status = [first_status[c] for c in range(4)]
    step_us = span_us / n_rows if n_rows else 0.0
    blk = []                     # (k, order, ctype, version, status, instant, form) per good row
    inserts = []                 # (position in blk, text): header, bad rows, blank lines
    append = blk.append
    if a.bom:
        inserts.append((0, "\ufeff"))
    if csv_mode:
        inserts.append((0, R.d.join(cols) + eol))
    block_end = min(BLOCK_ROWS, member_rows) if member_rows else BLOCK_ROWS
    new_member = False
    nkeys = 0

    for i in range(n_rows):
        if i >= block_end:
            out.submit("rows", (blk, inserts), new_member)
            new_member = bool(member_rows and i % member_rows == 0)
            blk, inserts = [], []
            append = blk.append
            block_end = i + BLOCK_ROWS
            if member_rows:
                block_end = min(block_end, (i // member_rows + 1) * member_rows)

        if bad_rate and rnd() < bad_rate:
            kind = bad_kinds[int(rnd() * len(bad_kinds))]
            inserts.append((len(blk), make_bad(kind)))
            n_bad += 1
            bad_by_kind[kind] += 1
            continue

        f = form_table[int(rnd() * 1000)]
        if nkeys and rnd() < dup_rate:
            prec = precs[f]
            n_rep += 1
            if rnd() < 0.85:
                k = nkeys - 1 - int(rnd() * (nkeys if nkeys < window else window))
            else:
                k = int(rnd() * nkeys)
            rep = krep.get(k)
            if rep is None:
                rep = krep[k] = [1, 0, kmax[k], kwinst[k]]
            if rnd() < oo_rate:
                # older than every earlier version of the key; never a final status
                ts = rep[2] - 1000 - int(rnd() ** 2 * 3600 * US)
                ts -= ts % prec
                st = 0 if (rep[3] == 0 or not status_col) else (0 if rnd() < 0.5 else 1)
                ver = rep[0]
                rep[0] = ver + 1
                rep[2] = ts
                rep[3] = st
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
                        ver = rep[0]
                        rep[0] = ver + 1
                        rep[1] = ver
                        kwinst[k] = st
                        n_tie += 1
                    else:
                        ver = rep[1]
                        st = kwinst[k]
                        n_exact += 1
                else:
                    ts = kmax[k] + 1000 + int(rnd() ** 3 * 7200 * US)
                    base = start_us + int(i * step_us)
                    if ts < base - 600 * US and rnd() < 0.5:
                        ts = base - int(rnd() * 600 * US)
                    ts += -ts % prec
                    ws = kwinst[k]
                    st = ws if (ws >= 2 or not status_col) else next_status[ws][int(rnd() * 100)]
                    ver = rep[0]
                    rep[0] = ver + 1
                    rep[1] = ver
                    kwinst[k] = st
                    kmax[k] = ts
                    n_in += 1
            append((k, korder[k], kctype[k], ver, st, ts, f))
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
            ts = start_us + int(i * step_us + rnd() * 90000000)
            ts -= ts % precs[f]
            st = first_status[ct][int(rnd() * 100)] if status_col else 0
            korder.append(o)
            kctype.append(ct)
            kmax.append(ts)
            kwinst.append(st)
            append((nkeys, o, ct, 0, st, ts, f))
            nkeys += 1
        if blank_rate and rnd() < blank_rate:
            inserts.append((len(blk), eol if rnd() < 0.7 else "   " + eol))
            n_blank += 1

    n_good = n_rows - n_bad
    n_new = nkeys
    out.submit("rows", (blk, inserts), new_member)
    out.close()

    stats = dict(rows=n_good + n_bad, good=n_good, bad=n_bad, keys=len(korder),
                 dedup_one_chunk=n_good - len(korder), new_keys=n_new, repeats=n_rep,
                 in_order=n_in, out_of_order=n_oo, ties=n_tie, exact_dups=n_exact,
                 blank_lines=n_blank, bad_by_kind=bad_by_kind)
    if a.expected:
        gz = a.expected != "-" and a.expected.lower().endswith(".gz")
        ex = Output(a.expected, 1 if gz else None, jobs)     # level 1: it is test data
        header = "tenant_id,channel,out_trade_no,callback_type,status,received_at,payload\n"
        n = len(korder)
        step = 2 * BLOCK_ROWS
        for s in range(0, max(n, 1), step):
            e = min(n, s + step)
            wins = [krep[k][1] if k in krep else 0 for k in range(s, e)]
            ex.submit("expected", (s, korder[s:e], kctype[s:e], wins, kwinst[s:e], kmax[s:e],
                                   header if s == 0 else ""))
        ex.close()
    return stats


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    t0 = time.time()
    stats = generate(a)
    stats["seconds"] = round(time.time() - t0, 3)
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
                stats["dedup_one_chunk"], stats["blank_lines"], stats["seconds"]))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        # e.g. | head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
