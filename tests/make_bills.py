#!/usr/bin/env python3
"""make_bills.py [--samples] DIR - synthetic channel bills in the documented layouts
(../shared/channel-formats.md), for tests/cli/test_profiles.sh and
tests/db/test_profiles.sh.  Values are made up; layouts, framing, encodings
and quirks (backticks, trailing TABs, CRLF, GBK, zip with GBK member names
and no UTF-8 flag) follow the real files.

Each bill's expected rows are documented next to it; the tests check them.
With --samples, DIR (a fresh directory) gets only the four bills of
samples/ (SAMPLES below): python3 tests/make_bills.py --samples /tmp/s &&
cp /tmp/s/* samples/.
"""
import gzip
import os
import struct
import sys
import zlib

WX_ALL = ("交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,"
          "付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,"
          "退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注").split(",")
WX_SUCCESS = ("交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,"
              "付款银行,货币种类,应结订单金额,代金券金额,商品名称,商户数据包,手续费,费率,订单金额,费率备注").split(",")
WX_REFUND = WX_ALL[:14] + ["退款申请时间", "退款成功时间"] + WX_ALL[14:]
WX_OLD = ("交易时间,公众账号ID,商户号,子商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,"
          "付款银行,货币种类,总金额,代金券或立减优惠金额,微信退款单号,商户退款单号,退款金额,"
          "代金券或立减优惠退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率").split(",")
assert (len(WX_ALL), len(WX_SUCCESS), len(WX_REFUND), len(WX_OLD)) == (27, 20, 29, 24)


def wx_row(cols, **v):
    """A WeChat row: every field backtick-prefixed, defaults for the rest."""
    base = {"公众账号ID": "wx1234567890abcdef", "商户号": "1900000109", "特约商户号": "0",
            "子商户号": "0", "用户标识": "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "交易类型": "JSAPI",
            "付款银行": "OTHERS", "货币种类": "CNY", "代金券金额": "0.00", "微信退款单号": "0",
            "商户退款单号": "0", "退款金额": "0.00", "充值券退款金额": "0.00", "商品名称": "Test item",
            "手续费": "0.59000", "费率": "0.60%", "申请退款金额": "0.00"}
    base.update(v)
    return ",".join("`" + base.get(c, "") for c in cols)


def wx_bill(cols, rows, summary_cols, summary, crlf=True):
    nl = "\r\n" if crlf else "\n"
    lines = [",".join(cols)] + rows + [",".join(summary_cols), ",".join("`" + s for s in summary)]
    return (nl.join(lines) + nl).encode("utf-8")


def wechat(d):
    pay1 = wx_row(WX_ALL, 交易时间="2024-05-01 10:15:02", 微信订单号="4200000001", 商户订单号="ORD1",
                  交易状态="SUCCESS", 应结订单金额="99.00", 订单金额="99.00")
    ref1 = wx_row(WX_ALL, 交易时间="2024-05-01 18:40:11", 微信订单号="4200000001", 商户订单号="ORD1",
                  交易状态="REFUND", 应结订单金额="0.00", 微信退款单号="5030001", 商户退款单号="RF1",
                  退款金额="30.00", 退款类型="ORIGINAL", 退款状态="SUCCESS", 手续费="0.00000",
                  订单金额="0.00", 申请退款金额="30.00")
    ref2 = wx_row(WX_ALL, 交易时间="2024-05-01 19:02:45", 微信订单号="4200000001", 商户订单号="ORD1",
                  交易状态="REFUND", 应结订单金额="0.00", 微信退款单号="5030002", 商户退款单号="RF2",
                  退款金额="20.00", 退款类型="ORIGINAL", 退款状态="SUCCESS", 手续费="0.00000",
                  订单金额="0.00", 申请退款金额="20.00")
    rev = wx_row(WX_ALL, 交易时间="2024-05-01 11:00:00", 微信订单号="4200000002", 商户订单号="ORD2",
                 交易状态="REVOKED", 应结订单金额="0.00", 订单金额="12.30", 商品名称='A "quoted" item',
                 手续费="0.00000")
    summ_cols = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额".split(",")
    # ALL: ORD1 pay, ORD1 refund RF1, ORD1 refund RF2, ORD2 revoked (4 rows)
    all_bill = wx_bill(WX_ALL, [pay1, ref1, ref2, rev], summ_cols,
                       ["4", "99.00", "50.00", "0.00", "0.59000", "111.30", "50.00"])
    open(os.path.join(d, "wechat-all.csv"), "wb").write(all_bill)
    open(os.path.join(d, "wechat-all.csv.gz"), "wb").write(gzip.compress(all_bill))
    # REVOKED rows in the two shapes public parsers of real bills show: one
    # shaped like a refund, its money in 退款金额/申请退款金额 and no refund
    # numbers (WechatTradeBillParserTest, code search id 60836517163; a
    # reconciliation test's bill, code search id 58688790295), one keeping
    # its 应结订单金额. SPEC "Money facts": a summary's total is its column
    # summed over every data row, whatever its state.
    rv1 = wx_row(WX_ALL, 交易时间="2024-05-03 10:00:00", 微信订单号="4200000011", 商户订单号="ORD11",
                 交易状态="REVOKED", 应结订单金额="0.00", 退款金额="10.00", 退款状态="SUCCESS",
                 手续费="0.00000", 订单金额="0.00", 申请退款金额="10.00")
    rv2 = wx_row(WX_ALL, 交易时间="2024-05-03 10:05:00", 微信订单号="4200000012", 商户订单号="ORD12",
                 交易状态="REVOKED", 应结订单金额="12.30", 手续费="0.07000", 订单金额="12.30")
    ok1 = wx_row(WX_ALL, 交易时间="2024-05-03 09:00:00", 微信订单号="4200000010", 商户订单号="ORD10",
                 交易状态="SUCCESS", 应结订单金额="99.00", 订单金额="99.00")
    open(os.path.join(d, "wechat-revoked.csv"), "wb").write(wx_bill(
        WX_ALL, [ok1, rv1, rv2], summ_cols,
        ["3", "111.30", "10.00", "0.00", "0.66000", "111.30", "10.00"]))
    # the same bill stating 5 rows: truncated or edited
    open(os.path.join(d, "wechat-badcount.csv"), "wb").write(
        all_bill.replace("`4,`99.00".encode(), "`5,`99.00".encode()))
    # cut before its summary
    open(os.path.join(d, "wechat-nosummary.csv"), "wb").write(
        all_bill[:all_bill.index("总交易单数".encode())])
    # SUCCESS bill: 20 columns, 2 payments
    s1 = wx_row(WX_SUCCESS, 交易时间="2024-05-02 09:00:00", 商户订单号="ORD3", 交易状态="SUCCESS",
                应结订单金额="5.00", 订单金额="5.00")
    s2 = wx_row(WX_SUCCESS, 交易时间="2024-05-02 09:30:00", 商户订单号="ORD4", 交易状态="SUCCESS",
                应结订单金额="1234567890123456789012.10", 订单金额="1234567890123456789012.10")
    open(os.path.join(d, "wechat-success.csv"), "wb").write(wx_bill(
        WX_SUCCESS, [s1, s2], "总交易单数,应结订单总金额,手续费总金额,订单总金额".split(","),
        ["2", "1234567890123456789017.10", "1.18000", "1234567890123456789017.10"], crlf=False))
    # REFUND bill: 29 columns; received_at from 退款成功时间
    r1 = wx_row(WX_REFUND, 交易时间="2024-05-01 18:40:11", 商户订单号="ORD1", 交易状态="REFUND",
                退款申请时间="2024-05-01 18:40:11", 退款成功时间="2024-05-01 18:41:00",
                微信退款单号="5030001", 商户退款单号="RF1", 退款金额="30.00", 申请退款金额="30.00",
                退款状态="SUCCESS", 手续费="0.00000")
    open(os.path.join(d, "wechat-refund.csv"), "wb").write(wx_bill(
        WX_REFUND, [r1], summ_cols, ["1", "0.00", "30.00", "0.00", "0.00000", "0.00", "30.00"]))
    # the older 24-column layout
    o1 = wx_row(WX_OLD, 交易时间="2017-03-01 08:00:00", 商户订单号="OLD1", 交易状态="SUCCESS",
                总金额="8.00", 代金券或立减优惠金额="0.00", 代金券或立减优惠退款金额="0.00", 手续费="0.05000")
    o2 = wx_row(WX_OLD, 交易时间="2017-03-01 09:00:00", 商户订单号="OLD1", 交易状态="REFUND",
                总金额="0.00", 商户退款单号="OLDRF1", 微信退款单号="5039", 退款金额="8.00",
                代金券或立减优惠退款金额="0.00", 退款状态="SUCCESS", 手续费="0.00000")
    open(os.path.join(d, "wechat-old.csv"), "wb").write(wx_bill(
        WX_OLD, [o1, o2], "总交易单数,总交易额,总退款金额,总代金券或立减优惠退款金额,手续费总金额".split(","),
        ["2", "8.00", "8.00", "0.00", "0.05"]))


AP_COLS = ("支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,对方账户,"
           "订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,"
           "券名称,商家红包消费金额（元）,卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注").split(",")
assert len(AP_COLS) == 25


def ap_row(no, order, kind, created, done, amount, refund_no="", item="Test item"):
    t = "\t"
    f = [no + t, order + t, kind + t, item, created, done, t, t, t, t, "**明(138******00)" + t,
         amount, amount, "0.00", "0.00", "0.00", "0.00", "0.00", "", "0.00" + t, "0.00",
         refund_no + t, "0.00", "0.00", ""]
    return ",".join(f)


def alipay_detail(rows, n_pay, n_refund):
    lines = ["#支付宝业务明细查询", "#账号：[20881234567890120156]",
             "#起始日期：[2024年05月01日 00:00:00]   终止日期：[2024年05月02日 00:00:00]",
             "#-----------------------------------------业务明细列表----------------------------------------",
             ",".join(AP_COLS)] + rows + [
             "#-----------------------------------------业务明细列表结束------------------------------------",
             "#交易合计：%d笔，商家实收共：99.59元，商家优惠共：0.00元" % n_pay,
             "#退款合计：%d笔，商家实收退款共：-50.00元，商家优惠退款共：0.00元" % n_refund,
             "#导出时间：[2024年05月02日 08:00:01]"]
    return ("\r\n".join(lines) + "\r\n").encode("gbk")


def zip_bytes(members, descriptor=False):
    """A zip written front to back: names as given bytes (GBK, no UTF-8
    flag), deflated; with descriptor, sizes and CRC after the data (as a
    streaming writer does)."""
    out = bytearray()
    central = bytearray()
    for name, data in members:
        comp = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = comp.compress(data) + comp.flush()
        crc = zlib.crc32(data) & 0xffffffff
        flags = 0x0008 if descriptor else 0
        off = len(out)
        hc, hs, hu = (0, 0, 0) if descriptor else (crc, len(body), len(data))
        out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 20, flags, 8, 0, 0x5821, hc, hs, hu,
                           len(name), 0) + name + body
        if descriptor:
            out += struct.pack("<IIII", 0x08074b50, crc, len(body), len(data))
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 20, 20, flags, 8, 0, 0x5821, crc,
                               len(body), len(data), len(name), 0, 0, 0, 0, 0, off) + name
    cd_off = len(out)
    out += central
    out += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, len(members), len(members), len(central),
                       cd_off, 0)
    return bytes(out)


def alipay(d):
    rows = [ap_row("2024050122001419931400000001", "AORD1", "交易", "2024-05-01 10:15:02",
                   "2024-05-01 10:15:09", "99.00"),
            ap_row("2024050122001419931400000001", "AORD1", "退款", "2024-05-01 10:15:02",
                   "2024-05-01 18:40:11", "-30.00", "ARF1"),
            ap_row("2024050122001419931400000001", "AORD1", "退款", "2024-05-01 10:15:02",
                   "2024-05-01 19:00:00", "-20.00", "ARF2"),
            ap_row("2024050122001419931400000002", "AORD2", "交易", "2024-05-01 12:00:00",
                   "2024-05-01 12:00:05", "0.59000", item="商品，带逗号".replace("，", " "))]
    detail = alipay_detail(rows, 2, 2)
    open(os.path.join(d, "alipay-detail.csv"), "wb").write(detail)
    # a row whose 商品名称 holds a byte sequence invalid in GBK (0x81 0x20)
    bad = detail.replace("Test item,2024-05-01 12".encode(), b"Bad \x81 item,2024-05-01 12")
    bad_row = ap_row("2024050122001419931400000002", "AORD2", "交易", "2024-05-01 12:00:00",
                     "2024-05-01 12:00:05", "0.59000", item="BADGBK").encode("gbk")
    bad = detail.replace(ap_row("2024050122001419931400000002", "AORD2", "交易", "2024-05-01 12:00:00",
                                "2024-05-01 12:00:05", "0.59000",
                                item="商品，带逗号".replace("，", " ")).encode("gbk"),
                         bad_row.replace(b"BADGBK", b"Bad \x81\x20 item"))
    assert bad != detail
    open(os.path.join(d, "alipay-badgbk.csv"), "wb").write(bad)
    # the count lines say 3 trades: truncated or edited
    open(os.path.join(d, "alipay-badcount.csv"), "wb").write(
        detail.replace("#交易合计：2笔".encode("gbk"), "#交易合计：3笔".encode("gbk")))
    summary = ("#支付宝业务汇总查询\r\n门店编号,门店名称,交易订单总笔数,退款订单总笔数\r\n,,2,2\r\n").encode("gbk")
    dname = "20881234567890120156_20240501_业务明细.csv".encode("gbk")
    sname = "20881234567890120156_20240501_业务明细(汇总).csv".encode("gbk")
    z = zip_bytes([(sname, summary), (dname, detail)])
    open(os.path.join(d, "alipay-bill.zip"), "wb").write(z)
    open(os.path.join(d, "alipay-bill-descriptor.zip"), "wb").write(
        zip_bytes([(dname, detail), (sname, summary)], descriptor=True))
    open(os.path.join(d, "alipay-bill-truncated.zip"), "wb").write(z[:len(z) * 2 // 3])
    open(os.path.join(d, "alipay-bill-summaryonly.zip"), "wb").write(zip_bytes([(sname, summary)]))


ST_COLS = ["balance_transaction_id", "created_utc", "available_on_utc", "currency", "gross", "fee",
           "net", "reporting_category", "source_id", "charge_id", "payment_intent_id",
           "payment_metadata[order_id]", "description"]


def stripe(d):
    def q(v):
        return '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n') else v
    rows = [
        ["txn_1", "2024-05-01 10:00:00", "2024-05-03 00:00:00", "usd", "10.00", "0.59", "9.41",
         "charge", "ch_1", "ch_1", "pi_1", "SORD1", 'Order SORD1, "gift"\nsecond line'],
        ["txn_2", "2024-05-01 11:00:00", "2024-05-03 00:00:00", "usd", "-4.00", "0.00", "-4.00",
         "refund", "re_1", "ch_1", "pi_1", "SORD1", "partial refund"],
        ["txn_3", "2024-05-01 12:00:00", "2024-05-03 00:00:00", "usd", "-3.00", "0.00", "-3.00",
         "refund", "re_2", "ch_1", "pi_1", "SORD1", "second partial refund"],
        ["txn_4", "2024-05-02 00:00:00", "2024-05-02 00:00:00", "usd", "-100.00", "0.00", "-100.00",
         "payout", "po_1", "", "", "", "STRIPE PAYOUT"],
        ["txn_5", "2024-05-02 01:00:00", "2024-05-02 01:00:00", "usd", "-1.00", "0.00", "-1.00",
         "fee", "fee_1", "", "", "", "Billing"],
        ["txn_6", "2024-05-02 02:00:00", "2024-05-04 00:00:00", "usd", "25.50", "1.04", "24.46",
         "charge", "ch_2", "ch_2", "pi_2", "", "no order id: keyed by charge"],
    ]
    text = ",".join(ST_COLS) + "\n" + "".join(",".join(q(v) for v in r) + "\n" for r in rows)
    open(os.path.join(d, "stripe-balance.csv"), "wb").write(text.encode())


PP_CH = ["Transaction ID", "Invoice ID", "PayPal Reference ID", "PayPal Reference ID Type",
         "Transaction Event Code", "Transaction Initiation Date", "Transaction Completion Date",
         "Transaction Debit or Credit", "Gross Transaction Amount", "Gross Transaction Currency",
         "Fee Debit or Credit", "Fee Amount", "Fee Currency", "Custom Field", "Consumer ID",
         "Payment Tracking ID", "Store ID", "Bank Reference ID", "Credit Transactional Fee",
         "Credit Promotional Fee", "Credit Term"]


def paypal(d):
    def line(*f):
        return ",".join('"%s"' % x for x in f)
    def sb(tid, inv, code, date, dc, amount, custom=""):
        return line("SB", tid, inv, "", "", code, date, date, dc, amount, "USD", "DR", "30", "USD",
                    custom, "", "", "", "", "", "", "")
    rows = [line("RH", "2024/08/21 04:10:11 -0700", "A", "ACCT1", "010"),
            line("FH", "01"),
            line("SH", "2024/08/20 00:00:00 -0700", "2024/08/20 23:59:59 -0700", "", ""),
            line("CH", *PP_CH),
            sb("1AB23456CD789012E", "PINV1", "T0006", "2024/08/20 00:01:17 -0700", "CR", "1000"),
            sb("2AB23456CD789012F", "PINV1", "T1107", "2024/08/20 05:00:00 -0700", "DR", "300"),
            sb("3AB23456CD789012G", "", "T0400", "2024/08/20 06:00:00 -0700", "DR", "5000"),
            sb("4AB23456CD789012H", "", "T0011", "2024/08/20 07:00:00 -0700", "CR", "250",
               custom="PCUST2"),
            line("SF", "4"), line("SC", "4"), line("RF", "4"), line("RC", "4"), line("FF", "4")]
    open(os.path.join(d, "paypal-stl.csv"), "wb").write(
        ("\ufeff" + "\r\n".join(rows) + "\r\n").encode("utf-8"))


# --- Layouts seen in real published files (channel-formats.md, "Layouts seen
# in real published files"): each file's expected rows are in
# tests/cli/test_bill_layouts.sh and tests/db/test_bill_layouts.sh.

WX_OLD_ALL = ("交易时间,公众账号ID,商户号,子商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,"
              "付款银行,货币种类,总金额,企业红包金额,微信退款单号,商户退款单号,退款金额,企业红包退款金额,"
              "退款类型,退款状态,商品名称,商户数据包,手续费,费率").split(",")
WX_OLD_REFUND = WX_OLD_ALL[:14] + ["退款申请时间", "退款成功时间"] + WX_OLD_ALL[14:]
WX_OLD_SUMMARY = "总交易单数,总交易额,总退款金额,总企业红包退款金额,手续费总金额".split(",")
WX_SUMMARY = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额".split(",")
assert (len(WX_OLD_ALL), len(WX_OLD_REFUND)) == (24, 26)


def dsum(values):
    """Exact decimal sum of decimal texts, written with the most decimals any has."""
    from decimal import Decimal
    total = sum((Decimal(v) for v in values), Decimal(0))
    places = max([len(v.split(".")[1]) if "." in v else 0 for v in values] or [0])
    return format(total.quantize(Decimal(1).scaleb(-places)), "f") if places else format(total, "f")


def wx_current_bill(rows, bom=False, perturb=None):
    """A current ALL bill of rows (dicts for wx_row), its summary computed
    from them; perturb names a summary column whose figure is off by 0.01."""
    # SPEC "Money facts": each total sums its column over every row,
    # whatever its 交易状态
    pay = [r.get("应结订单金额", "0.00") for r in rows]
    ref = [r.get("退款金额", "0.00") for r in rows]
    fee = [r.get("手续费", "0.59000") for r in rows]
    summ = {"总交易单数": str(len(rows)), "应结订单总金额": dsum(pay or ["0.00"]),
            "退款总金额": dsum(ref or ["0.00"]), "充值券退款总金额": "0.00",
            "手续费总金额": dsum(fee), "订单总金额": dsum(pay or ["0.00"]),
            "申请退款总金额": dsum(ref or ["0.00"])}
    if perturb:
        summ[perturb] = dsum([summ[perturb], "0.01"])
    body = wx_bill(WX_ALL, [wx_row(WX_ALL, **r) for r in rows], WX_SUMMARY,
                   [summ[c] for c in WX_SUMMARY])
    return ("\ufeff".encode() if bom else b"") + body


def wx_pay(t, order, amount, fee="0.00020", **more):
    r = dict(交易时间=t, 微信订单号="42" + order, 商户订单号=order, 交易状态="SUCCESS",
             应结订单金额=amount, 订单金额=amount, 手续费=fee)
    r.update(more)
    return r


def wx_refund(t, order, refund_no, amount, state, fee="-0.00010", **more):
    r = dict(交易时间=t, 微信订单号="42" + order, 商户订单号=order, 交易状态="REFUND",
             应结订单金额="0.00", 微信退款单号="50" + refund_no, 商户退款单号=refund_no,
             退款金额=amount, 退款类型="ORIGINAL", 退款状态=state, 手续费=fee, 订单金额="0.00",
             申请退款金额=amount)
    r.update(more)
    return r


def real_layouts(d):
    w = lambda name, data: open(os.path.join(d, name), "wb").write(data)
    # WeChat, current ALL with a BOM: refunds in every state
    states = [wx_pay("2024-06-01 10:00:00", "WORD1", "100.00"),
              wx_refund("2024-06-01 11:00:00", "WORD1", "WRF1", "10.00", "SUCCESS"),
              wx_refund("2024-06-01 11:05:00", "WORD1", "WRF2", "20.00", "PROCESSING"),
              wx_refund("2024-06-01 11:10:00", "WORD1", "WRF3", "30.00", "CHANGE"),
              wx_refund("2024-06-01 11:15:00", "WORD1", "WRF4", "5.50", "REFUNDCLOSE")]
    w("real-wechat-states.csv", wx_current_bill(states, bom=True))
    w("real-wechat-unknown-state.csv", wx_current_bill(
        states[:2] + [wx_refund("2024-06-01 12:00:00", "WORD1", "WRF9", "1.00", "WHATEVER")]))
    for col in ("应结订单总金额", "退款总金额", "手续费总金额"):
        w("real-wechat-badtotal-%s.csv" % col, wx_current_bill(states, perturb=col))
    # a service provider's bill: many sub-merchants, equal order numbers
    sp = [wx_pay("2024-06-02 09:00:00", "SAME1", "1.00", 特约商户号="1900000201"),
          wx_pay("2024-06-02 09:01:00", "SAME1", "2.00", 特约商户号="1900000202"),
          wx_pay("2024-06-02 09:02:00", "OWN1", "3.00", 特约商户号="0"),
          wx_pay("2024-06-02 09:03:00", "SAME1", "4.00", 特约商户号="1900000299")]
    w("real-wechat-sp.csv", wx_current_bill(sp))
    w("tenants.csv", "merchant,tenant_id\r\n1900000201,11\r\n1900000202,12\r\n1900000109,10\r\n"
      .encode())
    # the older layouts: BOM, 子商户号, 总金额, 企业红包金额, zeros as `0, the
    # old summary; the 26-column REFUND bill with a negative fee total. A
    # refund row's 总金额 is 0.00, as in a legacy ALL and REFUND bill
    # published in a test (code search id 12936742458)
    old_rows = [dict(交易时间="2016-05-04 02:18:00", 商户订单号="OLDA", 交易状态="SUCCESS",
                     子商户号="1300000201", 总金额="0.01", 企业红包金额="0", 退款金额="0",
                     企业红包退款金额="0", 微信退款单号="0", 商户退款单号="0", 手续费="0.00000",
                     费率="0.60%"),
                dict(交易时间="2016-05-04 03:00:00", 商户订单号="OLDA", 交易状态="REFUND",
                     子商户号="1300000201", 总金额="0.00", 企业红包金额="0", 微信退款单号="5039",
                     商户退款单号="OLDRFA", 退款金额="0.01", 企业红包退款金额="0",
                     退款类型="ORIGINAL", 退款状态="SUCCESS", 手续费="0.00000", 费率="0.60%")]
    w("real-wechat-old-all.csv", "\ufeff".encode() + wx_bill(
        WX_OLD_ALL, [wx_row(WX_OLD_ALL, **r) for r in old_rows], WX_OLD_SUMMARY,
        ["2", "0.01", "0.01", "0", "0.00000"]))
    old_ref = dict(交易时间="2016-05-05 08:00:00", 商户订单号="OLDB", 交易状态="REFUND",
                   总金额="0.00", 企业红包金额="0", 退款申请时间="2016-05-05 08:00:00",
                   退款成功时间="2016-05-05 08:05:00", 微信退款单号="5040", 商户退款单号="OLDRFB",
                   退款金额="3.00", 企业红包退款金额="0", 退款类型="ORIGINAL", 退款状态="PROCESSING",
                   手续费="-0.02000", 费率="0.60%")
    w("real-wechat-old-refund.csv", wx_bill(
        WX_OLD_REFUND, [wx_row(WX_OLD_REFUND, **old_ref)], WX_OLD_SUMMARY,
        ["1", "0", "3.00", "0", "-0.02000"]))
    # the sandbox's spreadsheet-mangled TAB table: not a production bill
    w("real-wechat-sandbox.csv", ("\t".join(WX_ALL) + "\r\n" + "\t".join(
        ["2016/5/4 2:18", "wx2421b1c4370ec43b", "10000100", "0", "", "4.00123E+27", "1.21776E+15"]
        + [""] * 20) + "\r\n").encode())
    # Alipay as found: amounts on the 合计 lines without a colon
    rows = [ap_row("2024060122001419931400000011", "AP1", "交易", "2024-06-01 10:00:00",
                   "2024-06-01 10:00:05", "0.01"),
            ap_row("2024060122001419931400000011", "AP1", "退款", "2024-06-01 10:00:00",
                   "2024-06-01 10:30:00", "-0.01", "re_AP1"),
            ap_row("2024060122001419931400000012", "AP2", "交易", "2024-06-01 11:00:00",
                   "2024-06-01 11:00:05", "12.34")]
    def alipay_real(pay_total):
        lines = ["#支付宝业务明细查询", "#账号：[20880211096256330156]",
                 "#起始日期：[2024年06月01日 00:00:00]   终止日期：[2024年06月02日 00:00:00]",
                 "#-----------------------------------------业务明细列表----------------------------------------",
                 ",".join(AP_COLS)] + rows + [
                 "#-----------------------------------------业务明细列表结束------------------------------------",
                 "#交易合计：2笔，商家实收共%s元，商家优惠共0.00元" % pay_total,
                 "#退款合计：1笔，商家实收退款共-0.01元，商家优惠退款共0.00元",
                 "#导出时间：[2024年06月02日 05:46:49]"]
        return ("\n".join(lines) + "\n").encode("gbk")
    w("real-alipay.csv", alipay_real("12.35"))
    w("real-alipay-badtotal.csv", alipay_real("12.36"))
    # The older 合计 wording, as a merchant's tool rebuilding its bill of
    # 2020-09-25 writes it (code search id 16135633699): 交易金额共 and
    # 交易退款金额共 the sums of 订单金额（元） of the pay and the refund
    # rows, without a colon; 优惠金额共 is 订单金额 minus 商家实收, no one
    # column, and not checked.
    def alipay_older(pay_total, refund_total):
        lines = ["#支付宝业务明细查询", "#账号：[20888119784558440156]",
                 "#起始日期：[2020年09月25日 00:00:00]   终止日期：[2020年09月26日 00:00:00]",
                 "#-----------------------------------------业务明细列表----------------------------------------",
                 ",".join(AP_COLS)] + rows + [
                 "#-----------------------------------------业务明细列表结束------------------------------------",
                 "#交易合计：2笔，交易金额共%s元，优惠金额共0.00元" % pay_total,
                 "#退款合计：1笔，交易退款金额共%s元，优惠退款金额共0.00元" % refund_total,
                 "#导出时间：[2020年09月26日 05:46:49]"]
        return ("\n".join(lines) + "\n").encode("gbk")
    w("real-alipay-older.csv", alipay_older("12.35", "-0.01"))
    w("real-alipay-older-badpay.csv", alipay_older("12.36", "-0.01"))
    w("real-alipay-older-badrefund.csv", alipay_older("12.35", "-0.02"))
    # Stripe: `created` in the report's zone, [external_identifier], amounts
    # not always two decimals; and the Dashboard's default download
    st = ("balance_transaction_id,created,available_on,currency,gross,fee,net,reporting_category,"
          "source_id,charge_id,payment_metadata[external_identifier],description\n"
          "txn_a,2024-06-01 12:00:00,2024-06-03 00:00:00,usd,25,1.03,23.97,charge,ch_a,ch_a,EXT1,x\n"
          "txn_b,2024-06-01 13:00:00,2024-06-03 00:00:00,usd,-0.5,0,-0.5,refund,re_b,ch_a,EXT1,y\n"
          "txn_c,2024-06-01 14:00:00,2024-06-03 00:00:00,usd,3.35,0.4,2.95,charge,ch_c,ch_c,,z\n"
          "txn_d,2024-06-01 15:00:00,2024-06-03 00:00:00,usd,-28.35,0,-28.35,payout,po_d,,,p\n")
    w("real-stripe-created.csv", st.encode())
    w("real-stripe-dashboard.csv", (
        "balance_transaction_id,created,available_on,currency,gross,fee,net,reporting_category,"
        "description\n"
        "txn_e,2024-06-01 12:00:00,2024-06-03 00:00:00,usd,10.00,0.59,9.41,charge,Order 1\n"
        "txn_f,2024-06-01 13:00:00,2024-06-03 00:00:00,usd,-2.00,0.00,-2.00,refund,Refund 1\n"
        "txn_g,2024-06-02 00:00:00,2024-06-02 00:00:00,usd,-7.41,0.00,-7.41,payout,Payout\n")
        .encode())
    # PayPal STL: from SH with a BOM, CH names quoted and not, two sections,
    # an outgoing T0000 (DR) payment, SF/RF/FF counts
    def q(*f):
        return ",".join('"%s"' % x for x in f)
    ch_mixed = "\"CH\"," + ",".join(n if i % 2 else '"%s"' % n for i, n in enumerate(PP_CH))
    def sb(tid, inv, code, dc, amount, custom="", date="2024/08/20 00:01:17 -0700"):
        return q("SB", tid, inv, "", "", code, date, date, dc, amount, "USD", "DR", "30", "USD",
                 custom, "", "", "", "", "", "", "")
    sec1 = [sb("T1", "INV1", "T0006", "CR", "1000"), sb("T2", "", "T0000", "DR", "15000", "S"),
            sb("T3", "INV1", "T1107", "DR", "300")]
    sec2 = [sb("T4", "INV2", "T0006", "CR", "500", date="2024/08/21 09:00:00 -0700")]
    # SF and RF state the money per currency (not checked); SC, RC and FF
    # the record counts (published() has the layout as found)
    def money(rt):
        return q(rt, "USD", "1500", "15300", "0", "120", "CR", "0", "CR", "0")
    def stl(sf1=3, sf2=1, rf=4, ff=4):
        return ("\ufeff" + "\r\n".join(
            [q("SH", "2024/08/20 00:00:00 -0700", "2024/08/20 23:59:59 -0700", "", ""), ch_mixed]
            + sec1 + [money("SF"), q("SC", str(sf1)),
                      q("SH", "2024/08/21 00:00:00 -0700", "2024/08/21 23:59:59 -0700", "", ""),
                      ch_mixed] + sec2
            + [money("SF"), q("SC", str(sf2)), money("RF"), q("RC", str(rf)),
               q("FF", str(ff))]) + "\r\n").encode()
    w("real-paypal-sh.csv", stl())
    w("real-paypal-badsf.csv", stl(sf1=2))
    w("real-paypal-badff.csv", stl(ff=5))
    # a later file of a split report: FH 02, its section begun in file 01
    w("real-paypal-split-02.csv", ("\r\n".join(
        [q("FH", "02"), ch_mixed] + sec2 + [money("SF"), q("SC", "9"), money("RF"), q("RC", "9"),
                                           q("FF", "1")]) + "\r\n")
        .encode())
    # the older 57-column CH, unquoted, with "Transaction  Debit or Credit" and
    # Transactional Status
    old57 = (PP_CH[:7] + ["Transaction  Debit or Credit"] + PP_CH[8:14]
             + ["Transactional Status", "Insurance Amount", "Sales Tax Amount", "Shipping Amount",
                "Transaction Subject", "Transaction Note", "Payer's Account ID",
                "Payer Address Status", "Item Name", "Item ID", "Option 1 Name", "Option 1 Value",
                "Option 2 Name", "Option 2 Value", "Auction Site", "Auction Buyer ID",
                "Auction Closing Date", "Shipping Address Line1", "Shipping Address Line2",
                "Shipping Address City", "Shipping Address State", "Shipping Address Zip",
                "Shipping Address Country", "Shipping Method", "Custom Field", "Billing Address Line1",
                "Billing Address Line2", "Billing Address City", "Billing Address State",
                "Billing Address Zip", "Billing Address Country", "Consumer ID", "First Name",
                "Last Name", "Consumer Business Name", "Card Type", "Payment Source",
                "Shipping Name", "Authorization Review Status", "Protection Eligibility",
                "Payment Tracking ID", "Store ID", "Bank Reference ID"])
    old57 = [c for i, c in enumerate(old57) if c != "Custom Field" or i == old57.index("Custom Field")]
    old57 = old57[:56]
    assert len(old57) == 56 and len(set(old57)) == 56, (len(old57), len(set(old57)))
    def sb57(tid, inv, code, dc, amount, st):
        v = {n: "" for n in old57}
        v.update({"Transaction ID": tid, "Invoice ID": inv, "Transaction Event Code": code,
                  "Transaction Initiation Date": "2012/01/02 10:00:00 -0800",
                  "Transaction Completion Date": "2012/01/02 10:00:05 -0800",
                  "Transaction  Debit or Credit": dc, "Gross Transaction Amount": amount,
                  "Gross Transaction Currency": "USD", "Transactional Status": st})
        return q("SB", *[v[n] for n in old57])
    w("real-paypal-57.csv", ("\r\n".join(
        [q("RH", "2012/01/03 01:00:00 -0800", "A", "ACCT", "007"), q("FH", "01"),
         q("SH", "2012/01/02 00:00:00 -0800", "2012/01/02 23:59:59 -0800", "", ""),
         "CH," + ",".join(old57),
         sb57("O1", "OINV1", "T0006", "CR", "1999", "S"),
         sb57("O2", "OINV2", "T0006", "CR", "500", "P"),
         sb57("O3", "", "T0000", "DR", "700", "S"),
         q("SF", "3"), q("SC", "3"), q("RF", "3"), q("RC", "3"), q("FF", "3")]) + "\r\n").encode())


# --- Bills as published: reproduced from public files, each with its source
# (find them with the search tool's read_file by the id given).  Their
# expected rows are in tests/db/test_bill_layouts.sh.

def published(d):
    w = lambda name, data: open(os.path.join(d, name), "wb").write(data)
    # A WeChat SUCCESS bill (v2 downloadbill, bill_type SUCCESS, 2019-11-04),
    # the API's answer as a merchant logged it (code search id 36922938523,
    # gka.thread.dzxc.DzxcThread): 20 columns, and the 7-column summary of
    # the ALL bill, stating 退款总金额 `0.00 though the rows have no 退款金额
    # column; CRLF, no break after the last line; the '?' that source shows
    # before 交易时间 is its BOM as printed.
    rows = [("2019-11-04 18:52:59", "4200000422201911044383886395", "1572864513058gxaivpd",
             "o1gswuOe-4_AZqm1gipKyZGU2iZ8", "CFT"),
            ("2019-11-04 19:57:05", "4200000423201911046892119860", "1572868323023nkfdudu",
             "o1gswuJ_mUWc0bQ8eLkBYPBtHpR8", "GDB_CREDIT"),
            ("2019-11-04 19:10:42", "4200000428201911047831786620", "1572865579667loevqgw",
             "o1gswuOe-4_AZqm1gipKyZGU2iZ8", "CFT"),
            ("2019-11-04 19:15:51", "4200000438201911041032765762", "1572865890364jryczgn",
             "o1gswuOe-4_AZqm1gipKyZGU2iZ8", "CFT"),
            ("2019-11-04 19:24:03", "4200000447201911041288502636", "1572866378743unbkuor",
             "o1gswuOe-4_AZqm1gipKyZGU2iZ8", "CFT")]
    lines = [",".join(WX_SUCCESS)] + [
        "`%s,`wxdf9968af00e458e0,`1393091302,`0,`,`%s,`%s,`%s,`NATIVE,`SUCCESS,`%s,`CNY,`0.01,"
        "`0.00,`长春工业大学收费,`,`0.00000,`0.60%%,`0.01,`" % r for r in rows] + [
        ",".join(WX_SUMMARY), "`5,`0.05,`0.00,`0.00,`0.00000,`0.05,`0.00"]
    bill = "\ufeff" + "\r\n".join(lines)
    w("pub-wechat-success.csv", bill.encode())
    # the same stating a refund total its rows cannot hold
    w("pub-wechat-success-refundtotal.csv",
      bill.replace("`0.05,`0.00,`0.00,`0.00000", "`0.05,`0.01,`0.00,`0.00000").encode())
    # An older SUCCESS bill (2018-04-18), as a merchant's javadoc quotes it
    # (code search id 4918993170): 18 columns (子商户号, 总金额, 企业红包金额),
    # the older 5-column summary stating 总退款金额 `0.00 without a 退款金额
    # column.
    w("pub-wechat-old-success.csv", (
        "交易时间,公众账号ID,商户号,子商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,"
        "付款银行,货币种类,总金额,企业红包金额,商品名称,商户数据包,手续费,费率\n"
        "`2018-04-18 17:08:23,`wx8ce94c34d4ec8d1d,`1498143142,`0,`WEB,"
        "`4200000077201804180423198134,`BV1R180418170252DS,`oa15W04fxj6H8WrwGsUmFysb7Sv0,`NATIVE,"
        "`SUCCESS,`BOC_DEBIT,`CNY,`0.01,`0.00,`BlueMC-购买点数1点,`,`0.00000,`0.60%\n"
        "总交易单数,总交易额,总退款金额,总企业红包退款金额,手续费总金额\n"
        "`1,`0.01,`0.00,`0.00,`0.00000\n").encode())
    # A PayPal STL as PayPal writes it: the header rows of a 2024 report
    # (code search id 66003323722; its redacted IDs replaced), dates and
    # amounts unquoted, RH ending in a comma, empty fields unquoted; the
    # footers as in a bank's STL fixtures (code search id 29278948321): SF
    # and RF state per currency the money totals and balances, SC and RC
    # the section's and the report's record counts.
    stl = [
        '"RH",2024/08/21 02:44:19 -0700,"A","ACCT1234",009,',
        '"FH",01',
        '"SH",2024/08/20 00:00:00 -0700,2024/08/20 23:59:59 -0700,"","ACCT1234",""',
        '"CH",' + ",".join('"%s"' % c for c in PP_CH),
        '"SB","1AB23456CD789012E","","","","T0000",2024/08/20 00:01:17 -0700,'
        '2024/08/20 00:01:17 -0700,"DR",3000,"USD","",,"","","","","","",,,',
        '"SB","2AB23456CD789012F","INV-77","","","T0006",2024/08/20 01:02:03 -0700,'
        '2024/08/20 01:02:05 -0700,"CR",1999,"USD","DR",88,"USD","","","","","",,,',
        '"SF","USD",1999,3000,0,88,"CR",0,"CR",0,"CR",0,"CR",0,"CR",0,"CR",0,2',
        '"SC",2',
        '"RF","USD",1999,3000,0,88,"CR",0,"CR",0,"CR",0,"CR",0,"CR",0,"CR",0,2',
        '"RC",2',
        '"FF",2']
    w("pub-paypal-stl.csv", ("\ufeff" + "\r\n".join(stl) + "\r\n").encode())
    w("pub-paypal-stl-badsc.csv", ("\ufeff" + "\r\n".join(stl) + "\r\n")
      .replace('"SC",2', '"SC",3').encode())
    # older STL files were UTF-16 (Magento's Paypal Report\Settlement,
    # FILES_IN_CHARSET, code search id 27035332040): the same report so
    w("pub-paypal-stl-utf16.csv", ("\r\n".join(stl) + "\r\n").encode("utf-16"))


# samples/: one bill per channel, under names no statements-* glob takes
SAMPLES = {"wechat-all.csv": "bill-wechat-trade-2024-05-01.csv",
           "alipay-bill.zip": "bill-alipay-trade-2024-05-01.zip",
           "stripe-balance.csv": "bill-stripe-balance-2024-05-01.csv",
           "paypal-stl.csv": "bill-paypal-stl-2024-08-20.csv"}

if __name__ == "__main__":
    args = sys.argv[1:]
    samples = args[:1] == ["--samples"]
    d = (args[1:] if samples else args)[0] if (args[1:] if samples else args) else "."
    os.makedirs(d, exist_ok=True)
    wechat(d)
    alipay(d)
    stripe(d)
    paypal(d)
    if not samples:
        real_layouts(d)
        published(d)
    if samples:
        for name in os.listdir(d):
            if name in SAMPLES:
                os.replace(os.path.join(d, name), os.path.join(d, SAMPLES[name]))
            elif name not in SAMPLES.values():
                os.remove(os.path.join(d, name))
