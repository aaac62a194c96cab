#!/usr/bin/env python3
"""gen_bill_totals.py SEED DIR - random bills whose stated money totals agree
with their rows, and the same bills with one row's amount perturbed, for
tests/cli/test_bill_totals.sh (the property: a bill's stated totals and its
rows agree after the profile's cleanup; change one amount and they do not).

Per seed, DIR gets wechat-SEED.csv / wechat-SEED-bad.csv (current ALL layout),
wechatold-SEED.csv / -bad (the older 24-column layout, zeros as `0) and
alipay-SEED.csv / -bad (GBK, TAB suffixes).  The totals are computed here
with Python's decimal module, independently of idemload.
"""
import os
import random
import sys
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_bills as m  # noqa: E402


def amount(rng, places, lo=0, hi=100000, neg=False):
    v = Decimal(rng.randint(lo, hi * 10 ** places)).scaleb(-places)
    if neg:
        v = -v
    return format(v, "f")


def total(values, places):
    return format(sum((Decimal(v) for v in values), Decimal(0)).quantize(Decimal(1).scaleb(-places)), "f")


def blank(rng, v):
    """The cell with blanks the profile's cleanup takes off."""
    return rng.choice(["", " ", "  "]) + v + rng.choice(["", " "])


def perturb(rng, v, places):
    return format(Decimal(v) + Decimal(1).scaleb(-places) * rng.choice([1, -1, 7]), "f")


def wechat(rng, seed, d, old):
    cols = m.WX_OLD_ALL if old else m.WX_ALL
    amt_col = "总金额" if old else "应结订单金额"
    rows = []
    for i in range(rng.randint(1, 30)):
        if rng.random() < 0.6:
            r = dict(交易时间="2024-06-01 10:%02d:%02d" % (i // 60, i % 60), 商户订单号="P%d" % i,
                     交易状态="SUCCESS", 退款金额="0" if old else "0.00")
            r[amt_col] = amount(rng, 2)
            r["手续费"] = amount(rng, 5, hi=50)
        else:
            r = dict(交易时间="2024-06-01 11:%02d:%02d" % (i // 60, i % 60), 商户订单号="P%d" % i,
                     交易状态="REFUND", 商户退款单号="R%d" % i, 微信退款单号="5%d" % i,
                     退款金额=amount(rng, rng.choice([0, 1, 2])), 退款状态="SUCCESS",
                     退款类型="ORIGINAL")
            r[amt_col] = "0" if old else "0.00"
            r["手续费"] = amount(rng, 5, hi=5, neg=True)
        rows.append(r)
    pay = [r[amt_col] for r in rows if r["交易状态"] == "SUCCESS"] or ["0"]
    ref = [r["退款金额"] for r in rows if r["交易状态"] == "REFUND"] or ["0"]
    fee = [r["手续费"] for r in rows]
    if old:
        summ_cols = m.WX_OLD_SUMMARY
        summ = [str(len(rows)), total(pay, 2), total(ref, 2), "0", total(fee, 5)]
    else:
        summ_cols = m.WX_SUMMARY
        summ = [str(len(rows)), total(pay, 2), total(ref, 2), "0.00", total(fee, 5),
                total(pay, 2), total(ref, 2)]
    def bill(rs):
        text = [",".join(cols)] + [",".join("`" + blank(rng, m.wx_row(cols, **r).split(",")[k][1:])
                                            for k in range(len(cols))) for r in rs]
        text += [",".join(summ_cols), ",".join("`" + s for s in summ)]
        nl = rng.choice(["\n", "\r\n"])
        return (rng.choice(["", "\ufeff"]) + nl.join(text) + nl).encode()
    name = ("wechatold-%d" if old else "wechat-%d") % seed
    open(os.path.join(d, name + ".csv"), "wb").write(bill(rows))
    k = rng.randrange(len(rows))
    col = rng.choice(["手续费", amt_col if rows[k]["交易状态"] == "SUCCESS" else "退款金额"])
    bad = [dict(r) for r in rows]
    bad[k][col] = perturb(rng, bad[k][col], 5 if col == "手续费" else 2)
    open(os.path.join(d, name + "-bad.csv"), "wb").write(bill(bad))


def alipay(rng, seed, d):
    rows = []
    for i in range(rng.randint(1, 30)):
        refund = rng.random() < 0.4
        a = amount(rng, 2, neg=refund)
        disc = amount(rng, 2, hi=3)
        rows.append(dict(kind="退款" if refund else "交易", amount=a, disc=disc, i=i))
    def line(r):
        t = "\t"
        f = ["20240601%020d" % r["i"] + t, "A%d" % r["i"] + t, r["kind"] + t, "item",
             "2024-06-01 10:00:00", "2024-06-01 10:00:%02d" % (r["i"] % 60), t, t, t, t, "x" + t,
             blank(rng, r["amount"]), blank(rng, r["amount"]) + t, "0.00", "0.00", "0.00",
             r["disc"] + t, "0.00", "", "0.00" + t, "0.00",
             ("R%d" % r["i"] if r["kind"] == "退款" else "") + t, "0.00", "0.00", ""]
        return ",".join(f)
    def bill(rs):
        pay = [r for r in rs if r["kind"] == "交易"]
        ref = [r for r in rs if r["kind"] == "退款"]
        lines = ["#支付宝业务明细查询", "#账号：[20880211096256330156]",
                 "#-----------------------------------------业务明细列表----------------------------------------",
                 ",".join(m.AP_COLS)] + [line(r) for r in rs] + [
                 "#-----------------------------------------业务明细列表结束------------------------------------",
                 "#交易合计：%d笔，商家实收共%s元，商家优惠共%s元" % (
                     len(pay), total([r["amount"] for r in pay] or ["0"], 2),
                     total([r["disc"] for r in pay] or ["0"], 2)),
                 "#退款合计：%d笔，商家实收退款共%s元，商家优惠退款共%s元" % (
                     len(ref), total([r["amount"] for r in ref] or ["0"], 2),
                     total([r["disc"] for r in ref] or ["0"], 2)),
                 "#导出时间：[2024年06月02日 05:46:49]"]
        return ("\r\n".join(lines) + "\r\n").encode("gbk")
    open(os.path.join(d, "alipay-%d.csv" % seed), "wb").write(bill(rows))
    # the bad one keeps the good one's 合计 lines: one amount changed
    good = bill(rows).split(b"\r\n")
    k = rng.randrange(len(rows))
    bad = [dict(r) for r in rows]
    field = rng.choice(["amount", "disc"])
    bad[k][field] = perturb(rng, bad[k][field], 2)
    badlines = bill(bad).split(b"\r\n")
    badlines[-4:] = good[-4:]
    open(os.path.join(d, "alipay-%d-bad.csv" % seed), "wb").write(b"\r\n".join(badlines))


if __name__ == "__main__":
    seed, d = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(seed)
    wechat(rng, seed, d, old=False)
    wechat(rng, seed, d, old=True)
    alipay(rng, seed, d)
