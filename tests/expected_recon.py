#!/usr/bin/env python3
"""What SPEC.md's "Reconcile" gives for a statement against a table, worked
out here without idemload: an independent expectation for the database
tests of `idemload reconcile`.

usage: expected_recon.py --table TABLE.csv [--facts FACTS.json] [--zone Z]
                         [--period FROM..TO] [--grace-seconds N] [--now ISO]
                         STATEMENT.csv...
       expected_recon.py --self-test

TABLE.csv: the table's active rows (tenant_id, channel, out_trade_no,
callback_type, status, payload, received_at), as psql's \\copy writes them.
STATEMENT.csv: canonical statement files.  Prints one JSON object:
{"period": [from, to], "lines": [...], "days": {"T|C|D": {...}},
"verdict": "balanced|discrepancies"}; each line is
{category, tenant_id, channel, out_trade_no, callback_type, day,
statement: {amount, currency, status, time} | null, table: ... | null, difference};
each day also has "absolute" (per category and currency, the absolute
differences summed) and "differences" (the day's money, each key once: net
and absolute per currency, and how many keys differ in money).

The rules, as SPEC.md states them:
- a statement key listed several times keeps the version with the latest
  received_at (the later row on a tie), with a final status (2) that any of
  its rows holds, as import's deduplication does; listed by different records
  (different facts: amount, currency, status, fee; or different payloads,
  which are the records of a canonical file) it is also
  duplicate_in_statement; the statement's rows of a day count every row of
  its keys (the files' rows), not one per key;
- the day of a row is the date of its time in the zone; the period is
  --period, else the statement's days;
- a statement key of the period is compared with the table's row of its key
  (whatever that row's time); a fact only where both sides declare it;
  a declared fact a row lacks makes it unverified (no line);
- a table row of the statement's (tenant, channel) pairs whose time (its
  time fact, else received_at) falls in the period and whose key the
  statement lacks is missing_in_statement, or pending until the grace after
  the end of its day; on a day with no statement row of its pair, all such
  rows are one no_statement line;
- difference: statement minus table in the major unit (currencies equal);
- what finance reads: a time in the zone with its offset, a fraction of a
  second only where it has one; a category's absolute differences beside
  the net; a day's money with each key's difference once; a side's amounts
  net (refunds subtracted, revocations apart), each kind's its own.
"""
import csv
import datetime as dt
import json
import re
import sys
from decimal import Decimal
from zoneinfo import ZoneInfo

csv.field_size_limit(1 << 30)

# ISO 4217 minor units that are not 2 (written out independently).
EXPONENT = {"JPY": 0, "KRW": 0, "VND": 0, "CLP": 0, "ISK": 0, "XAF": 0, "XOF": 0,
            "KWD": 3, "BHD": 3, "JOD": 3, "OMR": 3, "TND": 3, "IQD": 3, "LYD": 3}


def exponent(ccy):
    return EXPONENT.get(ccy or "", 2)


def money(text, minor=False, magnitude=False, ccy=None):
    """'¥1,234.50' -> Decimal('1234.50'); minor units scaled; None if none."""
    if text is None:
        return None
    # Only the dress comes off: white space and quotes around it, a currency
    # sign, the row's own ISO code before or after, commas between
    # thousands; another currency's code is text around the number (README:
    # unreadable), and so is any code in a row that states no currency.
    kept = "".join(ch for ch in str(text).strip(" \t\r\n\"'`") if ch not in "¥￥$€£₩₹元")
    for m in (re.match(r"([A-Za-z]{3})(?![A-Za-z])", kept),
              re.search(r"(?<![A-Za-z])([A-Za-z]{3})$", kept)):
        if m and m.group(1).upper() != ccy:
            return None
    kept = re.sub(r"^[A-Za-z]{3}\s*|\s*[A-Za-z]{3}$", "", kept).strip()
    kept = re.sub(r"(?<=[0-9]),(?=[0-9]{3}([,.]|$))", "", kept)
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", kept):
        return None
    v = Decimal(kept)
    if magnitude:
        v = abs(v)
    if minor:
        if not ccy:
            return None     # no currency, no exponent: not guessed
        v = v.scaleb(-exponent(ccy))
    return v


def render(v, ccy):
    if v is None:
        return None
    e = exponent(ccy)
    q = v.quantize(Decimal(1).scaleb(-e))
    if q == v:
        return str(q)
    return format(v.normalize(), "f")


def zone_of(name):
    if name in (None, "", "UTC", "Z"):
        return dt.timezone.utc
    m = re.fullmatch(r"([+-])(\d\d):?(\d\d)", name)
    if m:
        off = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        return dt.timezone(off if m.group(1) == "+" else -off)
    return ZoneInfo(name)


def instant(text):
    t = text.strip().replace(" ", "T")
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    v = dt.datetime.fromisoformat(t)
    return v if v.tzinfo else v.replace(tzinfo=dt.timezone.utc)


def path_get(obj, path):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    if obj is None or isinstance(obj, (dict, list)):
        return None if obj is None else json.dumps(obj)
    if isinstance(obj, bool):
        return "true" if obj else "false"
    return str(obj)


DEFAULT = {"amount": {"path": "amount"}, "currency": {"path": "currency"}}


def table_facts(facts, channel, kind):
    level = dict(DEFAULT)
    level.update({k: v for k, v in facts.get("default", {}).items()})
    ch = facts.get("channels", {}).get(channel)
    if ch:
        level.update({k: v for k, v in ch.items() if k != "kinds"})
        kd = ch.get("kinds", {}).get(kind)
        if kd:
            level.update(kd)
    return level


def fact_values(payload, level, with_time):
    """(declared, values) of amount, currency, fee (and time)."""
    def raw(name):
        loc = level.get(name)
        if not loc:
            return None
        if "value" in loc:
            return loc["value"]
        return path_get(payload, loc["path"])
    ccy = raw("currency")
    ccy = ccy.strip().upper() if ccy and ccy.strip() else None
    out = {"currency": ccy}
    for name in ("amount", "fee"):
        loc = level.get(name) or {}
        out[name] = money(raw(name), loc.get("unit") == "minor", loc.get("magnitude", False), ccy)
    out["time"] = None
    if with_time and level.get("time"):
        t = raw("time")
        try:
            out["time"] = instant(t) if t else None
        except ValueError:
            out["time"] = None
    declared = {n: bool(level.get(n)) for n in ("amount", "currency", "fee")}
    return declared, out


def record_of(payload_text):
    """A canonical row's record: its payload as jsonb holds it (members in
    one order, numbers as written: 4 and 4.00 are two payloads)."""
    return json.dumps(json.loads(payload_text, parse_float=Decimal), sort_keys=True,
                      default=str)


def read_rows(path, file_no):
    with open(path, newline="", encoding="utf-8") as fp:
        for line_no, r in enumerate(csv.DictReader(fp), start=2):
            yield {"file_no": file_no, "line": line_no, "tenant_id": int(r["tenant_id"]),
                   "channel": r["channel"], "out_trade_no": r["out_trade_no"],
                   "callback_type": r["callback_type"], "status": int(r["status"]),
                   "payload": json.loads(r["payload"]), "record": record_of(r["payload"]),
                   "received_at": instant(r["received_at"])}


FINAL = {2}      # reconcile's final statuses (import's default, --final-status)


def key(r):
    return (r["tenant_id"], r["channel"], r["out_trade_no"], r["callback_type"])


def read_table(table_file, facts, z):
    table = {}
    for r in read_rows(table_file, 0):
        level = table_facts(facts, r["channel"], r["callback_type"].split(":")[0])
        r["declared"], r["f"] = fact_values(r["payload"], level, True)
        r["time"] = r["f"]["time"] or r["received_at"]
        r["day"] = r["time"].astimezone(z).date()
        table[key(r)] = r
    return table


def add_money(sums, ccy, amount):
    """Adds amount to sums[ccy] (currency '' when none), kept as Decimal."""
    if amount is not None:
        sums[ccy or ""] = sums.get(ccy or "", Decimal(0)) + amount


def reconcile(statement_files, table_file, facts=None, zone="UTC", period=None,
              grace_s=2 * 86400, now=None, relisted=frozenset(), table=None):
    """One run.  relisted: the (key, day) pairs a statement of another day
    listed, as the register knows them (a table row of that day the
    statement lacks is matched).  table: the table's rows as read_table
    gives them, when the caller read them already."""
    facts = facts or {}
    z = zone_of(zone)
    now = now or dt.datetime.now(dt.timezone.utc)
    stmt = []
    for i, p in enumerate(statement_files, start=1):
        for r in read_rows(p, i):
            _, r["f"] = fact_values(r["payload"], DEFAULT, False)
            r["day"] = r["received_at"].astimezone(z).date()
            r["time"] = r["received_at"]
            stmt.append(r)
    by_key = {}
    for r in stmt:
        by_key.setdefault(key(r), []).append(r)
    reps = {}
    for k, rows in by_key.items():
        kept = max(rows, key=lambda r: (r["received_at"], r["file_no"], r["line"]))
        rep = dict(kept)
        rep["others"] = [r for r in rows if r is not kept]
        # as import's deduplication: a final status (2) some row holds stays
        # (the first in file order), whatever the time of the row kept
        finals = [r["status"] for r in sorted(rows, key=lambda r: (r["file_no"], r["line"]))
                  if r["status"] in FINAL]
        if finals:
            rep["status"] = finals[0]
        sig = {(r["f"]["amount"], r["f"]["currency"], r["status"], r["f"]["fee"]) for r in rows}
        rep["conflicting"] = len(sig) > 1 or len({r["record"] for r in rows}) > 1
        rep["n_rows"] = len(rows)
        reps[k] = rep
    if period:
        lo, hi = (dt.date.fromisoformat(x) for x in period)
    elif reps:
        lo = min(r["day"] for r in reps.values())
        hi = max(r["day"] for r in reps.values())
    else:
        return {"period": None, "lines": [], "days": {}, "verdict": "balanced",
                "pending": [], "compared": [], "keys": set(), "pairs": set(),
                "outside_period": 0}
    inside = {k: r for k, r in reps.items() if lo <= r["day"] <= hi}
    # every pair the statement names, whatever the day of its rows
    pairs = {(k[0], k[1]) for k in reps}
    listed_days = {(k[0], k[1], r["day"]) for k, r in reps.items()}
    if table is None:
        table = read_table(table_file, facts, z)

    lines, days, pending, compared = [], {}, [], []

    def day_of(t, c, d):
        return days.setdefault(f"{t}|{c}|{d}", {
            "statement": 0, "table": 0, "matched": 0, "unverified": 0, "pending": 0,
            "categories": {}, "s_amounts": {}, "t_amounts": {}, "s_without": 0,
            "t_without": 0, "cat_diffs": {}, "s_kinds": {}, "t_kinds": {},
            "absolute": {}, "differences": {"net": {}, "absolute": {}, "keys": 0}})

    def shown_time(t):
        """A time as finance reads it: in the zone, with its offset, a
        fraction of a second only where it has one."""
        if t is None:
            return None
        lt = t.astimezone(z)
        off = lt.utcoffset()
        text = lt.strftime("%Y-%m-%dT%H:%M:%S")
        if lt.microsecond:
            text += ("%.6f" % (lt.microsecond / 1e6))[1:].rstrip("0")
        if not off:
            return text + "Z"
        sign, off = ("-", -off) if off < dt.timedelta(0) else ("+", off)
        return text + "%s%02d:%02d" % (sign, off.seconds // 3600, off.seconds % 3600 // 60)

    def side(r):
        if r is None:
            return None
        return {"amount": render(r["f"]["amount"], r["f"]["currency"]),
                "currency": r["f"]["currency"], "status": r["status"],
                "time": shown_time(r["time"])}

    # Per day, category and currency: the absolute differences summed
    # (beside the net); per day and currency: each key's difference once.
    gross, once = {}, {}

    def day_money(k, d, diff, ccy):
        """A key's difference counted once in its day's money."""
        if diff is None:
            return
        net, ab = once.setdefault(f"{k[0]}|{k[1]}|{d}", ({}, {}))
        c = ccy or ""
        net[c] = net.get(c, Decimal(0)) + diff
        ab[c] = ab.get(c, Decimal(0)) + abs(diff)
        if diff != 0:
            day_of(k[0], k[1], d)["differences"]["keys"] += 1

    def line(cat, k, d, s, t, diff, ccy, per_ccy=None):
        lines.append({"category": cat, "tenant_id": k[0], "channel": k[1],
                      "out_trade_no": k[2], "callback_type": k[3], "day": d.isoformat(),
                      "statement": side(s), "table": side(t), "difference": render(diff, ccy)})
        dd = day_of(k[0], k[1], d)
        dd["categories"][cat] = dd["categories"].get(cat, 0) + 1
        dd["cat_diffs"].setdefault(cat, []).append((ccy, diff))
        g = gross.setdefault(f"{k[0]}|{k[1]}|{d}", {}).setdefault(cat, {})
        for cc, v in (per_ccy or ([(ccy, diff)] if diff is not None and ccy else [])):
            g[cc] = g.get(cc, Decimal(0)) + abs(v)

    def count_side(dd, which, r):
        dd[which] += 1
        amt = r["f"]["amount"]
        if amt is None:
            dd[which[0] + "_without"] += 1
        kind = r["callback_type"].split(":")[0]
        if kind != "revoked":
            add_money(dd[which[0] + "_amounts"], r["f"]["currency"],
                      -amt if kind == "refund" and amt is not None else amt)
        kd = dd[which[0] + "_kinds"].setdefault(r["callback_type"].split(":")[0],
                                                {"rows": 0, "amounts": {}})
        kd["rows"] += 1
        add_money(kd["amounts"], r["f"]["currency"], amt)

    for k, s in inside.items():
        t = table.get(k)
        dd = day_of(k[0], k[1], s["day"])
        # every row of the file counts in the statement's totals (a key's
        # other rows on its day), so that they equal the sums of its rows
        count_side(dd, "statement", s)
        for o in s["others"]:
            count_side(dd, "statement", o)
        sf = s["f"]
        if t is None:
            cats = ["missing_in_table"]
            diff = sf["amount"]
        else:
            count_side(dd, "table", t)
            compared.append((k, s["day"], t["day"]))
            tf, decl = t["f"], t["declared"]
            # a canonical statement declares no fee: fee is never compared
            a_cmp, c_cmp, f_cmp = decl["amount"], decl["currency"], False
            cats = []
            ccy_differs = c_cmp and sf["currency"] and tf["currency"] \
                and sf["currency"] != tf["currency"]
            # amounts in two currencies are not compared: a currency_mismatch alone
            if a_cmp and sf["amount"] is not None and tf["amount"] is not None \
                    and sf["amount"] != tf["amount"] and not ccy_differs:
                cats.append("amount_mismatch")
            if ccy_differs:
                cats.append("currency_mismatch")
            if s["status"] != t["status"]:
                cats.append("status_mismatch")
            same_ccy = sf["currency"] == tf["currency"] or not c_cmp
            diff = (sf["amount"] - tf["amount"]) if same_ccy and sf["amount"] is not None \
                and tf["amount"] is not None else None
            if not cats and not s["conflicting"]:
                missing = (a_cmp and (sf["amount"] is None or tf["amount"] is None)) or \
                          (c_cmp and (sf["currency"] is None or tf["currency"] is None)) or \
                          (f_cmp and (sf["fee"] is None or tf["fee"] is None))
                dd["unverified" if missing else "matched"] += 1
        if s["conflicting"]:
            cats.append("duplicate_in_statement")
        for c in cats:
            line(c, k, s["day"], s, t, diff, sf["currency"] or (t and t["f"]["currency"]))
        if cats:
            day_money(k, s["day"], diff, sf["currency"] or (t and t["f"]["currency"]))

    uncovered = {}
    for k, t in table.items():
        if k in inside or (k[0], k[1]) not in pairs or not lo <= t["day"] <= hi:
            continue
        dd = day_of(k[0], k[1], t["day"])
        count_side(dd, "table", t)
        if (k[0], k[1], t["day"]) not in listed_days:
            uncovered.setdefault((k[0], k[1], t["day"]), []).append(t)
            continue
        # listed by this statement outside the period, or by a statement of
        # another day (the register): not missing from the channel's lists
        if k in reps or (k, t["day"]) in relisted:
            dd["matched"] += 1
            continue
        end = dt.datetime.combine(t["day"] + dt.timedelta(days=1), dt.time(), z)
        if now < end + dt.timedelta(seconds=grace_s):
            dd["pending"] += 1
            pending.append((k, t["day"]))
            continue
        amt = t["f"]["amount"]
        line("missing_in_statement", k, t["day"], None, t, -amt if amt is not None else None,
             t["f"]["currency"])
        day_money(k, t["day"], -amt if amt is not None else None, t["f"]["currency"])
    for (tn, ch, d), rows in uncovered.items():
        amts = [r["f"]["amount"] for r in rows if r["f"]["amount"] is not None]
        ccys = {r["f"]["currency"] for r in rows if r["f"]["currency"]}
        total = -sum(amts) if amts else None
        per = {}
        for r in rows:
            if r["f"]["amount"] is not None:
                per[r["f"]["currency"]] = per.get(r["f"]["currency"], Decimal(0)) - r["f"]["amount"]
        line("no_statement", (tn, ch, None, None), d, None, None,
             total if len(ccys) <= 1 else None, next(iter(ccys)) if len(ccys) == 1 else None,
             list(per.items()))
        for r in rows:
            if r["f"]["amount"] is not None:
                day_money((tn, ch, key(r)), d, -r["f"]["amount"], r["f"]["currency"])
        # its money per currency of its rows (a row without one apart)
        days[f"{tn}|{ch}|{d}"]["cat_diffs"]["no_statement"] = [
            (r["f"]["currency"], -r["f"]["amount"] if r["f"]["amount"] is not None else None)
            for r in rows]
    for dk, cats_ in gross.items():
        days[dk]["absolute"] = {c: {cc: render(v, cc) for cc, v in g.items()}
                                for c, g in cats_.items() if g}
    for dk, (net, ab) in once.items():
        days[dk]["differences"]["net"] = {c: render(v, c) for c, v in net.items()}
        days[dk]["differences"]["absolute"] = {c: render(v, c) for c, v in ab.items()}
    lines.sort(key=lambda l: (l["day"], l["tenant_id"], l["channel"], l["category"],
                              l["out_trade_no"] or "", l["callback_type"] or ""))
    outside = sum(1 for r in stmt if not lo <= r["day"] <= hi)
    return {"period": [lo.isoformat(), hi.isoformat()], "lines": lines, "days": days,
            "verdict": "discrepancies" if lines else "balanced", "pending": pending,
            "compared": compared, "keys": set(reps), "pairs": pairs, "outside_period": outside}


class Register:
    """The register across runs, as SPEC.md's "Across days" states it:
    items keyed by (tenant, channel, out_trade_no, callback_type, day,
    family), where a pending item and a missing_in_statement one are one
    family (a pending row escalates in place)."""

    def __init__(self):
        self.items = {}         # item key -> {"category", "state"}
        self.relisted = set()   # (key, day): a statement of another day listed it

    @staticmethod
    def family(cat):
        return "missing_in_statement" if cat == "pending" else cat

    def run(self, statement_files, table, facts=None, zone="UTC", period=None,
            grace_s=2 * 86400, now=None, dry_run=False):
        """One reconcile run against the register; adds its "carried_over",
        "appeared", "resolved" and "escalated" to the result."""
        z = zone_of(zone)
        now = now or dt.datetime.now(dt.timezone.utc)
        res = reconcile(statement_files, None, facts, zone, period, grace_s, now,
                        frozenset(self.relisted), table)
        if res["period"] is None:
            res.update(carried_over=0, appeared=0, resolved=0, escalated=0)
            return res
        lo, hi = (dt.date.fromisoformat(x) for x in res["period"])
        pairs = res["pairs"]
        now_lines = {}
        for l in res["lines"]:
            k = (l["tenant_id"], l["channel"], l["out_trade_no"], l["callback_type"])
            now_lines[(k, dt.date.fromisoformat(l["day"]), l["category"])] = l["category"]
        for k, d in res["pending"]:
            now_lines[(k, d, "missing_in_statement")] = "pending"

        def past_grace(d):
            end = dt.datetime.combine(d + dt.timedelta(days=1), dt.time(), z)
            return now >= end + dt.timedelta(seconds=grace_s)

        items = {ik: dict(v) for ik, v in self.items.items()}
        appeared = resolved = escalated = 0
        for ik, it in items.items():
            k, d, fam = ik
            if it["state"] == "resolved":
                continue
            if fam == "missing_in_statement" and not lo <= d <= hi and k in res["keys"]:
                it["state"] = "resolved"          # a statement of another day lists it
                it["listed"] = True
                resolved += 1
            elif lo <= d <= hi and (k[0], k[1]) in pairs and ik not in now_lines:
                it["state"] = "resolved"          # not found again: superseded
                resolved += 1
            elif it["state"] == "pending" and d < lo and (k[0], k[1]) in pairs \
                    and past_grace(d):
                it.update(category="missing_in_statement", state="open")
                appeared += 1
                escalated += 1
        for ik, cat in now_lines.items():
            it = items.get(ik)
            state = "pending" if cat == "pending" else "open"
            if it and it["state"] != "resolved":
                if it["state"] == "pending" and state == "open":
                    appeared += 1                 # escalated in place
                it.update(category=cat, state=state)
            else:
                items[ik] = {"category": cat, "state": state}
                if state == "open":
                    appeared += 1
        carried = sum(1 for (k, d, _), it in items.items()
                      if it["state"] == "open" and d < lo and (k[0], k[1]) in pairs)
        res.update(carried_over=carried, appeared=appeared, resolved=resolved,
                   escalated=escalated)
        if dry_run:
            # what a run would carry over: the pending items past their
            # grace as the escalation would make them, less those this
            # statement lists
            res.update(appeared=0, resolved=0, escalated=0)
            res["carried_over"] = sum(
                1 for (k, d, fam), it in self.items.items()
                if d < lo and (k[0], k[1]) in pairs and (
                    it["state"] == "open" or (it["state"] == "pending" and past_grace(d)))
                and not (fam == "missing_in_statement" and k in res["keys"]))
            return res
        self.items = items
        for ik, it in items.items():
            if it.get("listed"):
                self.relisted.add((ik[0], ik[1]))
        for k, s_day, t_day in res["compared"]:
            if s_day != t_day:
                self.relisted.add((k, t_day))
        return res


def public(res):
    """The result as the command prints it: the lines, and each day's
    counts (the money and the run's own sets are for callers in Python)."""
    days = {k: {n: d[n] for n in ("statement", "table", "matched", "unverified", "pending",
                                   "categories", "absolute", "differences")}
            for k, d in res["days"].items()}
    return {"period": res["period"], "lines": res["lines"], "days": days,
            "verdict": res["verdict"]}


def self_test():
    assert money("¥1,234.50") == Decimal("1234.50")
    assert money('"0.59000"') == Decimal("0.59")
    assert money("16890", minor=True, ccy="CNY") == Decimal("168.90")
    assert money("1200", minor=True, ccy="JPY") == Decimal("1200")
    assert money("1234", minor=True, ccy="KWD") == Decimal("1.234")
    assert money("-30.00", magnitude=True) == Decimal("30")
    assert money("abc") is None and money("") is None and money(None) is None
    assert money("CNY 1,234.50", ccy="CNY") == Decimal("1234.50")
    assert money("1234.5 cny", ccy="CNY") == Decimal("1234.5")
    assert money("USD 10.00", ccy="CNY") is None and money("10.00 USD", ccy="CNY") is None
    assert money("CNY 10.00") is None     # a code, and no currency to hold it to
    assert money("951395", minor=True) is None     # minor units, no currency: no exponent
    assert money("1e400") is None and money("1.234,50") is None and money("12 34") is None
    assert money("1,23") is None and money("¥-30.00") == Decimal("-30")
    assert render(Decimal("168.9"), "CNY") == "168.90"
    assert render(Decimal("1200"), "JPY") == "1200"
    assert render(Decimal("0.591"), "CNY") == "0.591"
    assert zone_of("+08:00").utcoffset(None) == dt.timedelta(hours=8)
    late = instant("2026-11-28T23:59:58Z").astimezone(zone_of("UTC")).date()
    assert late == dt.date(2026, 11, 28)
    lvl = table_facts({"channels": {"w": {"amount": {"path": "a.total", "unit": "minor"},
                                          "kinds": {"refund": {"amount": {"path": "a.r"}}}}}},
                      "w", "refund")
    assert lvl["amount"] == {"path": "a.r"} and lvl["currency"] == {"path": "currency"}
    print("expected_recon self-test ok")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    args, files = {}, []
    it = iter(argv[1:])
    for a in it:
        if a.startswith("--"):
            args[a[2:]] = next(it)
        else:
            files.append(a)
    facts = json.load(open(args["facts"])) if "facts" in args else {}
    period = args["period"].split("..") if "period" in args else None
    if period and len(period) == 1:
        period = period * 2
    now = instant(args["now"]) if "now" in args else None
    res = reconcile(files, args["table"], facts, args.get("zone", "UTC"), period,
                    int(args.get("grace-seconds", 2 * 86400)), now)
    json.dump(public(res), sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
