#!/usr/bin/env python3
"""expected_settle.py - the model `idemload settle` is checked against: what
SPEC.md's "Settle: the money that arrives" finds in a set of settlement-side
files and bank statements, computed here with small parsers of its own
(csv, xml.etree with no DTD accepted, a small MT940 reader), never by
calling idemload.

    expected_settle.py [--now ISO] [--tenant T] [--fee-rate CH=RATE]...
                       [--settle-window LO..HI] [--delay CH=DUR]...
                       [--table CSV] [--pending] FILE...
    expected_settle.py --self-test

prints one JSON object per discrepancy line, sorted: the members of the
contract between settle-core and this model (category, tenant, channel,
day, subject, currency, expected, actual, difference); with --pending, the
pending batches and payments too ({"pending": "batch"|"payment", ...}).

Files are told by their content: Stripe's payout reconciliation report
(automatic_payout_id) and balance report (balance_transaction_id,
reporting_category), WeChat Pay's trade bill (交易时间 ... 手续费) and
资金账单 (记账时间 ... 账户结余), Alipay's 业务明细 and 账务明细 (GBK, `#`
framed), camt.053 (BkToCstmrStmt) and MT940 (:20: ... :60F:).  The layouts
are those tests/make_settle.py writes, with their public sources named
there.

Readings of the spec where it is silent (settle-core had not decided when
this was written; each is marked READING below):
- fee rounding: half up to the currency's minor unit, for every channel
  (settle-core's settle_opts.h: round_half_up(g * percent / 100) + fixed);
- the same balance transaction listed by two Stripe reports is one record;
- fee_mismatch is judged per payment against the rate when one is given for
  the channel (one line per distinct fee a file states that differs);
  without a rate, the fund-side fee against the trade bill's (expected);
- a balance chain runs per channel and account through the files of that
  account in time order (a day's first row continues the previous day's
  last), rows of one second in the file's order, a file listing its newest
  row first (the real 账务明细 export) read upwards; after a break the
  stated balance is the new start;
- batch day: the day of the payout row (Stripe: created_utc; 提现: 记账时间)
  in the channel's zone; a credit matches a batch when its booking date is
  within [batch day + LO, batch day + HI]; matching is one-to-one on equal
  amounts first (earliest batch first, earliest credit chosen), then each
  credit left is matched with 2 to 4 unmatched batches of one tenant,
  channel and currency, all within their window, summing to it;
- a batch left unmatched is pending while IDEMLOAD_NOW is before the end of
  its window's last day in the channel's zone, else payout_not_received;
  a credit left unmatched is unexpected_deposit at once;
- a table payment is paid when a channel row with its key is linked to a
  batch (Stripe automatic_payout_id) or, where the channel gives no link,
  when the channel's account was credited with it (WeChat 资金账单 交易 row,
  through the trade bill's 微信订单号; Alipay 账务明细 在线支付 row's
  商户订单号); only channels whose settlement files were given are judged;
  unpaid within the channel's delay (default 2d, --delay; settle's --grace)
  after its time it is pending.
settle-core's branch (doc/settle.md, src/db/settle_sql.c at 585884d)
reads the same, but for the newest-first file (it chains top down).
"""
import csv
import datetime as dt
import io
import itertools
import json
import re
import sys
import xml.etree.ElementTree as ET
from decimal import Decimal, ROUND_HALF_UP

MINOR = {"JPY": 0, "KRW": 0, "VND": 0, "CLP": 0, "ISK": 0, "BHD": 3, "KWD": 3, "JOD": 3,
         "OMR": 3, "TND": 3}
ZONE = {"stripe": dt.timezone.utc, "wechat": dt.timezone(dt.timedelta(hours=8)),
        "alipay": dt.timezone(dt.timedelta(hours=8))}
DEFAULT_DELAY = 2 * 86400
MANY_MAX = 20              # smaller batches a credit may have for its sets to be searched


def digits(cur):
    return MINOR.get(cur, 2)


def render(d, cur):
    if d is None:
        return None
    return str(d.quantize(Decimal(1).scaleb(-digits(cur))))


def dec(text):
    t = text.strip().strip("`").strip().replace(",", "").replace("¥", "")
    if not re.fullmatch(r"[+-]?\d+(\.\d+)?", t):
        raise ValueError("not a decimal: %r" % text)
    return Decimal(t)


def parse_rate(text):
    """--fee-rate's RATE: "0.6%", "2.9%+0.30", or a fixed "0.30": (fraction, fixed)."""
    m = re.fullmatch(r"(?:(\d+(?:\.\d+)?)%)?(?:\+?(\d+(?:\.\d+)?))?", text)
    if not text or not m:
        raise ValueError("not a fee rate: %r" % text)
    return (Decimal(m.group(1) or 0) / 100, Decimal(m.group(2) or 0))


def rate_fee(gross, rate, cur):
    """The contracted fee of a payment: its percentage rounded half up to the
    currency's minor unit, plus the fixed part (settle-core's settle_opts.h
    says the same; WeChat states 四舍五入)."""
    pct, fixed = rate
    return (abs(gross) * pct).quantize(Decimal(1).scaleb(-digits(cur)),
                                       rounding=ROUND_HALF_UP) + fixed


def duration(text):
    m = re.fullmatch(r"(\d+)([dhm])", text)
    if not m:
        raise ValueError("not a duration: %r" % text)
    return int(m.group(1)) * {"d": 86400, "h": 3600, "m": 60}[m.group(2)]


class Row:
    """One row as settle_row.h describes it (the subset the checks use)."""
    def __init__(self, **kw):
        self.side, self.kind, self.channel, self.account = "channel", None, None, ""
        self.txn = self.order = self.batch = self.biz = None
        self.time = None            # aware datetime (channel) or date (bank)
        self.currency = None
        self.gross = self.fee = self.net = self.balance = None
        self.source = None          # "trade", "fund", "report", "bank"
        self.seq = 0                # its place in the account's history within the file
        self.file, self.line = None, 0
        self.__dict__.update(kw)

    def day(self):
        if isinstance(self.time, dt.datetime):
            return self.time.astimezone(ZONE[self.channel]).date()
        return self.time


def local(text, channel):
    t = dt.datetime.strptime(text.strip().strip("`"), "%Y-%m-%d %H:%M:%S")
    return t.replace(tzinfo=ZONE[channel])


# --- readers ------------------------------------------------------------
def read_csv_rows(text):
    return list(csv.reader(io.StringIO(text)))


def stripe_report(path, text):
    rows = read_csv_rows(text)
    head, out = rows[0], []
    ix = {c: i for i, c in enumerate(head)}
    for n, r in enumerate(rows[1:], 2):
        if not r:
            continue
        g = lambda c: r[ix[c]] if c in ix else ""       # noqa: E731
        cat = g("reporting_category")
        row = Row(channel="stripe", txn=g("balance_transaction_id"), file=path, line=n,
                  time=dt.datetime.strptime(g("created_utc"), "%Y-%m-%d %H:%M:%S")
                  .replace(tzinfo=dt.timezone.utc),
                  currency=g("currency").upper(), gross=dec(g("gross")), fee=dec(g("fee")),
                  net=dec(g("net")), order=g("payment_metadata[order_id]") or None,
                  batch=g("automatic_payout_id") or None, source="report")
        if cat == "charge":
            row.kind = "payment"
        elif cat == "payout":
            row.kind, row.batch = "payout", g("source_id")
        else:
            row.kind = cat
        if row.gross - row.fee != row.net:
            raise ValueError("%s line %d: gross - fee != net" % (path, n))
        out.append(row)
    return out


def wechat_trade(path, text):
    lines = [l for l in text.splitlines() if l.strip()]
    head = lines[0].split(",")
    ix = {c: i for i, c in enumerate(head)}
    out = []
    end = next(i for i, l in enumerate(lines) if l.startswith("总交易单数"))
    for n, l in enumerate(lines[1:end], 2):
        f = [x[1:] if x.startswith("`") else x for x in l.split(",")]
        if f[ix["交易状态"]] != "SUCCESS":
            continue
        gross = dec(f[ix["应结订单金额"]])
        fee = dec(f[ix["手续费"]])
        out.append(Row(channel="wechat", kind="payment", txn=f[ix["微信订单号"]],
                       order=f[ix["商户订单号"]], time=local(f[ix["交易时间"]], "wechat"),
                       currency=f[ix["货币种类"]] or "CNY", gross=gross, fee=fee, net=gross - fee,
                       source="trade", file=path, line=n))
    summ = dict(zip(lines[end].split(","), [x.strip("`") for x in lines[end + 1].split(",")]))
    if int(dec(summ["总交易单数"])) != end - 1:
        raise ValueError("%s: 总交易单数 %s, rows %d" % (path, summ["总交易单数"], end - 1))
    return out


def wechat_fund(path, text):
    lines = [l for l in text.splitlines() if l.strip()]
    head = lines[0].split(",")
    ix = {c: i for i, c in enumerate(head)}
    col = lambda *names: next(ix[n] for n in names if n in ix)   # noqa: E731
    i_amt, i_bal = col("收支金额(元)", "收支金额（元）"), col("账户结余(元)", "账户结余（元）")
    end = next(i for i, l in enumerate(lines) if l.startswith("资金流水总笔数"))
    out = []
    for n, l in enumerate(lines[1:end], 2):
        f = [x[1:] if x.startswith("`") else x for x in l.split(",")]
        amt = dec(f[i_amt])
        if f[ix["收支类型"]] == "支出":
            amt = -amt
        kind = {"交易": "payment", "扣除交易手续费": "fee", "提现": "payout"}.get(
            f[ix["业务类型"]], "adjustment")
        r = Row(channel="wechat", kind=kind, txn=f[ix["资金流水单号"]], biz=f[ix["微信支付业务单号"]],
                time=local(f[ix["记账时间"]], "wechat"), currency="CNY", net=amt,
                balance=dec(f[i_bal]), source="fund", file=path, line=n, account="wechat")
        if kind == "payout":
            r.batch = f[ix["业务凭证号"]] or r.txn
        if kind == "fee":
            r.fee = -amt
        out.append(r)
    summ = dict(zip(lines[end].split(","), [x.strip("`") for x in lines[end + 1].split(",")]))
    inc = [r.net for r in out if r.net > 0]
    exp = [-r.net for r in out if r.net < 0]
    count = lambda k: int(dec(summ[k]))     # noqa: E731 (v2 writes "4.0")
    if (count("资金流水总笔数"), count("收入笔数"), dec(summ["收入金额"]),
            count("支出笔数"), dec(summ["支出金额"])) != (
            len(out), len(inc), sum(inc, Decimal(0)), len(exp), sum(exp, Decimal(0))):
        raise ValueError("%s: the summary disagrees with the rows" % path)
    return out


def alipay_rows(text):
    body = [l for l in text.splitlines() if l.strip()]
    data = [l for l in body if not l.startswith("#")]
    foot = [l for l in body if l.startswith("#")]
    rows = read_csv_rows("\n".join(data))
    return [[x.strip("\t") for x in r] for r in rows], foot


def alipay_trade(path, text):
    rows, foot = alipay_rows(text)
    ix = {c: i for i, c in enumerate(rows[0])}
    out = []
    for n, f in enumerate(rows[1:], 1):
        if f[ix["业务类型"]] != "交易":
            continue
        gross = dec(f[ix["订单金额（元）"]])
        fee = abs(dec(f[ix["服务费（元）"]]))      # its sign unverified: its magnitude
        out.append(Row(channel="alipay", kind="payment", txn=f[ix["支付宝交易号"]],
                       order=f[ix["商户订单号"]], time=local(f[ix["完成时间"]], "alipay"),
                       currency="CNY", gross=gross, fee=fee, net=gross - fee, source="trade",
                       file=path, line=n))
    m = [re.match(r"#交易合计：(\d+)笔", l) for l in foot]
    count = next(int(x.group(1)) for x in m if x)
    if count != len(out):
        raise ValueError("%s: #交易合计 %d, rows %d" % (path, count, len(out)))
    return out


def alipay_ledger(path, text):
    rows, foot = alipay_rows(text)
    ix = {c: i for i, c in enumerate(rows[0])}
    out = []
    for n, f in enumerate(rows[1:], 1):
        inc, exp = dec(f[ix["收入金额（+元）"]]), dec(f[ix["支出金额（-元）"]])
        net = inc - abs(exp)
        kind = {"在线支付": "payment", "交易付款": "payment", "手续费": "fee", "收费": "fee",
                "提现": "payout"}.get(f[ix["业务类型"]], "adjustment")
        r = Row(channel="alipay", kind=kind, txn=f[ix["账务流水号"]], biz=f[ix["业务流水号"]],
                order=f[ix["商户订单号"]] or None, time=local(f[ix["发生时间"]], "alipay"),
                currency="CNY", net=net, balance=dec(f[ix["账户余额（元）"]]), source="fund",
                file=path, line=n, account="alipay")
        if kind == "payout":
            r.batch = r.biz
        if kind == "fee":
            r.fee = -net
        out.append(r)
    # The export lists the newest row first: a balance follows the row
    # below it.  Rows in the same second keep the file's order, read upwards.
    if len(out) > 1 and out[0].time > out[-1].time:
        out.reverse()
    got = {}
    for l in foot:
        m = re.match(r"#(支出|收入)合计：(\d+)笔，共(-?[\d.]+)元", l)
        if m:
            got[m.group(1)] = (int(m.group(2)), abs(Decimal(m.group(3))))
    inc = [r.net for r in out if r.net > 0]
    exp = [-r.net for r in out if r.net < 0]
    if got.get("收入") != (len(inc), sum(inc, Decimal(0))) or \
            got.get("支出") != (len(exp), sum(exp, Decimal(0))):
        raise ValueError("%s: the 合计 footers disagree with the rows" % path)
    return out


def camt(path, data):
    # No DTD at all: an entity is never expanded, an external one never fetched.
    if re.search(rb"<!(DOCTYPE|ENTITY)", data):
        raise ValueError("%s: a DTD, refused" % path)
    root = ET.fromstring(data)

    def local_name(e):
        return e.tag.rsplit("}", 1)[-1]

    def find(e, *path_):
        for step in path_:
            e = next((c for c in e if local_name(c) == step), None)
            if e is None:
                return None
        return e

    def text(e, *path_):
        x = find(e, *path_)
        return x.text.strip() if x is not None and x.text else None

    out = []
    stmts = [s for s in root.iter() if local_name(s) == "Stmt"]
    for st in stmts:
        bal = {}
        for b in (c for c in st if local_name(c) == "Bal"):
            v = dec(text(b, "Amt"))
            bal[text(b, "Tp", "CdOrPrtry", "Cd")] = v if text(b, "CdtDbtInd") == "CRDT" else -v
        total = Decimal(0)
        n = 0
        for e in (c for c in st if local_name(c) == "Ntry"):
            n += 1
            v = dec(text(e, "Amt"))
            cur = find(e, "Amt").get("Ccy")
            v = v if text(e, "CdtDbtInd") == "CRDT" else -v
            total += v
            out.append(Row(side="bank", channel="bank",
                           kind="bank_credit" if v > 0 else "bank_debit", txn=text(e, "AcctSvcrRef"),
                           time=dt.date.fromisoformat(text(e, "BookgDt", "Dt")), currency=cur,
                           net=v, source="bank", file=path, line=n))
        if "OPBD" in bal and "CLBD" in bal and bal["OPBD"] + total != bal["CLBD"]:
            raise ValueError("%s: opening + entries != closing" % path)
    return out


def mt940(path, text):
    out, opening, total, n = [], None, Decimal(0), 0
    fields = re.findall(r"^:(\w+):(.*)$", text, re.M)

    def amount(s):
        return Decimal(s.replace(",", "."))
    for tag, val in fields:
        if tag in ("60F", "60M"):
            m = re.fullmatch(r"([CD])(\d{6})([A-Z]{3})([\d,]+)", val.strip())
            opening = amount(m.group(4)) * (1 if m.group(1) == "C" else -1)
            cur, total = m.group(3), Decimal(0)     # each statement on its own
        elif tag == "61":
            m = re.fullmatch(r"(\d{6})(\d{4})?(R?[CD])([A-Z])?([\d,]+)[NSF](\w{3})([^/]*)(//(\S+))?.*",
                             val.strip())
            n += 1
            v = amount(m.group(5)) * (1 if m.group(3) in ("C", "RD") else -1)
            total += v
            out.append(Row(side="bank", channel="bank",
                           kind="bank_credit" if v > 0 else "bank_debit",
                           txn=m.group(9) or m.group(7),
                           time=dt.datetime.strptime(m.group(1), "%y%m%d").date(), currency=cur,
                           net=v, source="bank", file=path, line=n))
        elif tag in ("62F", "62M"):
            m = re.fullmatch(r"([CD])(\d{6})([A-Z]{3})([\d,]+)", val.strip())
            closing = amount(m.group(4)) * (1 if m.group(1) == "C" else -1)
            if opening + total != closing:
                raise ValueError("%s: :60F: + entries != :62F:" % path)
    return out


def read_file(path):
    rows = read_rows(path)
    for i, r in enumerate(rows):
        r.seq = i           # the order of the account's history within the file
    return rows


def read_rows(path):
    data = open(path, "rb").read()
    if data.lstrip().startswith(b"<") and b"BkToCstmrStmt" in data:
        return camt(path, data)
    if re.search(rb"^:20:", data, re.M) and b":60F:" in data:
        return mt940(path, data.decode("ascii"))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("gbk")
    first = next(l for l in text.splitlines() if l.strip() and not l.startswith("#"))
    if first.startswith("automatic_payout_id") or "balance_transaction_id" in first:
        return stripe_report(path, text)
    if first.startswith("交易时间"):
        return wechat_trade(path, text)
    if first.startswith("记账时间"):
        return wechat_fund(path, text)
    if first.startswith("支付宝交易号"):
        return alipay_trade(path, text)
    if first.startswith("账务流水号"):
        return alipay_ledger(path, text)
    raise ValueError("%s: not a file settle reads" % path)


def read_table(path):
    """The canonical CSV's payments: (channel, key, amount, currency, time)."""
    out = []
    with open(path, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["callback_type"] != "pay":
                continue
            p = json.loads(r["payload"], parse_float=Decimal)
            t = dt.datetime.fromisoformat(r["received_at"].replace("Z", "+00:00"))
            out.append({"tenant": r["tenant_id"], "channel": r["channel"],
                        "key": r["out_trade_no"], "amount": dec(str(p["amount"])),
                        "currency": p["currency"], "time": t})
    return out


# --- the checks ---------------------------------------------------------
def line(cat, tenant, channel, day, subject, cur, expected, actual):
    diff = actual - expected if expected is not None and actual is not None else None
    return {"category": cat, "tenant": tenant, "channel": channel, "day": str(day),
            "subject": subject, "currency": cur, "expected": render(expected, cur),
            "actual": render(actual, cur), "difference": render(diff, cur)}


def settle(rows, table, now, tenant="1", rates=None, window=(0, 3), delays=None):
    rates, delays = rates or {}, delays or {}
    lines, pending = [], []
    chan = [r for r in rows if r.side == "channel"]
    # one record per (channel, source kind, txn): READING (Stripe's two reports)
    seen, uniq = {}, []
    for r in chan:
        k = (r.channel, r.source, r.kind, r.txn)
        if k not in seen:
            seen[k] = r
            uniq.append(r)
        else:
            # the payout reconciliation report names the batch, the balance
            # report its order: one record, the facts of both
            seen[k].batch = seen[k].batch or r.batch
            seen[k].order = seen[k].order or r.order
    chan = uniq
    payments = [r for r in chan if r.kind == "payment" and r.source in ("trade", "report")]

    # fee_mismatch
    fund_fee = {}
    for r in chan:
        if r.kind == "fee" and r.source == "fund":
            fund_fee.setdefault((r.channel, r.biz), []).append(r.fee)
    for p in payments:
        fees = [p.fee] + fund_fee.get((p.channel, p.txn), [])
        if p.channel in rates:
            exp = rate_fee(p.gross, rates[p.channel], p.currency)
            for f in sorted(set(fees)):
                if f != exp:
                    lines.append(line("fee_mismatch", tenant, p.channel, p.day(), p.txn,
                                      p.currency, exp, f))
        else:
            for f in sorted(set(fees[1:])):
                if f != p.fee:
                    lines.append(line("fee_mismatch", tenant, p.channel, p.day(), p.txn,
                                      p.currency, p.fee, f))

    # payout_mismatch
    batches = [r for r in chan if r.kind == "payout"]
    linked = {}
    for r in chan:
        if r.source == "report" and r.kind != "payout" and r.batch:
            linked.setdefault((r.channel, r.batch), []).append(r.net)
    for b in batches:
        nets = linked.get((b.channel, b.batch))
        if nets is not None and sum(nets, Decimal(0)) != -b.net:
            lines.append(line("payout_mismatch", tenant, b.channel, b.day(), b.batch, b.currency,
                              sum(nets, Decimal(0)), -b.net))

    # balance_break: per channel and account, in time order (file order within a time)
    chains = {}
    for r in chan:
        if r.balance is not None:
            chains.setdefault((r.channel, r.account), []).append(r)
    for k, rs in chains.items():
        rs.sort(key=lambda r: (r.time, r.file, r.seq))
        for prev, r in zip(rs, rs[1:]):
            if prev.balance + r.net != r.balance:
                lines.append(line("balance_break", tenant, r.channel, r.day(), r.txn, r.currency,
                                  prev.balance + r.net, r.balance))

    # batches against the bank
    lo, hi = window
    credits = sorted((r for r in rows if r.side == "bank" and r.net > 0),
                     key=lambda r: (r.time, r.txn))
    batches.sort(key=lambda b: (b.time, b.batch))
    matched_c, matched_b = {}, set()

    def in_window(b, c):
        return b.day() + dt.timedelta(days=lo) <= c.time <= b.day() + dt.timedelta(days=hi)

    for b in batches:
        for c in credits:
            if id(c) not in matched_c and c.currency == b.currency and c.net == -b.net \
                    and in_window(b, c):
                matched_c[id(c)] = [b]
                matched_b.add(id(b))
                break
    for c in credits:
        if id(c) in matched_c:
            continue
        left = [b for b in batches if id(b) not in matched_b and b.currency == c.currency
                and in_window(b, c)]
        if sum(1 for b in left if 0 < -b.net < c.net) > MANY_MAX:
            continue        # the search grows as the fourth power: not done
        done = False
        for size in range(2, 5):
            for combo in itertools.combinations(left, size):
                if len({b.channel for b in combo}) == 1 and \
                        sum((-b.net for b in combo), Decimal(0)) == c.net:
                    matched_c[id(c)] = list(combo)
                    matched_b.update(id(b) for b in combo)
                    done = True
                    break
            if done:
                break
    for b in batches:
        if id(b) in matched_b:
            continue
        close = dt.datetime.combine(b.day() + dt.timedelta(days=hi + 1), dt.time(),
                                    ZONE[b.channel])
        if now < close:
            pending.append({"pending": "batch", "channel": b.channel, "subject": b.batch,
                            "day": str(b.day())})
        else:
            lines.append(line("payout_not_received", tenant, b.channel, b.day(), b.batch,
                              b.currency, -b.net, None))
    for c in credits:
        if id(c) not in matched_c:
            lines.append(line("unexpected_deposit", tenant, "bank", c.time, c.txn, c.currency,
                              None, c.net))

    # unsettled_payment
    judged = {r.channel for r in chan}
    paid = set()
    wx_key = {p.txn: p.order for p in payments if p.channel == "wechat"}
    for r in chan:
        if r.source == "report" and r.kind == "payment" and r.batch and r.order:
            paid.add((r.channel, r.order))
        if r.source == "fund" and r.kind == "payment":
            key = r.order if r.channel == "alipay" else wx_key.get(r.biz)
            if key:
                paid.add((r.channel, key))
    # Only the period's payments are judged: the days of every row read
    # (SPEC "Settle": period as reconcile's, the days the rows fall in).
    days = [r.day() for r in rows]
    first, last = (min(days), max(days)) if days else (None, None)
    for t in table:
        if t["tenant"] != tenant or t["channel"] not in judged or (t["channel"], t["key"]) in paid:
            continue
        day = t["time"].astimezone(ZONE[t["channel"]]).date()
        if first is None or not first <= day <= last:
            continue
        if now < t["time"] + dt.timedelta(seconds=delays.get(t["channel"], DEFAULT_DELAY)):
            pending.append({"pending": "payment", "channel": t["channel"], "subject": t["key"],
                            "day": str(day)})
        else:
            lines.append(line("unsettled_payment", tenant, t["channel"], day, t["key"],
                              t["currency"], t["amount"], None))
    key = lambda d: json.dumps(d, sort_keys=True, ensure_ascii=False)   # noqa: E731
    return sorted({key(l): l for l in lines}.values(), key=key), sorted(pending, key=key)


def self_test():
    wx, st = parse_rate("0.6%"), parse_rate("2.9%+0.30")
    assert rate_fee(Decimal("99.00"), wx, "CNY") == Decimal("0.59")
    assert rate_fee(Decimal("0.75"), wx, "CNY") == Decimal("0.00")
    assert rate_fee(Decimal("7.50"), wx, "CNY") == Decimal("0.05")       # 0.045: half up
    assert rate_fee(Decimal("150"), parse_rate("2.9%"), "JPY") == Decimal("4")   # 4.35
    assert rate_fee(Decimal("10.00"), st, "USD") == Decimal("0.59")      # 0.29 + 0.30
    assert rate_fee(Decimal("10.00"), parse_rate("0.30"), "USD") == Decimal("0.30")
    for bad in ("", "%", "abc", "1%%"):
        try:
            parse_rate(bad)
        except ValueError:
            continue
        raise AssertionError(bad)
    assert render(Decimal("-1"), "CNY") == "-1.00" and render(None, "CNY") is None
    assert dec("`1,234.50") == Decimal("1234.50") and dec("¥0.59000") == Decimal("0.59")
    for bad in ("1e3", "", "abc", "0x10"):
        try:
            dec(bad)
        except ValueError:
            continue
        raise AssertionError(bad)
    assert duration("2d") == 172800 and duration("90m") == 5400
    print("expected_settle self-test ok")


def run(argv):
    """The lines and pending items for a command line (without --self-test)."""
    now, tenant, rates, window, delays, table, files = \
        dt.datetime.now(dt.timezone.utc), "1", {}, (0, 3), {}, None, []
    it = iter(argv)
    for a in it:
        if a == "--now":
            now = dt.datetime.fromisoformat(next(it).replace("Z", "+00:00"))
        elif a == "--tenant":
            tenant = next(it)
        elif a == "--fee-rate":
            ch, _, r = next(it).partition("=")
            rates[ch] = parse_rate(r)
        elif a == "--settle-window":
            m = re.fullmatch(r"(\d+)d?\.\.(\d+)d", next(it))
            window = (int(m.group(1)), int(m.group(2)))
        elif a == "--delay":
            ch, _, d = next(it).partition("=")
            delays[ch] = duration(d)
        elif a == "--table":
            table = next(it)
        elif a != "--pending":
            files.append(a)
    rows = []
    for f in files:
        rows += read_file(f)
    return settle(rows, read_table(table) if table else [], now, tenant, rates, window, delays)


def main(argv):
    if "--self-test" in argv:
        return self_test()
    lines, pending = run(argv)
    for l in lines + (pending if "--pending" in argv else []):
        print(json.dumps(l, sort_keys=True, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1:])
