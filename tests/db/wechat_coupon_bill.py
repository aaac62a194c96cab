#!/usr/bin/env python3
"""A WeChat Pay ALL trade bill paid partly with 免充值 coupons, and the WeChat
Pay v3 callbacks of its rows (tests/db/test_reconcile_coupon.sh).

Derived from public material (no bill is copied):
- the 27-column ALL layout and its 7-column summary as WxJava's
  WxPayBillResultTest (weixin-java-pay, PAY_BILL_RESULT_ALL_CONTENT) and
  pay.weixin.qq.com's trade-bill format page show them (channel-formats.md
  [W1], [W5]);
- the amounts of WeChat Pay's 免充值 coupon acceptance cases (仿真测试, the
  community guide "微信支付商户免充值代金券接口升级验收指引 用例组合
  1003+1004+1005", developers.weixin.qq.com/community/develop/article/doc/
  0000c6941647a085d6fbe0fb256013): case 1003 an order of 5.51 and case
  1004 an order of 5.52 refunded, each paid partly with a 免充值 coupon,
  case 1005 downloading the bill.  With such a coupon the bill's
  应结订单金额 = 订单金额 - 代金券金额 and 退款金额 = 申请退款金额 minus the
  coupon's part, while the callbacks carry 订单金额 as amount.total and
  申请退款金额 as amount.refund (pay.weixin.qq.com "支付通知" and
  "退款结果通知"; SKIT.FlurlHttpClient.Wechat's recorded refund response
  shows the same amount object: total, refund, payer_total,
  payer_refund, settlement_refund, discount_refund).

Usage: wechat_coupon_bill.py BILL.csv CALLBACKS.csv TENANT N [--no-coupons]
writes a bill of N orders (every third one paid with a coupon, unless
--no-coupons; every fourth one refunded in full) and the callbacks as a
canonical CSV.
"""
import json
import sys

HDR = ("交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,"
       "交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,"
       "充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,"
       "费率备注")
SUMMARY = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额"


def fen(x):
    return "%d.%02d" % (x // 100, x % 100)


def fee5(x):  # WeChat's fee: 0.6 %, five decimals, rounded half up in fen
    return "%d.%05d" % divmod((x * 6 + 500) // 1000 * 1000, 100000)


def main():
    bill, cbs, tenant, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    coupons = "--no-coupons" not in sys.argv[5:]
    rows, calls = [], []
    tot = dict(settle=0, refund=0, fee=0, order=0, applied=0)
    for i in range(1, n + 1):
        order = 551 if i % 2 else 552          # the acceptance cases' amounts
        coupon = 1 if coupons and i % 3 == 0 else 0   # a 免充值 coupon of 0.01
        settle = order - coupon
        t = "2018-05-07 %02d:%02d:%02d" % (9 + i // 60 % 12, i % 60, (i * 7) % 60)
        iso = t.replace(" ", "T") + "+08:00"
        txn = "42000001%020d" % i
        key = "sandbox%05d" % i
        f = (settle * 6 + 500) // 1000
        rows.append(["`" + v for v in [
            t, "wx2421b1c4370ec43b", "10000100", "0", "1000", txn, key,
            "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "JSAPI", "SUCCESS", "CFT", "CNY", fen(settle),
            fen(coupon), "0", "0", "0.00", "0.00", "", "", "免充值测试", "", fee5(settle),
            "0.60%", fen(order), "0.00", ""]])
        tot["settle"] += settle
        tot["order"] += order
        tot["fee"] += f
        calls.append((key, "pay", {"mchid": "10000100", "appid": "wx2421b1c4370ec43b",
                                   "out_trade_no": key, "transaction_id": txn,
                                   "trade_type": "JSAPI", "trade_state": "SUCCESS",
                                   "success_time": iso,
                                   "amount": {"total": order, "payer_total": settle,
                                              "currency": "CNY", "payer_currency": "CNY"},
                                   "promotion_detail": ([{"coupon_id": "%08d" % i,
                                                          "type": "NOCASH",
                                                          "amount": coupon}]
                                                        if coupon else [])}, iso))
        if i % 4 == 0:
            rt = "2018-05-07 %02d:%02d:%02d" % (21 + i // 60 % 3, i % 60, (i * 11) % 60)
            riso = rt.replace(" ", "T") + "+08:00"
            rid = "50000%023d" % i
            out_refund = "refund%05d" % i
            rows.append(["`" + v for v in [
                rt, "wx2421b1c4370ec43b", "10000100", "0", "1000", txn, key,
                "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o", "JSAPI", "REFUND", "CFT", "CNY", "0.00", "0.00",
                rid, out_refund, fen(settle), "0.00", "ORIGINAL", "SUCCESS", "免充值测试", "",
                "-" + fee5(settle), "0.60%", "0.00", fen(order), ""]])
            tot["refund"] += settle
            tot["applied"] += order
            tot["fee"] -= f
            calls.append((key, "refund:" + out_refund,
                          {"mchid": "10000100", "out_trade_no": key, "transaction_id": txn,
                           "out_refund_no": out_refund, "refund_id": rid,
                           "refund_status": "SUCCESS", "success_time": riso,
                           "user_received_account": "支付用户零钱",
                           "amount": {"total": order, "refund": order, "payer_total": settle,
                                      "payer_refund": settle}}, riso))
    with open(bill, "w", encoding="utf-8", newline="") as o:
        o.write(HDR + "\r\n")
        for r in rows:
            o.write(",".join(r) + "\r\n")
        o.write(SUMMARY + "\r\n")
        fee = tot["fee"]
        o.write(",".join("`" + v for v in [
            str(len(rows)), fen(tot["settle"]), fen(tot["refund"]), "0.00",
            ("-" if fee < 0 else "") + "%d.%05d" % divmod(abs(fee) * 1000, 100000),
            fen(tot["order"]), fen(tot["applied"])]) + "\r\n")
    with open(cbs, "w", encoding="utf-8", newline="") as o:
        o.write("tenant_id,channel,out_trade_no,callback_type,status,payload,received_at\n")
        for key, kind, payload, at in calls:
            p = json.dumps(payload, ensure_ascii=False).replace('"', '""')
            o.write('%s,wechat,%s,%s,2,"%s",%s\n' % (tenant, key, kind, p, at))


main()
