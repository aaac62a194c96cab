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
    if samples:
        for name in os.listdir(d):
            if name in SAMPLES:
                os.replace(os.path.join(d, name), os.path.join(d, SAMPLES[name]))
            elif name not in SAMPLES.values():
                os.remove(os.path.join(d, name))
