#!/usr/bin/env python3
"""Write (default) or --check the hand-made sample statement files in this directory.

Every row is spelled out below, so the files can be checked by eye.  The
gzip files are deterministic (mtime 0, no file name in the header), so
running this again gives the same bytes.

  python3 samples/make_samples.py            # rewrite the samples, then verify them
  python3 samples/make_samples.py --check    # only verify the files on disk

Verification parses each file with the csv / json modules, checks that every
good row is well-formed (integer tenant_id and status, non-blank key texts,
JSON payload with two-decimal amounts, received_at with an explicit offset and
a real calendar date) and that every bad row fails for exactly the reason
declared here, then prints the figures that README.md quotes.
"""

import csv
import datetime
import decimal
import gzip
import io
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- payload builders (amounts are JSON numbers with two decimals) -------------

def wx(amount, state, txn, openid, extra=""):
    return ('{"amount":%s,"currency":"CNY","trade_state":"%s","transaction_id":"%s",'
            '"payer":{"openid":"%s"}%s}' % (amount, state, txn, openid, extra))


def wx_refund(amount, refund, state, refund_id, txn):
    return ('{"amount":%s,"refund_amount":%s,"currency":"CNY","refund_status":"%s",'
            '"refund_id":"%s","transaction_id":"%s"}' % (amount, refund, state, refund_id, txn))


def ali(amount, status, trade_no, buyer, extra=""):
    return ('{"amount":%s,"currency":"CNY","trade_status":"%s","trade_no":"%s",'
            '"buyer_id":"%s"%s}' % (amount, status, trade_no, buyer, extra))


def up(amount, state, query_id, extra=""):
    return ('{"amount":%s,"currency":"CNY","trade_state":"%s","query_id":"%s",'
            '"acc_no":"6222****%s"%s}' % (amount, state, query_id, query_id[-4:], extra))


def stripe(amount, status, pi, customer):
    return ('{"amount":%s,"currency":"USD","status":"%s","payment_intent":"%s",'
            '"customer":"%s"}' % (amount, status, pi, customer))


def paypal(amount, status, capture):
    return '{"amount":%s,"currency":"USD","status":"%s","capture_id":"%s"}' % (amount, status, capture)


# ---- row model -------------------------------------------------------------------
# R(tenant_id, channel, out_trade_no, callback_type, status, payload, received_at,
#   bad=None or the reason it must be rejected, note=free text for the README)

class R:
    def __init__(self, tenant_id, channel, out_trade_no, callback_type, status, payload, received_at,
                 bad=None, remark="", omit=()):
        self.v = {"tenant_id": tenant_id, "channel": channel, "out_trade_no": out_trade_no,
                  "callback_type": callback_type, "status": status, "payload": payload,
                  "received_at": received_at, "remark": remark}
        self.bad = bad
        self.omit = set(omit)


T1, T2, T3, TBIG = 10001, 10002, 10003, 9007199254740993        # TBIG = 2**53 + 1
OID_A = "o7Xb3tQ0Zk9vVYgM1kq2LrH4sA01"
OID_B = "oMx2Lq8RvT5nYcW3ZpK7aHd9eF42"
OID_C = "oQ4wE6rT8yU0iO2pA4sD6fG8hJ33"
OID_D = "oZ1xC3vB5nM7qW9eR1tY3uI5oP64"

# -- 1. statements-wechat-2026-11-28.csv.gz ----------------------------------------
WECHAT_COLS = ["out_trade_no", "callback_type", "received_at", "tenant_id", "payload", "status",
               "channel", "remark"]
WECHAT = [
    R(T1, "wechat", "WX20261128000100001", "pay", 1,
      wx("168.90", "USERPAYING", "4200001234202611281234567001", OID_A), "2026-11-28T10:00:00+08:00"),
    R(T1, "wechat", "WX20261128000100001", "pay", 2,
      wx("168.90", "SUCCESS", "4200001234202611281234567001", OID_A,
         ',"success_time":"2026-11-28T10:00:05+08:00"'), "2026-11-28T10:00:05+08:00",
      remark="newer version of line 2"),
    R(T1, "wechat", "WX20261128000100002", "pay", 2,
      wx("59.00", "SUCCESS", "4200001234202611281234567002", OID_B), "2026-11-28 02:15:30Z"),
    R(T1, "wechat", "WX20261128000100003", "pay", 0,
      wx("1288.00", "NOTPAY", "4200001234202611281234567003", OID_C), "2026-11-28T10:20:00.123+0800"),
    R(T2, "wechat", "WX20261128000200001", "pay", 2,
      wx("9.90", "SUCCESS", "4200005678202611281234567101", OID_D,
         ',"attach":"size \\"L\\", colour red"'), "2026-11-28T11:00:00+08",
      remark="checked, ok"),
    R(T1, "wechat", "WX20261128000100004", "pay", 2,
      wx("300.00", "SUCCESS", "4200001234202611281234567004", OID_A,
         ',"coupon_batch":123456789012345678901234567890'), "2026-11-28T11:30:00+08:00"),
    R(T1, "wechat", "WX20261128000100001", "refund", 1,
      wx_refund("168.90", "50.00", "PROCESSING", "50300001234202611281234567001",
                "4200001234202611281234567001"), "2026-11-28T12:00:00+08:00"),
    R(T2, "wechat", "", "pay", 2,
      wx("45.50", "SUCCESS", "4200005678202611281234567199", OID_B), "2026-11-28T12:05:00+08:00",
      bad="blank out_trade_no"),
    R(T2, "wechat", "WX20261128000200002", "pay", 1,
      wx("45.50", "USERPAYING", "4200005678202611281234567102", OID_B), "2026-11-28T12:10:00+08:00"),
    R(TBIG, "wechat", "WX20261128000900001", "pay", 2,
      wx("0.01", "SUCCESS", "4200009999202611281234567201", OID_C), "2026-11-28T04:20:00Z"),
    R(T2, "wechat", "WX20261128000200003", "pay", 2,
      '{"amount":520.00,\r\n "currency":"CNY","trade_state":"SUCCESS",'
      '"transaction_id":"4200005678202611281234567103","payer":{"openid":"%s"}}' % OID_D,
      "2026-11-28T12:30:00+08:00", remark="payload spans two lines"),
    R(T1, "wechat", "WX20261128000100003", "pay", 2,
      wx("1288.00", "SUCCESS", "4200001234202611281234567003", OID_C), "2026-11-28T10:25:00+08:00"),
    R(T1, "wechat", "WX20261128000100001", "pay", 1,
      wx("168.90", "USERPAYING", "4200001234202611281234567001", OID_A,
         ',"retry":1'), "2026-11-28T09:59:58+08:00", remark="late retry, older than lines 2-3"),
    R(T1, "wechat", "WX20261128000100005", "pay", 2,
      "amount=88.00&currency=CNY&trade_state=SUCCESS", "2026-11-28T13:00:00+08:00",
      bad="payload not JSON"),
    R(T2, "wechat", "WX20261128000200002", "pay", 2,
      wx("45.50", "SUCCESS", "4200005678202611281234567102", OID_B), "2026-11-28 04:15:00Z"),
    R(T2, "wechat", "WX20261128000200004", "pay", 1,
      wx("77.70", "USERPAYING", "4200005678202611281234567104", OID_D), "2026-11-28T13:00:00+08:00"),
    R(T2, "wechat", "WX20261128000200004", "pay", 2,
      wx("77.70", "SUCCESS", "4200005678202611281234567104", OID_D), "2026-11-28 05:00:00Z",
      remark="same instant as the row before: the later row wins"),
    R(T1, "wechat", "WX20261128000100006", "pay", 2,
      wx("1999.00", "SUCCESS", "4200001234202611281234567006", OID_B), "2026-11-28 03:00:00Z"),
    R(T1, "wechat", "WX20261128000100006", "pay", 1,
      wx("1999.00", "USERPAYING", "4200001234202611281234567006", OID_B),
      "2026-11-28T10:30:00+08:00", remark="sorts after 03:00:00Z as text, but is 02:30Z: older"),
    R(T1, "wechat", "WX20261128000100002", "pay", 2,
      wx("59.00", "SUCCESS", "4200001234202611281234567002", OID_B), "2026-11-28 02:15:30Z",
      remark="exact duplicate notification"),
    R(T1, "wechat", "WX20261128000100007", "pay", 2,
      wx("12.00", "SUCCESS", "4200001234202611281234567007", OID_C), "2026-02-30T10:00:00+08:00",
      bad="received_at 2026-02-30 is not a date"),
    R(T2, "wechat", "WX20261128000200005", "close", 2,
      wx("75.00", "CLOSED", "4200005678202611281234567105", OID_B), "2026-11-28T14:00:00+08:00"),
    R(T1, "wechat", "WX20261128000100001", "refund", 2,
      wx_refund("168.90", "50.00", "SUCCESS", "50300001234202611281234567001",
                "4200001234202611281234567001"), "2026-11-28T12:30:00+08:00"),
    R(T1, "wechat", "WX20261128000100008", "pay", 2,
      wx("8.80", "SUCCESS", "4200001234202611281234567008", OID_D), "2026-11-28T14:10:00+08:00",
      remark="重发"),
    R(T2, "wechat", "WX20261128000200006", "pay", 3,
      wx("66.60", "PAYERROR", "4200005678202611281234567106", OID_A), "2026-11-28T14:20:00.5+08:00"),
    R(TBIG, "wechat", "WX20261128000900002", "pay", 1,
      wx("250.00", "USERPAYING", "4200009999202611281234567202", OID_D), "2026-11-28T06:30:00Z"),
    R(T1, "wechat", "WX20261128000100009", "notify", 2,
      wx("35.00", "SUCCESS", "4200001234202611281234567009", OID_A), "2026-11-28T15:00:00+08:00"),
    R(T2, "wechat", "WX20261128000200007", "pay", 2,
      wx("120.00", "SUCCESS", "4200005678202611281234567107", OID_C), "2026-11-28T15:10:00.250+08:00"),
    R(T1, "wechat", "WX20261128000100010", "pay", 0,
      wx("5.00", "NOTPAY", "4200001234202611281234567010", OID_B), "2026-11-28T15:20:00+08:00"),
    R(TBIG, "wechat", "WX20261128000900002", "pay", 2,
      wx("250.00", "SUCCESS", "4200009999202611281234567202", OID_D), "2026-11-28T14:31:00+08:00"),
]

# -- 2. statements-alipay-2026-11-28.ndjson ------------------------------------------
ALI = [
    R(T1, "alipay", "AP20261128000300001", "pay", 1,
      ali("88.00", "WAIT_BUYER_PAY", "2026112822001400001000000001", "2088102177840001"),
      "2026-11-28T09:00:00+08:00"),
    R(T1, "alipay", "AP20261128000300001", "pay", 2,
      ali("88.00", "TRADE_SUCCESS", "2026112822001400001000000001", "2088102177840001"),
      "2026-11-28T09:00:10+08:00"),
    R(T1, "alipay", "AP20261128000300002", "pay", 2,
      ali("1024.50", "TRADE_SUCCESS", "2026112822001400001000000002", "2088102177840002",
          ',"subject":"测试商品-年货礼盒"'), "2026-11-28 01:05:00Z"),
    R(T3, "alipay", "AP20261128000300003", "pay", 2,
      ali("19.99", "TRADE_SUCCESS", "2026112822001400001000000003", "2088102177840003"),
      "2026-11-28T09:10:00+0800"),
    R("abc", "alipay", "AP20261128000300004", "pay", 2,
      ali("10.00", "TRADE_SUCCESS", "2026112822001400001000000004", "2088102177840004"),
      "2026-11-28T09:15:00+08:00", bad="tenant_id abc is not an integer"),
    R(T3, "alipay", "AP20261128000300005", "pay", 0,
      ali("300.00", "WAIT_BUYER_PAY", "2026112822001400001000000005", "2088102177840005"),
      "2026-11-28T09:20:00+08:00", omit=("status",), remark="no status member: status 0"),
    R(T1, "alipay", "AP20261128000300001", "pay", 1,
      ali("88.00", "WAIT_BUYER_PAY", "2026112822001400001000000001", "2088102177840001",
          ',"notify_retry":2'), "2026-11-28T08:59:59+08:00", remark="older than line 2: out of order"),
    R(T3, "alipay", "AP20261128000300006", "refund", 1,
      '{"amount":19.99,"refund_amount":19.99,"currency":"CNY","refund_status":"REFUND_PROCESSING",'
      '"out_request_no":"RF20261128000300006"}', "2026-11-28T10:00:00+08:00"),
    R(T1, "alipay", "AP20261128000300007", "pay", 2,
      ali("66.00", "TRADE_SUCCESS", "2026112822001400001000000007", "2088102177840007"),
      "2026-11-28 14:00:00", bad="received_at has no UTC offset"),
    R(T3, "alipay", "AP20261128000300006", "refund", 2,
      '{"amount":19.99,"refund_amount":19.99,"currency":"CNY","refund_status":"REFUND_SUCCESS",'
      '"out_request_no":"RF20261128000300006"}', "2026-11-28T10:00:30+08:00"),
    R(T1, "alipay", "AP20261128000300008", "pay", 3,
      ali("45.00", "TRADE_CLOSED", "2026112822001400001000000008", "2088102177840008"),
      "2026-11-28T10:30:00+08:00"),
    R(T3, "alipay", "AP20261128000300009", "pay", 2,
      ali("2500.00", "TRADE_SUCCESS", "2026112822001400001000000009", "2088102177840009",
          ',"fund_bill_list":[{"amount":2000.00,"fundChannel":"ALIPAYACCOUNT"},'
          '{"amount":500.00,"fundChannel":"COUPON"}]'), "2026-11-28T11:00:00+08:00"),
    R(T1, "alipay", "AP20261128000300010", "pay", 1,
      ali("15.80", "WAIT_BUYER_PAY", "2026112822001400001000000010", "2088102177840010"),
      "2026-11-28T11:30:00+08"),
    R(T1, "alipay", "AP20261128000300010", "pay", 2,
      ali("15.80", "TRADE_SUCCESS", "2026112822001400001000000010", "2088102177840010"),
      "2026-11-28T03:31:00Z"),
    R(T3, "alipay", "AP20261128000300011", "notify", 2,
      ali("99.00", "TRADE_SUCCESS", "2026112822001400001000000011", "2088102177840011",
          ',"memo":null'), "2026-11-28T12:00:00+08:00"),
    R(T1, "alipay", "AP20261128000300012", "pay", 2,
      ali("7.50", "TRADE_SUCCESS", "2026112822001400001000000012", "2088102177840012"),
      "2026-11-28T12:15:00.999+08:00"),
    R(T3, "alipay", "AP20261128000300003", "pay", 2,
      ali("19.99", "TRADE_SUCCESS", "2026112822001400001000000003", "2088102177840003",
          ',"gmt_payment":"2026-11-28 09:10:02"'), "2026-11-28T09:10:02+08:00"),
    R(T1, "alipay", "AP20261128000300013", "close", 2,
      ali("49.00", "TRADE_CLOSED", "2026112822001400001000000013", "2088102177840013"),
      "2026-11-28T12:45:00+08:00"),
    R(T3, "alipay", "AP20261128000300014", "pay", 2,
      ali("888.88", "TRADE_SUCCESS", "2026112822001400001000000014", "2088102177840014"),
      "2026-11-28T13:00:00+08:00"),
    R(T1, "alipay", "AP20261128000300015", "pay", 0,
      ali("3.00", "WAIT_BUYER_PAY", "2026112822001400001000000015", "2088102177840015"),
      "2026-11-28T13:30:00+08:00"),
    R(T3, "alipay", "AP20261128000300016", "pay", 2,
      ali("150.00", "TRADE_SUCCESS", "2026112822001400001000000016", "2088102177840016"),
      "2026-11-28T13:45:00+08:00"),
]
ALI_BLANK_AFTER = 10     # a blank line after the 10th record
# member order per record (by index), default standard order
ALI_ORDERS = {
    2: ["received_at", "payload", "status", "callback_type", "out_trade_no", "channel", "tenant_id"],
    11: ["channel", "tenant_id", "out_trade_no", "callback_type", "received_at", "status", "payload"],
}

# -- 3. statements-mixed-2026-11-29.ndjson.gz (two gzip members) ---------------------------
MIXED = [
    # later state of keys from file 1 (wechat)
    R(T1, "wechat", "WX20261128000100010", "pay", 2,
      wx("5.00", "SUCCESS", "4200001234202611281234567010", OID_B), "2026-11-29T09:00:00+08:00",
      remark="newer: 0 -> 2, updated"),
    R(T1, "wechat", "WX20261128000100003", "pay", 1,
      wx("1288.00", "USERPAYING", "4200001234202611281234567003", OID_C), "2026-11-28T10:22:00+08:00",
      remark="older than the stored 10:25 version: stale"),
    R(T1, "wechat", "WX20261128000100004", "pay", 2,
      wx("300.00", "SUCCESS", "4200001234202611281234567004", OID_A,
         ',"coupon_batch":123456789012345678901234567890'), "2026-11-28T03:30:00Z",
      remark="same payload, status and instant as stored (other offset): unchanged"),
    R(T2, "wechat", "WX20261128000200004", "pay", 1,
      wx("77.70", "USERPAYING", "4200005678202611281234567104", OID_D,
         ',"resend":true'), "2026-11-29T10:00:00+08:00",
      remark="newer but status 1 over a final 2: payload updated, status stays 2"),
    R(TBIG, "wechat", "WX20261128000900002", "pay", 2,
      wx("250.00", "SUCCESS", "4200009999202611281234567202", OID_D), "2026-11-28T14:31:00+08:00",
      remark="identical to stored row: unchanged"),
    R(T2, "wechat", "WX20261128000200002", "refund", 2,
      wx_refund("45.50", "45.50", "SUCCESS", "50300005678202611281234567102",
                "4200005678202611281234567102"), "2026-11-29T10:30:00+08:00", remark="new key"),
    # later state of keys from file 2 (alipay)
    R(T1, "alipay", "AP20261128000300015", "pay", 3,
      ali("3.00", "TRADE_CLOSED", "2026112822001400001000000015", "2088102177840015"),
      "2026-11-29T00:30:00+08:00", remark="newer: 0 -> 3, updated"),
    R(T3, "alipay", "AP20261128000300016", "pay", 2,
      ali("150.00", "TRADE_SUCCESS", "2026112822001400001000000016", "2088102177840016"),
      "2026-11-28T05:45:00Z", remark="same instant as stored, identical: unchanged"),
    R(T3, "alipay", "AP20261128000300009", "pay", 2,
      ali("2500.00", "TRADE_SUCCESS", "2026112822001400001000000009", "2088102177840009"),
      "2026-11-28T10:59:00+08:00", remark="older: stale"),
    # new keys, other channels
    R(T1, "unionpay", "UP20261129000400001", "pay", 1,
      up("600.00", "PROCESSING", "202611290000000400001"), "2026-11-29T08:00:00+08:00"),
    R(T1, "unionpay", "UP20261129000400001", "pay", 2,
      up("600.00", "SUCCESS", "202611290000000400001"), "2026-11-29T08:00:40+08:00",
      remark="newer in the same file"),
    R(T2, "stripe", "ST20261129000500001", "pay", 2,
      stripe("49.99", "succeeded", "pi_3QabcDEF1234567890ghij", "cus_R2d2C3po4Bb8"),
      "2026-11-28T19:00:00-05:00"),
    R(T2, "stripe", "ST20261129000500002", "pay", 1,
      stripe("15.00", "processing", "pi_3QxyzXYZ0987654321klmn", "cus_H4n5So7Lo8Ch"),
      "2026-11-29T00:10:00Z"),
    R(T2, "paypal", "PP20261129000600001", "pay", 2,
      paypal("120.00", "COMPLETED", "8MC585209K746392H"), "2026-11-29T01:00:00.000001Z"),
    R(T3, "alipay", "AP20261129000300101", "pay", 2,
      ali("66.60", "TRADE_SUCCESS", "2026112922001400001000000101", "2088102177840101"),
      "2026-11-29T09:45:00+08:00"),
    R(T1, "wechat", "WX20261129000100101", "pay", 2,
      wx("18.00", "SUCCESS", "4200001234202611291234567101", OID_A), "2026-11-29T10:00:00+05:30"),
    # second gzip member starts here
    R(T2, "stripe", "ST20261129000500002", "pay", 2,
      stripe("15.00", "succeeded", "pi_3QxyzXYZ0987654321klmn", "cus_H4n5So7Lo8Ch"),
      "2026-11-29T00:12:00Z", remark="newer in the same file, other gzip member"),
    R(T2, "paypal", "PP20261129000600001", "refund", 1,
      '{"amount":120.00,"refund_amount":20.00,"currency":"USD","status":"PENDING",'
      '"refund_id":"1JU08902781691411"}', "2026-11-29T02:00:00Z"),
    R(T1, "unionpay", "UP20261129000400002", "pay", 0,
      up("35.00", "WAITING", "202611290000000400002"), "2026-11-29T11:00:00+08:00"),
    R(T1, "wechat", "WX20261128000100001", "pay", 2,
      wx("168.90", "SUCCESS", "4200001234202611281234567001", OID_A,
         ',"success_time":"2026-11-28T10:00:05+08:00"'), "2026-11-28T10:00:05+08:00",
      remark="identical to stored row: unchanged"),
    R(T1, "wechat", "WX20261128000100006", "pay", 2,
      wx("1999.00", "SUCCESS", "4200001234202611281234567006", OID_B,
         ',"settled":true'), "2026-11-29T11:30:00+08:00", remark="newer: updated (2 -> 2)"),
    R(T3, "alipay", "AP20261128000300006", "refund", 2,
      '{"amount":19.99,"refund_amount":19.99,"currency":"CNY","refund_status":"REFUND_SUCCESS",'
      '"out_request_no":"RF20261128000300006"}', "2026-11-28T09:59:00+08:00",
      remark="older: stale"),
]
MIXED_SPLIT = 16         # records [0:16] in gzip member 1, the rest in member 2

# -- 4. statements-unionpay-nochannel-2026-11-29.csv (load with --set channel=unionpay) -------
UP_COLS = ["tenant_id", "out_trade_no", "callback_type", "status", "payload", "received_at"]
UNIONPAY = [
    R(T1, "unionpay", "UP20261129000400001", "pay", 2,
      up("600.00", "SUCCESS", "202611290000000400001", ',"settle_date":"1129"'),
      "2026-11-29T12:00:00+08:00", remark="newer than file 3's version: updated"),
    R(T1, "unionpay", "UP20261129000400002", "pay", 2,
      up("35.00", "SUCCESS", "202611290000000400002"), "2026-11-29T11:00:20+08:00"),
    R(T1, "unionpay", "UP20261129000400003", "pay", 2,
      up("1200.00", "SUCCESS", "202611290000000400003"), "2026-11-29T12:05:00+08:00"),
    R(T2, "unionpay", "UP20261129000400004", "pay", 1,
      up("80.00", "PROCESSING", "202611290000000400004"), "2026-11-29T12:10:00+08:00"),
    R(T2, "unionpay", "UP20261129000400004", "pay", 2,
      up("80.00", "SUCCESS", "202611290000000400004"), "2026-11-29T04:11:00Z"),
    R(T2, "unionpay", "UP20261129000400005", "pay", 3,
      up("42.00", "FAILED", "202611290000000400005", ',"resp_msg":"余额不足, 交易失败"'),
      "2026-11-29T12:20:00+08:00"),
    R("99999999999999999999", "unionpay", "UP20261129000400006", "pay", 2,
      up("10.00", "SUCCESS", "202611290000000400006"), "2026-11-29T12:25:00+08:00",
      bad="tenant_id out of the 64-bit range"),
    R(T3, "unionpay", "UP20261129000400007", "pay", 2,
      up("256.00", "SUCCESS", "202611290000000400007"), "2026-11-29T12:30:00+08"),
    R(T3, "unionpay", "UP20261129000400008", "refund", 1,
      '{"amount":256.00,"refund_amount":56.00,"currency":"CNY","trade_state":"PROCESSING",'
      '"query_id":"202611290000000400008"}', "2026-11-29T12:40:00+08:00"),
    R(T3, "unionpay", "UP20261129000400008", "refund", 2,
      '{"amount":256.00,"refund_amount":56.00,"currency":"CNY","trade_state":"SUCCESS",'
      '"query_id":"202611290000000400008"}', "2026-11-29T12:45:00+08:00"),
    R(T1, "unionpay", "UP20261129000400009", "pay", 2,
      up("9.99", "SUCCESS", "202611290000000400009"), "2026-11-29T13:00:00.75+08:00"),
    R(T2, "unionpay", "UP20261129000400010", "pay", 0,
      up("500.00", "WAITING", "202611290000000400010"), "2026-11-29T13:10:00+08:00"),
    R(T2, "unionpay", "UP20261129000400004", "pay", 1,
      up("80.00", "PROCESSING", "202611290000000400004", ',"retry":3'), "2026-11-29T12:09:00+08:00",
      remark="older than both earlier versions: out of order"),
    R(T1, "unionpay", "UP20261129000400011", "close", 2,
      up("70.00", "CLOSED", "202611290000000400011"), "2026-11-29T13:20:00+08:00"),
    R(T1, "unionpay", "UP20261129000400012", "pay", 2,
      up("3000.00", "SUCCESS", "202611290000000400012"), "2026-11-29T13:30:00+08:00"),
    R(T3, "unionpay", "UP20261129000400013", "pay", 2,
      up("18.18", "SUCCESS", "202611290000000400013"), "2026-11-29T05:40:00Z"),
    R(T3, "unionpay", "UP20261129000400014", "pay", 1,
      up("72.00", "PROCESSING", "202611290000000400014"), "2026-11-29T13:50:00+08:00"),
    R(T1, "unionpay", "UP20261129000400015", "pay", 2,
      up("640.00", "SUCCESS", "202611290000000400015"), "2026-11-29T14:00:00+08:00"),
    R(T2, "unionpay", "UP20261129000400016", "notify", 2,
      up("25.00", "SUCCESS", "202611290000000400016"), "2026-11-29T14:10:00+08:00"),
    R(T1, "unionpay", "UP20261129000400017", "pay", 2,
      up("99.00", "SUCCESS", "202611290000000400017"), "2026-11-29T14:20:00+08:00"),
]

FILES = [
    # name, rows, format, columns, options
    ("statements-wechat-2026-11-28.csv.gz", WECHAT, "csv", WECHAT_COLS, dict(eol="\r\n", gz=True)),
    ("statements-alipay-2026-11-28.ndjson", ALI, "ndjson", None, dict(eol="\n")),
    ("statements-mixed-2026-11-29.ndjson.gz", MIXED, "ndjson", None, dict(eol="\n", gz=True)),
    ("statements-unionpay-nochannel-2026-11-29.csv", UNIONPAY, "csv", UP_COLS, dict(eol="\n", bom=True)),
]
STD_ORDER = ["tenant_id", "channel", "out_trade_no", "callback_type", "status", "payload", "received_at"]


# ---- writing ---------------------------------------------------------------------

def csv_field(v):
    v = str(v)
    if any(c in v for c in ',"\r\n'):
        return '"' + v.replace('"', '""') + '"'
    return v


def render_csv(rows, cols, eol):
    lines = [",".join(cols) + eol]
    for r in rows:
        out = []
        for c in cols:
            v = r.v[c]
            out.append('"' + v.replace('"', '""') + '"' if c == "payload" else csv_field(v))
        lines.append(",".join(out) + eol)
    return "".join(lines)


def render_ndjson_line(r, order):
    parts = []
    for c in order:
        if c in r.omit:
            continue
        v = r.v[c]
        if c == "payload":
            parts.append('"payload":' + v)
        elif c in ("tenant_id", "status") and isinstance(v, int):
            parts.append('"%s":%d' % (c, v))
        else:
            parts.append('"%s":%s' % (c, json.dumps(v, ensure_ascii=False)))
    return "{" + ",".join(parts) + "}"


def build(name):
    if name.startswith("statements-wechat"):
        return render_csv(WECHAT, WECHAT_COLS, "\r\n").encode("utf-8")
    if name.startswith("statements-alipay"):
        lines = []
        for i, r in enumerate(ALI):
            lines.append(render_ndjson_line(r, ALI_ORDERS.get(i, STD_ORDER)) + "\n")
            if i + 1 == ALI_BLANK_AFTER:
                lines.append("\n")
        return "".join(lines).encode("utf-8")
    if name.startswith("statements-mixed"):
        a = "".join(render_ndjson_line(r, STD_ORDER) + "\n" for r in MIXED[:MIXED_SPLIT])
        b = "".join(render_ndjson_line(r, STD_ORDER) + "\n" for r in MIXED[MIXED_SPLIT:])
        return (gzip.compress(a.encode("utf-8"), compresslevel=9, mtime=0)
                + gzip.compress(b.encode("utf-8"), compresslevel=9, mtime=0))
    if name.startswith("statements-unionpay"):
        return b"\xef\xbb\xbf" + render_csv(UNIONPAY, UP_COLS, "\n").encode("utf-8")
    raise KeyError(name)


def write_all():
    for name, rows, fmt, cols, opt in FILES:
        data = build(name)
        if opt.get("gz") and not name.startswith("statements-mixed"):
            data = gzip.compress(data, compresslevel=9, mtime=0)
        with open(os.path.join(HERE, name), "wb") as fh:
            fh.write(data)


# ---- verification (independent of the writer: parses the files on disk) -------------

TS_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?"
                   r"(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)$")
AMOUNT_RE = re.compile(r'"(?:amount|refund_amount)":(-?\d+(?:\.\d+)?)')


def parse_instant(s):
    """UTC microseconds, or raise ValueError with the reason."""
    m = TS_RE.match(s)
    if not m:
        if re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?$", s):
            raise ValueError("received_at has no UTC offset")
        raise ValueError("received_at unparsable")
    y, mo, d, hh, mi, ss, frac, z, sign, oh, om = m.groups()
    try:
        dt = datetime.datetime(int(y), int(mo), int(d), int(hh), int(mi), int(ss))
    except ValueError:
        raise ValueError("received_at %s-%s-%s is not a date" % (y, mo, d))
    off = 0 if z else (1 if sign == "+" else -1) * (int(oh) * 3600 + int(om or 0) * 60)
    secs = int((dt - datetime.datetime(1970, 1, 1)).total_seconds()) - off
    return secs * 1000000 + int((frac or "0").ljust(6, "0"))


def check_row(rec, payload_text, set_cols):
    """rec: column -> value as read.  Returns the normalised row or raises ValueError(reason)."""
    r = dict(set_cols)
    r.update(rec)
    for c in ("tenant_id", "channel", "out_trade_no", "callback_type", "payload", "received_at"):
        if r.get(c) is None:
            raise ValueError("missing " + c)
    key = []
    for c in ("channel", "out_trade_no", "callback_type"):
        if not isinstance(r[c], str) or not r[c].strip():
            raise ValueError("blank " + c)
        key.append(r[c].strip())
    t = r["tenant_id"]
    if isinstance(t, str):
        if not re.fullmatch(r"-?\d+", t.strip()):
            raise ValueError("tenant_id %s is not an integer" % t)
        t = int(t)
    if not isinstance(t, int) or not -2 ** 63 <= t < 2 ** 63:
        raise ValueError("tenant_id out of the 64-bit range")
    st = r.get("status", 0)
    if isinstance(st, str):
        if not re.fullmatch(r"-?\d+", st.strip()):
            raise ValueError("status not an integer")
        st = int(st)
    if not -32768 <= st <= 32767:
        raise ValueError("status out of range")
    try:
        pv = json.loads(payload_text, parse_float=decimal.Decimal)
    except ValueError:
        raise ValueError("payload not JSON")
    if pv is None:
        raise ValueError("payload is JSON null")
    for amt in AMOUNT_RE.findall(payload_text):
        if not re.fullmatch(r"-?\d+\.\d\d", amt):
            raise ValueError("amount %s not written with two decimals" % amt)
    ts = parse_instant(r["received_at"].strip())
    return (t, key[0], key[1], key[2]), st, ts, pv, payload_text


def read_file(name, fmt, set_cols):
    """[(line where the record starts, row or None, reason)]"""
    raw = open(os.path.join(HERE, name), "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)          # reads every member
    text = raw.decode("utf-8")
    out = []
    if fmt == "csv":
        if text.startswith("\ufeff"):
            text = text[1:]
        rd = csv.reader(io.StringIO(text, newline=""))
        header = next(rd)
        start = rd.line_num + 1
        for rec in rd:
            d = dict(zip(header, rec))
            assert len(rec) == len(header), (name, rd.line_num)
            try:
                out.append((start, check_row(d, d["payload"], set_cols), None))
            except ValueError as e:
                out.append((start, None, str(e)))
            start = rd.line_num + 1
    else:
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            d = json.loads(line, parse_float=decimal.Decimal)
            ptext = None
            at = line.find('"payload":')
            if at >= 0:                      # the payload's own text, as written
                start = at + len('"payload":')
                _v, end = json.JSONDecoder().raw_decode(line, start)
                ptext = line[start:end]
            if isinstance(d.get("tenant_id"), decimal.Decimal) or isinstance(d.get("status"), decimal.Decimal):
                raise AssertionError("non-integer number")
            try:
                out.append((n, check_row(d, ptext, set_cols), None))
            except ValueError as e:
                out.append((n, None, str(e)))
    return out


def figures(records):
    good = [r for _, r, _ in records if r]
    keys = {}
    for k, st, ts, pv, ptext in good:
        if k not in keys or ts >= keys[k][1]:
            keys[k] = (st, ts, pv, ptext)
    return dict(rows_read=len(records), rows_rejected=len(records) - len(good),
                rows_deduplicated=len(good) - len(keys)), keys


def merge(table, winners, finals=(2,)):
    """Apply one file's deduplicated rows to `table` the way the spec's merge does."""
    c = dict(inserted=0, updated=0, unchanged=0, stale=0)
    for k, (st, ts, pv, ptext) in winners.items():
        cur = table.get(k)
        if cur is None:
            table[k] = (st, ts, pv, ptext)
            c["inserted"] += 1
        elif cur[1] > ts:
            c["stale"] += 1
        elif cur[:3] == (st, ts, pv):
            c["unchanged"] += 1
        else:
            table[k] = (cur[0] if cur[0] in finals else st, ts, pv, ptext)
            c["updated"] += 1
    return c


def verify(quiet=False):
    ok = True
    table = {}
    for name, rows, fmt, cols, opt in FILES:
        set_cols = {"channel": "unionpay"} if "nochannel" in name else {}
        recs = read_file(name, fmt, set_cols)
        if len(recs) != len(rows):
            print("%s: %d records on disk, %d declared" % (name, len(recs), len(rows)))
            ok = False
        for (line, row, why), decl in zip(recs, rows):
            if (why or None) != decl.bad:
                print("%s line %d: declared %r, found %r" % (name, line, decl.bad, why))
                ok = False
        fig, winners = figures(recs)
        c = merge(table, winners)
        raw = open(os.path.join(HERE, name), "rb").read()
        members = raw.count(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")
        if not quiet:
            print("%s (%d bytes%s)" % (name, len(raw), ", %d gzip members" % members if members else ""))
            print("  validate, one chunk: rows_read=%(rows_read)d rows_rejected=%(rows_rejected)d "
                  "rows_deduplicated=%(rows_deduplicated)d" % fig)
            print("  import after the files above: inserted=%(inserted)d updated=%(updated)d "
                  "unchanged=%(unchanged)d stale=%(stale)d" % c)
            for line, row, why in recs:
                if why:
                    print("  rejected: line %d: %s" % (line, why))
    if not quiet:
        print("final table: %d active rows" % len(table))
    return ok, table


def write_final_state(table, path):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["tenant_id", "channel", "out_trade_no", "callback_type", "status",
                    "received_at_utc", "payload"])
        for k in sorted(table):
            st, ts, pv, ptext = table[k]
            utc = datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=ts)
            w.writerow([k[0], k[1], k[2], k[3], st, utc.strftime("%Y-%m-%d %H:%M:%S.%f+00"), ptext])


def main():
    check_only = "--check" in sys.argv[1:]
    if not check_only:
        write_all()
    ok, table = verify()
    if not check_only:
        write_final_state(table, os.path.join(HERE, "expected-final-state.txt"))
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
