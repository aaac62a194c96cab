#!/usr/bin/env python3
"""Generated multi-day scenarios run through `idemload reconcile` and
through tests/expected_recon.py's Register (the model worked out from
SPEC.md), run by run: the exit status, every discrepancy line, each day's
figures (both sides' rows, amounts per currency and per kind, rows
without an amount, matched, unverified, pending, each category's count and
amount) and the register's counts (carried over, appeared, resolved,
escalated, outside the period) must agree.

usage: recon_differential.py --db URI --seed N --scenarios N [--keep DIR]

Each scenario is one tenant of one database (pairs, and so the register's
items and carried-over lists, are per tenant and channel), with a few days
of table rows and statements: matched keys, amounts, currencies and
statuses that differ, keys missing on either side, keys listed a day late
or early, keys listed twice with different facts, dressed amounts ("¥",
"CNY 1,234.50", another currency's code), minor units with and without a
currency (through --facts), refunds beside payments.  Its runs reconcile
the days in a random order, some again with a corrected statement, some
two days with --period naming one, some dry runs, with a grace that has
long passed or a grace of a thousand years (never the wall clock's day:
the days are of January 2020).  Exits 1 on the first scenario that
disagrees, printing both sides of each difference.
"""
import argparse
import csv
import datetime as dt
import json
import os
import random
import subprocess
import sys
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected_recon as model  # noqa: E402

HEADER = ["tenant_id", "channel", "out_trade_no", "callback_type", "status", "payload",
          "received_at"]
FACTS = {"channels": {"stripe": {"amount": {"path": "amount", "unit": "minor"},
                                 "currency": {"path": "currency"}}}}
BASE = dt.date(2020, 1, 10)
LONG_GRACE = "365000d"


def minor_of(v, ccy):
    return str(int(v.scaleb(model.exponent(ccy))))


def amount_text(rng, v, ccy, channel, for_table):
    """The amount as a payload holds it: stripe's in minor units, others
    major, sometimes dressed."""
    if channel == "stripe" and for_table:
        return minor_of(v, ccy)
    e = model.exponent(ccy)
    plain = f"{v:.{e}f}"
    if for_table:
        return plain
    r = rng.random()
    if r < 0.1 and ccy == "CNY":
        return "¥" + plain
    if r < 0.2:
        whole, _, frac = plain.partition(".")
        grouped = f"{int(whole):,}" + ("." + frac if frac else "")
        return f"{ccy} {grouped}"
    return plain


def tenant_data(rng, tenant, days):
    """One tenant's table rows and statement rows per day."""
    channel = rng.choice(["wechat", "wechat", "stripe"])
    table, stmt = [], {d: [] for d in days}
    n = 0

    def t_at(d, h, m=0):
        return f"{d.isoformat()}T{h:02d}:{m:02d}:00Z"

    for d in days:
        for _ in range(rng.randint(3, 7)):
            n += 1
            otn = f"K{tenant}x{n}"
            kind = "pay" if rng.random() < 0.8 else "refund:r1"
            ccy = rng.choice(["CNY", "CNY", "CNY", "JPY", "KWD", "USD"])
            e = model.exponent(ccy)
            v = Decimal(rng.randint(1, 500000)).scaleb(-e)
            status = rng.choice([1, 1, 2])
            h = rng.randint(0, 22)
            what = rng.random()
            t_pay = {"amount": amount_text(rng, v, ccy, channel, True), "currency": ccy}
            s_pay = {"amount": amount_text(rng, v, ccy, channel, False), "currency": ccy}
            t_status = s_status = status
            s_day, in_table, in_stmt, twice = d, True, True, False
            if what < 0.08:
                in_table = False                        # missing_in_table
            elif what < 0.18:
                in_stmt = False                         # missing_in_statement / pending
            elif what < 0.26:
                w = v + Decimal(1).scaleb(-e)
                s_pay["amount"] = amount_text(rng, w, ccy, channel, False)
            elif what < 0.30:
                s_pay["currency"] = "EUR" if ccy != "EUR" else "USD"
                if channel != "stripe":
                    s_pay["amount"] = f"{v:.{e}f}"
            elif what < 0.35:
                s_status = 2 if status == 1 else 1
            elif what < 0.42:
                s_day = d + dt.timedelta(days=rng.choice([1, -1]))   # listed late / early
            elif what < 0.46:
                twice = True                            # duplicate_in_statement
            elif what < 0.50 and channel != "stripe":
                s_pay["amount"] = f"XYZ {v:.{e}f}"      # another code: no amount
            elif what < 0.54 and channel == "stripe":
                del t_pay["currency"]                   # minor units, no currency
            elif what < 0.57:
                del s_pay["amount"]                     # no amount at all
            if in_table:
                table.append([tenant, channel, otn, kind, t_status,
                              json.dumps(t_pay, ensure_ascii=False), t_at(d, h)])
            if in_stmt:
                row = [tenant, channel, otn, kind, s_status,
                       json.dumps(s_pay, ensure_ascii=False), t_at(s_day, h, 30)]
                stmt.setdefault(s_day, []).append(row)
                if twice:
                    other = dict(s_pay, amount=amount_text(rng, v + 1, ccy, channel, False))
                    stmt[s_day].append([tenant, channel, otn, kind, s_status,
                                        json.dumps(other, ensure_ascii=False), t_at(s_day, h, 10)])
    return table, {d: rows for d, rows in stmt.items() if rows}


def scenario(rng, first_tenant, n_tenants):
    """Several tenants' table rows and statements over the same few days,
    and the runs: each reconciles one day (in a random order) for every
    tenant at once, some again with a corrected statement (each tenant's
    with one row dropped), some two days with --period naming the first,
    some two days apart (the day between has no statement)."""
    days = [BASE + dt.timedelta(days=i) for i in range(rng.randint(2, 4))]
    table, stmt = [], {}
    for t in range(first_tenant, first_tenant + n_tenants):
        t_rows, s_rows = tenant_data(rng, t, days)
        table += t_rows
        stmt[t] = s_rows
    runs = []
    order = list(days)
    rng.shuffle(order)
    one = dt.timedelta(days=1)
    for d in order:
        runs.append({"days": [d], "period": None})
        r = rng.random()
        if r < 0.25:
            runs.append({"days": [d], "drop": True, "period": None})
        elif r < 0.4 and d + one in days:
            runs.append({"days": [d, d + one], "period": d})
        elif r < 0.5 and d + 2 * one in days:
            runs.append({"days": [d, d + 2 * one], "period": None})
    for r in runs:
        r["grace"] = rng.choice([None, None, LONG_GRACE])
        r["dry_run"] = rng.random() < 0.12
        # the row each tenant's corrected statement drops (an index taken
        # modulo its rows)
        r["drop"] = rng.randrange(1 << 30) if r.get("drop") else None
    return table, stmt, runs


def write_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fp:
        w = csv.writer(fp)
        w.writerow(HEADER)
        w.writerows(rows)


def grace_seconds(g):
    if g is None:
        return 2 * 86400
    return int(g[:-1]) * 86400


def norm_side(s):
    if s is None:
        return None
    return (s.get("amount"), s.get("currency"), s.get("status"))


def got_lines(path):
    out = []
    with open(path, encoding="utf-8") as fp:
        for text in fp:
            l = json.loads(text)
            out.append((l["category"], l["tenant_id"], l["channel"], l["out_trade_no"],
                        l["callback_type"], l["day"], norm_side(l["statement"]),
                        norm_side(l["table"]), l["difference"]))
    return sorted(out, key=repr)


def want_lines(res):
    return sorted(((l["category"], l["tenant_id"], l["channel"], l["out_trade_no"],
                    l["callback_type"], l["day"], norm_side(l["statement"]),
                    norm_side(l["table"]), l["difference"]) for l in res["lines"]), key=repr)


def money_map(sums):
    return {c: model.render(v, c or None) for c, v in sums.items()}


def cat_amount(entries):
    """A category's money: the sum of its differences when they are in one
    currency (None when it has none), else None (never added across)."""
    groups = {}
    for ccy, diff in entries:
        g = groups.setdefault(ccy, [])
        if diff is not None:
            g.append(diff)
    if len(groups) != 1:
        return None
    (ccy, diffs), = groups.items()
    return model.render(sum(diffs), ccy) if diffs else None


def got_days(report):
    out = {}
    for d in report["reconciliation"]["days"]:
        cats = {c: (e["count"], e["amount"]) for c, e in d["categories"].items() if e["count"]}
        out[f'{d["tenant_id"]}|{d["channel"]}|{d["day"]}'] = {
            "statement": d["statement"]["rows"], "table": d["table"]["rows"],
            "s_amounts": d["statement"]["amounts"], "t_amounts": d["table"]["amounts"],
            "s_without": d["statement"]["without_amount"],
            "t_without": d["table"]["without_amount"],
            "s_kinds": {k: (v["rows"], v["amounts"]) for k, v in d["statement"]["kinds"].items()},
            "t_kinds": {k: (v["rows"], v["amounts"]) for k, v in d["table"]["kinds"].items()},
            "matched": d["matched"], "unverified": d["unverified"], "pending": d["pending"],
            "categories": cats}
    return out


def want_days(res):
    out = {}
    for k, d in res["days"].items():
        cats = {c: (n, cat_amount(d["cat_diffs"][c])) for c, n in d["categories"].items()}
        out[k] = {"statement": d["statement"], "table": d["table"],
                  "s_amounts": money_map(d["s_amounts"]), "t_amounts": money_map(d["t_amounts"]),
                  "s_without": d["s_without"], "t_without": d["t_without"],
                  "s_kinds": {kk: (v["rows"], money_map(v["amounts"]))
                              for kk, v in d["s_kinds"].items()},
                  "t_kinds": {kk: (v["rows"], money_map(v["amounts"]))
                              for kk, v in d["t_kinds"].items()},
                  "matched": d["matched"], "unverified": d["unverified"],
                  "pending": d["pending"], "categories": cats}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scenarios", type=int, default=25)
    ap.add_argument("--tenants", type=int, default=8, help="tenants per scenario")
    ap.add_argument("--idemload", default=os.environ.get("IDEMLOAD", "idemload"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with open("facts.json", "w") as fp:
        json.dump(FACTS, fp)
    scen = [scenario(rng, 1 + i * args.tenants, args.tenants) for i in range(args.scenarios)]
    write_csv("table.csv", [row for table, _, _ in scen for row in table])
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", args.db, "-c",
                    "\\copy payment_callback (" + ", ".join(HEADER) + ") FROM 'table.csv' "
                    "WITH (FORMAT csv, HEADER true)"], check=True)
    z = model.zone_of("UTC")
    n_runs = n_lines = n_days = 0
    for sc, (table, stmt, runs) in enumerate(scen, start=1):
        write_csv(f"t{sc}.csv", table)
        trows = model.read_table(f"t{sc}.csv", FACTS, z)
        reg = model.Register()
        for i, r in enumerate(runs):
            rows = []
            for t in sorted(stmt):
                mine = [row for d in r["days"] for row in stmt[t].get(d, [])]
                if r["drop"] is not None and mine:
                    k = r["drop"] % len(mine)
                    mine = mine[:k] + mine[k + 1:]
                rows += mine
            path = f"s{sc}_{i}.csv"
            write_csv(path, rows)
            cmd = [args.idemload, "reconcile", "-q", "-d", args.db, "--facts", "facts.json",
                   "--report", "r.json", "--discrepancies", "d.ndjson"]
            if r["grace"]:
                cmd += ["--grace", r["grace"]]
            if r["period"]:
                cmd += ["--period", r["period"].isoformat()]
            if r["dry_run"]:
                cmd += ["--dry-run"]
            p = subprocess.run(cmd + [path], capture_output=True, text=True)
            want = reg.run([path], trows, FACTS, "UTC",
                           [r["period"].isoformat()] * 2 if r["period"] else None,
                           grace_seconds(r["grace"]), None, r["dry_run"])
            n_runs += 1
            problems = []
            want_rc = 5 if want["lines"] else 0
            if p.returncode != want_rc:
                problems.append(f"exit {p.returncode}, the model {want_rc}: {p.stderr[-2000:]}")
            else:
                rep = json.load(open("r.json"))
                rec = rep["reconciliation"]
                gl, wl = got_lines("d.ndjson"), want_lines(want)
                n_lines += len(gl)
                for x in gl:
                    if x not in wl:
                        problems.append(f"idemload's line, not the model's: {x}")
                for x in wl:
                    if x not in gl:
                        problems.append(f"the model's line, not idemload's: {x}")
                gd, wd = got_days(rep), want_days(want)
                n_days += len(gd)
                for k in sorted(set(gd) | set(wd)):
                    if gd.get(k) != wd.get(k):
                        problems.append(f"day {k}: idemload {gd.get(k)}\n    the model {wd.get(k)}")
                for name in ("carried_over", "appeared", "resolved", "escalated",
                             "outside_period"):
                    if rec.get(name, 0) != want[name]:
                        problems.append(f"{name}: idemload {rec.get(name)}, the model {want[name]}")
            if problems:
                print(f"scenario {sc} (seed {args.seed}), run {i + 1} of {len(runs)}: "
                      f"{' '.join(cmd[2:])} {path}")
                for x in problems[:20]:
                    print("  " + x)
                print(f"  the runs: {runs}")
                return 1
    print(f"{args.scenarios} scenarios of {args.tenants} tenants, {n_runs} runs, {n_days} days "
          f"and {n_lines} discrepancy lines compared: idemload and the model agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
