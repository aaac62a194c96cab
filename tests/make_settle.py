#!/usr/bin/env python3
"""make_settle.py SEED OUTDIR [--newest-first] [--per-day N] [--bank-csv]
                 [--plant NAME[:CHANNEL]]...
One consistent scenario for `idemload settle` (SPEC.md, "Settle: the money that arrives"):
the channels' settlement-side files, the bank statements the batches reach,
and the target table's payments, for tests/expected_settle.py (the model) and
tests/db/test_settle_model.sh to read.  Values are made up; the layouts are
the real ones, each with its public source named beside its writer.

Tenant 1, four days of payments (2026-11-15..18) on three channels:
- stripe (USD, UTC): each day's charges, less a refund of 30% of the
  previous day's first charge, are paid out by one automatic payout
  created the next day at 00:05 UTC, arriving the day after; the payout
  reconciliation report lists the charges with their automatic_payout_id,
  the balance report every balance transaction (charges and payouts);
- wechat and alipay (CNY, Asia/Shanghai): the trade bill with its fee column,
  and one fund bill (资金账单 / 账务明细) per day: each payment credited,
  its fee deducted, and at 09:00 the next day the previous day's net
  withdrawn (提现) to the bank: a running balance, no batch link.
The stripe payouts reach a camt.053 statement (USD account), the wechat and
alipay withdrawals an MT940 statement (CNY account), each the day after the
batch.  Fees follow the contracted rates stripe=2.9%, wechat=0.6%,
alipay=0.6%, rounded half up to the cent; no gross is drawn whose fee falls
on a half cent, so the rounding rule chosen cannot change a result here
(tests/cli/test_expected_settle.sh pins the model's own reading on a tie).
Run the scenario with IDEMLOAD_NOW=2026-11-21T12:00:00Z, --tenant 1,
--fee-rate stripe=2.9% --fee-rate wechat=0.6% --fee-rate alipay=0.6% and
--settle-window 0..3d (scenario.json holds these).

Plants (each yields exactly one discrepancy line, or none where said):
  fee_off[:stripe|wechat|alipay]      the second payment of 11-16 charged one
                                       cent more than the rate, in every file
                                       of the channel (fee_mismatch)
  batch_short[:stripe]                the batch of 11-15's charges pays 1.00
                                       less than their nets (payout_mismatch)
  row_removed[:wechat|alipay]         11-16's fund bill loses the fee row of
                                       its first payment, its summary or
                                       footers still agreeing (balance_break)
  last_removed[:wechat|alipay]        11-16's fund bill loses its last row (a
                                       fee): the break is on 11-17's first row,
                                       in the next day's file (balance_break)
  never_credited[:CHANNEL]            the batch of 11-15's payments never
                                       reaches the bank (payout_not_received)
  stray_credit[:stripe|wechat|alipay] the bank statement of that channel's
                                       currency holds a credit of 11-19 that no
                                       batch explains (unexpected_deposit)
  table_only[:CHANNEL]                the table holds a payment of 11-15 that
                                       no file of the channel lists
                                       (unsettled_payment)
  two_in_one[:CHANNEL]                the batches of 11-16's and 11-17's
                                       payments reach the bank as one credit
                                       on 11-19 (many-to-one: no line)
  window_open[:CHANNEL]               the batch of 11-18's payments has not
                                       reached the bank yet; its window is
                                       open at IDEMLOAD_NOW (pending, no line)

The Alipay 账务明细 is written in time order; the real export lists its
newest row first, which --newest-first writes (settle at settle-core
585884d chains such a file top down and finds false breaks: the default
stays time order until it reads one upwards, so that tests/db/test_settle.sh
and test_settle_model.sh pass; test_expected_settle.sh checks the model on
both orders).

Files written: table.csv, stripe-payouts.csv, stripe-balance.csv,
wechat-trade.csv, wechat-fund-YYYYMMDD.csv, alipay-trade.csv,
alipay-ledger-YYYYMMDD.csv, bank-usd.camt053.xml, bank-cny.mt940,
scenario.json.
"""
import datetime as dt
import json
import os
import random
import sys
from decimal import Decimal, ROUND_HALF_UP

TENANT = "1"
DAYS = [dt.date(2026, 11, 15) + dt.timedelta(days=i) for i in range(4)]
NOW = "2026-11-21T12:00:00Z"
RATES = {"stripe": "2.9%", "wechat": "0.6%", "alipay": "0.6%"}
CURRENCY = {"stripe": "USD", "wechat": "CNY", "alipay": "CNY"}
OFFSET = {"stripe": 0, "wechat": 8, "alipay": 8}     # hours east of UTC
CHANNELS = ["stripe", "wechat", "alipay"]
PLANTS = {"fee_off": "wechat", "batch_short": "stripe", "row_removed": "wechat",
          "last_removed": "alipay",
          "never_credited": "stripe", "stray_credit": "stripe", "table_only": "stripe",
          "two_in_one": "stripe", "window_open": "wechat"}
ALLOWED = {"batch_short": {"stripe"}, "row_removed": {"wechat", "alipay"},
           "last_removed": {"wechat", "alipay"}}
CENT = Decimal("0.01")
NEWEST_FIRST = False        # --newest-first: 账务明细 as the real export
PER_DAY = None              # --per-day N: N payments a day and channel (2-4 drawn)


def rate(channel):
    return Decimal(RATES[channel].rstrip("%")) / 100


def money(d):
    return str(d.quantize(CENT))


class Payment:
    def __init__(self, channel, day, i, t, gross):
        self.channel, self.day, self.i, self.time, self.gross = channel, day, i, t, gross
        self.fee = (gross * rate(channel)).quantize(CENT, rounding=ROUND_HALF_UP)
        self.key = "%s%s%02d" % (channel[0].upper(), day.strftime("%Y%m%d"), i)

    @property
    def net(self):
        return self.gross - self.fee

    def utc(self):
        return self.time - dt.timedelta(hours=OFFSET[self.channel])


class Batch:
    def __init__(self, channel, pay_day, batch_id, t, payments):
        self.channel, self.pay_day, self.id, self.time = channel, pay_day, batch_id, t
        self.payments = payments
        self.refunds = []       # (txn, time, amount, payment refunded): stripe
        self.amount = sum((p.net for p in payments), Decimal(0))   # what it pays

    def credit_day(self):
        return self.time.date() + dt.timedelta(days=1)


def draw_gross(rng, channel):
    while True:
        g = Decimal(rng.randint(100, 60000)) / 100
        third = (g * rate(channel) * 1000) % 10
        if third != 5:          # never a half cent: see the docstring
            return g


def parse_plants(args):
    plants = {}
    for a in args:
        name, _, ch = a.partition(":")
        if name not in PLANTS:
            sys.exit("make_settle.py: unknown plant %r (known: %s)" % (name, ", ".join(PLANTS)))
        ch = ch or PLANTS[name]
        if ch not in CHANNELS or (name in ALLOWED and ch not in ALLOWED[name]):
            sys.exit("make_settle.py: plant %s cannot be on channel %r" % (name, ch))
        plants[name] = ch
    return plants


def scenario(seed, plants):
    rng = random.Random(seed)
    pays, batches = {}, {}
    for ch in CHANNELS:
        pays[ch], batches[ch] = [], []
        for day in DAYS:
            n = PER_DAY or rng.randint(2, 4)
            span = range(3600, 20 * 3600)   # more payments than seconds: some share one
            secs = sorted(rng.sample(span, n) if n <= len(span) else rng.choices(span, k=n))
            day_pays = [Payment(ch, day, i + 1, dt.datetime.combine(day, dt.time()) +
                                dt.timedelta(seconds=s), draw_gross(rng, ch))
                        for i, s in enumerate(secs)]
            pays[ch] += day_pays
            nxt = dt.datetime.combine(day + dt.timedelta(days=1), dt.time())
            if ch == "stripe":
                b = Batch(ch, day, "po_%d%s" % (seed, day.strftime("%m%d")),
                          nxt + dt.timedelta(minutes=5), day_pays)
                if batches[ch]:
                    # 30% of the previous day's first charge refunded at
                    # 21:00, paid out (netted) with this day's charges
                    of = batches[ch][-1].payments[0]
                    amt = (of.gross * 3 / 10).quantize(CENT)
                    b.refunds.append(("txn_%d%sR" % (seed, day.strftime("%m%d")),
                                      dt.datetime.combine(day, dt.time(21)), amt, of))
                    b.amount -= amt
            else:
                b = Batch(ch, day, "%s%d%s" % ("WD" if ch == "wechat" else "TX", seed,
                                               day.strftime("%m%d")),
                          nxt + dt.timedelta(hours=9), day_pays)
            batches[ch].append(b)
    if "fee_off" in plants:
        p = [x for x in pays[plants["fee_off"]] if x.day == DAYS[1]][1]
        p.fee += CENT
        for b in batches[p.channel]:
            if p in b.payments:
                b.amount -= CENT
    if "batch_short" in plants:
        batches["stripe"][0].amount -= Decimal("1.00")
    extra = None
    if "table_only" in plants:
        ch = plants["table_only"]
        extra = Payment(ch, DAYS[0], max(99, (PER_DAY or 0) + 1),
                        dt.datetime.combine(DAYS[0], dt.time(21, 30)), draw_gross(rng, ch))
    amounts = [b.amount for ch in CHANNELS for b in batches[ch]]
    if len(set(amounts)) != len(amounts):
        raise ValueError("two batches of one amount")
    return rng, pays, batches, extra


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


# --- stripe -------------------------------------------------------------
# Layouts: Stripe's report types (docs.stripe.com/reports/report-types,
# "Payout reconciliation" payout_reconciliation.itemized.5 and "Balance"
# balance_change_from_activity.itemized.3, columns chosen with the
# `columns` parameter), amounts in major units, payouts negative with
# reporting_category payout and source_id po_...; the balance report's
# columns as tests/make_bills.py writes them (channel-formats.md section 4).
ST_PAYOUT_COLS = ["automatic_payout_id", "automatic_payout_effective_at_utc",
                  "balance_transaction_id", "created_utc", "available_on_utc", "currency",
                  "gross", "fee", "net", "reporting_category", "source_id", "description",
                  "payment_metadata[order_id]"]
ST_BAL_COLS = ["balance_transaction_id", "created_utc", "available_on_utc", "currency", "gross",
               "fee", "net", "reporting_category", "source_id", "charge_id", "payment_intent_id",
               "payment_metadata[order_id]", "description"]


def stamp(t):
    return t.strftime("%Y-%m-%d %H:%M:%S")


def stripe_files(out, seed, pays, batches):
    rec, bal = [], []
    for b in batches:
        arrive = dt.datetime.combine(b.time.date() + dt.timedelta(days=1), dt.time())
        for p in b.payments:
            txn = "txn_%d%s%02d" % (seed, p.day.strftime("%m%d"), p.i)
            avail = stamp(dt.datetime.combine(p.day + dt.timedelta(days=1), dt.time()))
            rec.append([b.id, stamp(arrive), txn, stamp(p.time), avail, "usd", money(p.gross),
                        money(p.fee), money(p.net), "charge", "ch_" + txn[4:],
                        "Order " + p.key, p.key])
            bal.append((p.time, [txn, stamp(p.time), avail, "usd", money(p.gross), money(p.fee),
                                 money(p.net), "charge", "ch_" + txn[4:], "ch_" + txn[4:],
                                 "pi_" + txn[4:], p.key, "Order " + p.key]))
        for txn, t, amt, of in b.refunds:
            ch_id = "ch_%d%s%02d" % (seed, of.day.strftime("%m%d"), of.i)
            rec.append([b.id, stamp(arrive), txn, stamp(t), stamp(t), "usd", money(-amt), "0.00",
                        money(-amt), "refund", "re_" + txn[4:], "Refund for " + of.key, of.key])
            bal.append((t, [txn, stamp(t), stamp(t), "usd", money(-amt), "0.00", money(-amt),
                            "refund", "re_" + txn[4:], ch_id, "pi_" + ch_id[3:], of.key,
                            "Refund for " + of.key]))
        bal.append((b.time, ["txn_" + b.id, stamp(b.time), stamp(b.time), "usd",
                             money(-b.amount), "0.00", money(-b.amount), "payout", b.id, "", "",
                             "", "STRIPE PAYOUT"]))
    bal.sort(key=lambda x: x[0])
    write(os.path.join(out, "stripe-payouts.csv"), (
        ",".join(ST_PAYOUT_COLS) + "\n" + "".join(",".join(r) + "\n" for r in rec)).encode())
    write(os.path.join(out, "stripe-balance.csv"), (
        ",".join(ST_BAL_COLS) + "\n" + "".join(",".join(r) + "\n" for _, r in bal)).encode())


# --- wechat -------------------------------------------------------------
# Trade bill: the ALL layout of pay.weixin.qq.com/docs/merchant/products/
# bill-download/format-trade.html (channel-formats.md section 1), written as
# tests/make_bills.py writes it: every field backtick-prefixed, CRLF, the
# summary on the last two lines; 手续费 with five decimals, 费率 with %.
# Fund bill (资金账单, account_type BASIC): pay.weixin.qq.com/docs/merchant/
# products/bill-download/format-fundflow.html; its header as the aliases of
# dromara/dax-pay WxReconcileFundFlowDetail.java name it (收支金额(元),
# 账户结余(元)); summary 资金流水总笔数,收入笔数,收入金额,支出笔数,支出金额
# (the summary class of a public Node SDK, TradeFundflowSummaryInfo).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_bills import WX_ALL, wx_row, ap_row, AP_COLS  # noqa: E402

WX_FUND = ("记账时间,微信支付业务单号,资金流水单号,业务名称,业务类型,收支类型,收支金额(元),"
           "账户结余(元),资金变更提交申请人,备注,业务凭证号").split(",")
WX_SUMMARY = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额"


def wx_txn(seed, p):
    return "42%08d%s%02d" % (seed % 10 ** 8, p.day.strftime("%Y%m%d"), p.i)


def wechat_files(out, seed, pays, batches, plants, opening):
    rows = []
    for p in pays:
        rows.append(wx_row(WX_ALL, 交易时间=stamp(p.time), 微信订单号=wx_txn(seed, p),
                           商户订单号=p.key, 交易状态="SUCCESS", 应结订单金额=money(p.gross),
                           订单金额=money(p.gross), 手续费="%s000" % money(p.fee), 费率="0.60%"))
    total = money(sum((p.gross for p in pays), Decimal(0)))
    fees = sum((p.fee for p in pays), Decimal(0))
    summary = [str(len(pays)), total, "0.00", "0.00", "%s000" % money(fees), total, "0.00"]
    lines = [",".join(WX_ALL)] + rows + [WX_SUMMARY, ",".join("`" + s for s in summary)]
    write(os.path.join(out, "wechat-trade.csv"), ("\r\n".join(lines) + "\r\n").encode())
    fund_days(out, seed, "wechat", pays, batches, plants, opening)


def fund_days(out, seed, ch, pays, batches, plants, opening):
    """One fund bill per day from the first payment day to the last batch's."""
    events = []   # (time, order, kind, payment or batch)
    for p in pays:
        events.append((p.time, 0, "pay", p))
        events.append((p.time, 1, "fee", p))
    for b in batches:
        events.append((b.time, 0, "out", b))
    events.sort(key=lambda e: (e[0], e[1]))
    bal = opening
    by_day = {}
    n = 0
    for t, _, kind, x in events:
        n += 1
        if kind == "pay":
            amt, bal = x.gross, bal + x.gross
        elif kind == "fee":
            amt, bal = -x.fee, bal - x.fee
        else:
            amt, bal = -x.amount, bal - x.amount
        by_day.setdefault(t.date(), []).append((t, kind, x, amt, bal, n))
    for day, evs in sorted(by_day.items()):
        if plants.get("row_removed") == ch and day == DAYS[1]:
            first = [e for e in evs if e[1] == "fee"][0]
            evs = [e for e in evs if e is not first]
        if plants.get("last_removed") == ch and day == DAYS[1]:
            assert evs[-1][1] == "fee"
            evs = evs[:-1]
        writer = wechat_fund if ch == "wechat" else alipay_ledger
        writer(out, seed, day, evs)


def wechat_fund(out, seed, day, evs):
    rows = []
    for t, kind, x, amt, bal, n in evs:
        flow = "%d%s%06d" % (seed, day.strftime("%Y%m%d"), n)
        name, kind_text, ref = {"pay": ("交易", "交易", ""), "fee": ("扣除交易手续费", "扣除交易手续费", ""),
                                "out": ("提现", "提现", "")}[kind]
        biz = wx_txn(seed, x) if kind != "out" else x.id
        if kind == "out":
            ref = x.id
        f = [stamp(t), biz, flow, name, kind_text, "收入" if amt > 0 else "支出", money(abs(amt)),
             money(bal), "system" if kind != "out" else "1900000109API", "", ref]
        rows.append(",".join("`" + v for v in f))
    inc = [e[3] for e in evs if e[3] > 0]
    exp = [-e[3] for e in evs if e[3] < 0]
    summ = [str(len(evs)), str(len(inc)), money(sum(inc, Decimal(0))), str(len(exp)),
            money(sum(exp, Decimal(0)))]
    lines = [",".join(WX_FUND)] + rows + ["资金流水总笔数,收入笔数,收入金额,支出笔数,支出金额",
                                          ",".join("`" + s for s in summ)]
    write(os.path.join(out, "wechat-fund-%s.csv" % day.strftime("%Y%m%d")),
          ("\r\n".join(lines) + "\r\n").encode())


# --- alipay -------------------------------------------------------------
# Trade bill: the 25-column 业务明细 of alipay.data.dataservice.bill.downloadurl.
# query (channel-formats.md section 2; dromara/dax-pay
# AlipayReconcileBillDetail.java), GBK, `#` framing and 合计 footers, ID-like
# fields ending with a TAB: written by tests/make_bills.py's ap_row, with the
# fee in 服务费（元） (written negative, money taken: unverified, the model
# reads its magnitude).
# 账务明细 (bill_type signcustomer): the header, `#` framing, trailing TABs,
# the newest row first (--newest-first; time order by default, see the top),
# amounts unsigned in 收入金额（+元） and 支出金额（-元）,
# and the footers #支出合计：N笔，共X元 / #收入合计：N笔，共Y元 of a real export
# of 2012-12-29 quoted in a public reconciliation class (code search id
# 23331272793, CheckDataAliPayImp.java; channel-formats.md [A7]); 手续费 and
# 提现 rows as settle-channel's fixture derived from it shows them
# (tests/fixtures/settle/alipay-account-2012-12-29.csv on its branch).


def ap_txn(seed, p):
    return "2026%08d%s%02d" % (seed % 10 ** 8, p.day.strftime("%m%d"), p.i)


def alipay_files(out, seed, pays, batches, plants, opening):
    rows = []
    for p in pays:
        r = ap_row(ap_txn(seed, p), p.key, "交易", stamp(p.time),
                   stamp(p.time + dt.timedelta(seconds=7)), money(p.gross)).split(",")
        r[AP_COLS.index("服务费（元）")] = money(-p.fee)
        rows.append(",".join(r))
    total = money(sum((p.gross for p in pays), Decimal(0)))
    lines = ["#支付宝业务明细查询", "#账号：[20881234567890120156]",
             "#起始日期：[%s 00:00:00]   终止日期：[%s 00:00:00]" % (
                 DAYS[0].strftime("%Y年%m月%d日"),
                 (DAYS[-1] + dt.timedelta(days=1)).strftime("%Y年%m月%d日")),
             "#-----------------------------------------业务明细列表----------------------------------------",
             ",".join(AP_COLS)] + rows + [
             "#-----------------------------------------业务明细列表结束------------------------------------",
             "#交易合计：%d笔，商家实收共：%s元，商家优惠共：0.00元" % (len(pays), total),
             "#退款合计：0笔，商家实收退款共：0.00元，商家优惠退款共：0.00元",
             "#导出时间：[%s 08:00:01]" % (DAYS[-1] + dt.timedelta(days=1)).strftime("%Y年%m月%d日")]
    write(os.path.join(out, "alipay-trade.csv"), ("\r\n".join(lines) + "\r\n").encode("gbk"))
    fund_days(out, seed, "alipay", pays, batches, plants, opening)


AP_LEDGER = ("账务流水号,业务流水号,商户订单号,商品名称,发生时间,对方账号,收入金额（+元）,支出金额（-元）,"
             "账户余额（元）,交易渠道,业务类型,备注").split(",")


def alipay_ledger(out, seed, day, evs):
    rows = []
    t9 = "\t"
    for t, kind, x, amt, bal, n in evs:
        flow = "%d%s%06d" % (seed, day.strftime("%m%d"), n)
        if kind == "out":
            biz, order, item, kind_text, other = x.id, "", "", "提现", ""
        elif kind == "pay":
            biz, order, item = ap_txn(seed, x), x.key, "Test item"
            kind_text, other = "在线支付", "**明(138******00)"
        else:
            biz, order, item, kind_text, other = ap_txn(seed, x), "", "服务费", "手续费", ""
        inc = money(amt) if amt > 0 else "0.00"
        exp = money(-amt) if amt < 0 else "0.00"
        rows.append(",".join([flow + t9, biz + t9, order + t9, item + t9, stamp(t), other + t9,
                              inc, exp, money(bal), "支付宝", kind_text, ""]))
    if NEWEST_FIRST:
        rows.reverse()      # the newest first, as the real export lists them
    inc = [e[3] for e in evs if e[3] > 0]
    exp = [-e[3] for e in evs if e[3] < 0]
    lines = ["#支付宝账务明细查询", "#账号：[20881234567890120156]",
             "#起始日期：[%s 00:00:00]   终止日期：[%s 00:00:00]" % (
                 day.strftime("%Y年%m月%d日"), (day + dt.timedelta(days=1)).strftime("%Y年%m月%d日")),
             "#-----------------------------------------账务明细列表----------------------------------------",
             ",".join(AP_LEDGER)] + rows + [
             "#----------------------------------------账务明细列表结束-------------------------------------",
             "#支出合计：%d笔，共%s元" % (len(exp), money(sum(exp, Decimal(0)))),
             "#收入合计：%d笔，共%s元" % (len(inc), money(sum(inc, Decimal(0)))),
             "#导出时间：[%s 13:19:01]" % (day + dt.timedelta(days=1)).strftime("%Y年%m月%d日")]
    write(os.path.join(out, "alipay-ledger-%s.csv" % day.strftime("%Y%m%d")),
          ("\r\n".join(lines) + "\r\n").encode("gbk"))


# --- the bank -----------------------------------------------------------
def credits(seed, rng, batches, plants):
    """The bank's credits of one currency: [(booking day, amount, ref, text)]."""
    out = []
    for ch, bs in batches:
        skip = set()
        if plants.get("never_credited") == ch:
            skip.add(0)
        if plants.get("window_open") == ch:
            skip.add(3)
        merged = plants.get("two_in_one") == ch
        for i, b in enumerate(bs):
            if i in skip or (merged and i in (1, 2)):
                continue
            out.append((b.credit_day(), b.amount, b.id))
        if merged:
            out.append((bs[2].credit_day(), bs[1].amount + bs[2].amount, bs[1].id + "+" + bs[2].id))
        if plants.get("stray_credit") == ch:
            out.append((DAYS[0] + dt.timedelta(days=4),
                        Decimal(rng.randint(9000000, 9999999)) / 100, "STRAY"))
    out.sort(key=lambda c: (c[0], c[2]))
    return [(d, a, "%d%s%03d" % (seed, d.strftime("%m%d"), i), text)
            for i, (d, a, text) in enumerate(out)]


# camt.053.001.02: the structure of OCA/bank-statement-import's fixture
# account_statement_import_camt/test_files/test-camt053 (Document/
# BkToCstmrStmt/GrpHdr, Stmt with Acct/Id/IBAN, Bal OPBD and CLBD with
# Amt Ccy, CdtDbtInd and Dt/Dt, Ntry with Amt, CdtDbtInd, Sts BOOK, BookgDt,
# ValDt, AcctSvcrRef, BkTxCd PMNT/RCDT/ESCT, NtryDtls/TxDtls/Refs/
# EndToEndId and RmtInf/Ustrd).
def camt(out, seed, entries, opening):
    first = DAYS[0] + dt.timedelta(days=1)
    last = DAYS[-1] + dt.timedelta(days=2)
    closing = opening + sum((a for _, a, _, _ in entries), Decimal(0))

    def bal(code, amount, day):
        return ("      <Bal>\n        <Tp><CdOrPrtry><Cd>%s</Cd></CdOrPrtry></Tp>\n"
                "        <Amt Ccy=\"USD\">%s</Amt>\n        <CdtDbtInd>CRDT</CdtDbtInd>\n"
                "        <Dt><Dt>%s</Dt></Dt>\n      </Bal>\n" % (code, money(amount), day))
    x = ['<?xml version="1.0" encoding="UTF-8"?>\n',
         '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">\n',
         '  <BkToCstmrStmt>\n    <GrpHdr>\n      <MsgId>TESTBANK/US/%d</MsgId>\n' % seed,
         '      <CreDtTm>%sT06:00:00Z</CreDtTm>\n    </GrpHdr>\n' % last,
         '    <Stmt>\n      <Id>%d/1</Id>\n      <CreDtTm>%sT06:00:00Z</CreDtTm>\n' % (seed, last),
         '      <FrToDt><FrDtTm>%sT00:00:00Z</FrDtTm><ToDtTm>%sT23:59:59Z</ToDtTm></FrToDt>\n'
         % (first, last),
         '      <Acct><Id><Othr><Id>000123456789</Id></Othr></Id><Ccy>USD</Ccy></Acct>\n',
         bal("OPBD", opening, first), bal("CLBD", closing, last)]
    for d, a, ref, text in entries:
        x.append("      <Ntry>\n        <Amt Ccy=\"USD\">%s</Amt>\n"
                 "        <CdtDbtInd>CRDT</CdtDbtInd>\n        <Sts>BOOK</Sts>\n"
                 "        <BookgDt><Dt>%s</Dt></BookgDt>\n        <ValDt><Dt>%s</Dt></ValDt>\n"
                 "        <AcctSvcrRef>%s</AcctSvcrRef>\n"
                 "        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>ESCT</SubFmlyCd>"
                 "</Fmly></Domn></BkTxCd>\n"
                 "        <NtryDtls><TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs>\n"
                 "          <RmtInf><Ustrd>STRIPE TRANSFER %s</Ustrd></RmtInf></TxDtls></NtryDtls>\n"
                 "      </Ntry>\n" % (money(a), d, d, ref, text if text != "STRAY" else "REFUND 7731"))
    x.append("    </Stmt>\n  </BkToCstmrStmt>\n</Document>\n")
    write(os.path.join(out, "bank-usd.camt053.xml"), "".join(x).encode())


# MT940: the tags and field layouts of the statements in public parsers'
# test suites (programmersdigest/MT940Parser StatementParserTests.cs:
# :20:, :25:, :28C:, :60F:C180220EUR0,00, :61:YYMMDDMMDD C amount N-code
# reference//bank reference, :86:, :62F:), CRLF lines, comma decimals, the
# SWIFT character set (no Chinese text).
def mt940(out, seed, entries, opening):
    def amt(d):
        return money(d).replace(".", ",")
    first = DAYS[0] + dt.timedelta(days=1)
    last = DAYS[-1] + dt.timedelta(days=2)
    closing = opening + sum((a for _, a, _, _ in entries), Decimal(0))
    x = [":20:STMT%d" % seed, ":25:6225880123456789", ":28C:%d/1" % (seed % 10000),
         ":60F:C%sCNY%s" % (first.strftime("%y%m%d"), amt(opening))]
    for d, a, ref, text in entries:
        x.append(":61:%s%sC%sNTRFNONREF//%s" % (d.strftime("%y%m%d"), d.strftime("%m%d"), amt(a), ref))
        x.append(":86:%s" % ("SETTLEMENT " + text if text != "STRAY" else "TRANSFER INCOMING 4471"))
    x.append(":62F:C%sCNY%s" % (last.strftime("%y%m%d"), amt(closing)))
    x.append("-")
    write(os.path.join(out, "bank-cny.mt940"), ("\r\n".join(x) + "\r\n").encode())


# --- the table ----------------------------------------------------------
# The canonical CSV every table-side test loads (SPEC "Input"; as
# tests/db/recon_lib.sh writes it): the payload's amount in major units and
# its currency; received_at in UTC.
def table(out, pays, extra):
    lines = ["tenant_id,channel,out_trade_no,callback_type,status,payload,received_at"]
    for p in pays + ([extra] if extra else []):
        lines.append('%s,%s,%s,pay,1,"{""amount"": ""%s"", ""currency"": ""%s""}",%s' % (
            TENANT, p.channel, p.key, money(p.gross), CURRENCY[p.channel],
            p.utc().strftime("%Y-%m-%dT%H:%M:%SZ")))
    write(os.path.join(out, "table.csv"), ("\n".join(lines) + "\n").encode())


def main(argv):
    global NEWEST_FIRST, PER_DAY
    NEWEST_FIRST, PER_DAY = False, None
    args, plant_args, bank_csv = [], [], False
    it = iter(argv)
    for a in it:
        if a == "--plant":
            plant_args.append(next(it, ""))
        elif a.startswith("--plant="):
            plant_args.append(a[8:])
        elif a == "--newest-first":
            NEWEST_FIRST = True
        elif a == "--bank-csv":
            bank_csv = True
        elif a == "--per-day":
            n = next(it, "")
            PER_DAY = int(n) if n.isdigit() else 0
            if PER_DAY < 2:
                sys.exit("make_settle.py: --per-day needs a whole number of at least 2")
        else:
            args.append(a)
    if len(args) != 2 or not args[0].isdigit():
        sys.exit("usage: make_settle.py SEED OUTDIR [--newest-first] [--per-day N] [--bank-csv] "
                 "[--plant NAME[:CHANNEL]]...")
    seed, out = int(args[0]), args[1]
    plants = parse_plants(plant_args)
    os.makedirs(out, exist_ok=True)
    rng, pays, batches, extra = scenario(seed, plants)
    stripe_files(out, seed, pays["stripe"], batches["stripe"])
    wechat_files(out, seed, pays["wechat"], batches["wechat"], plants,
                 Decimal(rng.randint(100000, 900000)) / 100)
    alipay_files(out, seed, pays["alipay"], batches["alipay"], plants,
                 Decimal(rng.randint(100000, 900000)) / 100)
    usd = credits(seed, rng, [("stripe", batches["stripe"])], plants)
    camt(out, seed, usd, Decimal(rng.randint(100000, 900000)) / 100)
    cny = credits(seed, rng, [("wechat", batches["wechat"]), ("alipay", batches["alipay"])], plants)
    mt940(out, seed, cny, Decimal(rng.randint(100000, 900000)) / 100)
    if bank_csv:    # the credits as plain CSV, for scripts/bench's comparison by hand
        write(os.path.join(out, "bank-credits.csv"), ("day,currency,amount\n" + "".join(
            "%s,%s,%s\n" % (d, c, money(a)) for c, es in (("USD", usd), ("CNY", cny))
            for d, a, _, _ in es)).encode())
    table(out, pays["stripe"] + pays["wechat"] + pays["alipay"], extra)
    json.dump({"seed": seed, "plants": plants, "now": NOW, "tenant": TENANT,
               "fee_rates": RATES, "settle_window": "0..3d",
               "zones": {"stripe": "UTC", "wechat": "Asia/Shanghai", "alipay": "Asia/Shanghai"}},
              open(os.path.join(out, "scenario.json"), "w"), indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
