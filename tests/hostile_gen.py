#!/usr/bin/env python3
"""Hostile text for the property tests of tests/cli/test_hostile.sh and
tests/db/test_hostile.sh (SPEC.md "Hostile input"): random bytes, names and
profile values, each case mixing random printable text with markup that
would make an element, control characters that would drive a terminal,
bidirectional controls and invalid UTF-8.

  hostile_gen.py case SEED DIR   writes DIR/: a statement file whose name
      holds hostile bytes (DIR/name.txt has the name, as Python's
      surrogateescape str), rows whose channel, out_trade_no, callback_type and
      payload are hostile, a custom profile whose name is hostile
      (DIR/profile.json) with a bill for it, and DIR/secret.txt (a password)
  hostile_gen.py check-text FILE SECRET   exit 1 (saying why) when FILE holds a
      control character other than a newline, an ESC sequence or the secret
  hostile_gen.py check-page FILE SECRET   exit 1 when the page's bytes hold a
      control character other than tab and newline, a bidirectional control,
      an element or attribute not of idemload's own, or the secret
"""
import csv
import io
import json
import os
import random
import re
import sys

# Where hostile markup points: a listener of the test's own (HOSTILE_URL)
# that counts every request, so "nothing is fetched" is observed.
URL = os.environ.get('HOSTILE_URL', 'http://127.0.0.1:9')
MARKUP = ['<meta http-equiv=refresh content="0;url=%s/refresh">' % URL,
          '<base href="%s/base/">' % URL, '<link rel=stylesheet href=%s/link.css>' % URL,
          '<a href="javascript:alert(1)">x</a>', '<form action=%s/form><button>go' % URL,
          '<style>#rejects{display:none}</style>',
          '<script>fetch("%s/script");document.title="pwned"</script>' % URL,
          '<img src=%s/img onerror=alert(1)>' % URL, '"><svg onload=alert(1)>',
          "' style='background:url(%s/style)" % URL, '<iframe src=%s/iframe>' % URL,
          '&lt;b&gt;', '</td></tr></table><h1>forged', '<style>@import "%s/import";</style>' % URL]
CONTROLS = ['\x1b[2J', '\x1b]0;TITLE\x07', '\r', '\n', '\x07', '\x08', '\x7f', '\x00',
            '\u0085', '\u009b31m', '\x1b[31m', '\u202e', '\u202a', '\u202b', '\u202c',
            '\u202d', '\u2066', '\u2067', '\u2068', '\u2069', '\t']
BIDI = re.compile('[\u202a-\u202e\u2066-\u2069]')


def hostile(rng, allow_nul=False, allow_newline=True):
    parts = []
    for _ in range(rng.randint(1, 5)):
        k = rng.random()
        if k < 0.3:
            parts.append(rng.choice(MARKUP))
        elif k < 0.6:
            parts.append(rng.choice(CONTROLS))
        elif k < 0.8:
            parts.append(''.join(chr(rng.randint(0x20, 0x7e)) for _ in range(rng.randint(1, 8))))
        else:
            parts.append(''.join(chr(rng.randint(0xa0, 0x2fff)) for _ in range(rng.randint(1, 4))))
    s = ''.join(parts)
    if not allow_nul:
        s = s.replace('\x00', '')
    if not allow_newline:
        s = s.replace('\n', '').replace('\r', '')
    return s or 'x'


def file_name_bytes(rng):
    """A file name: any bytes but '/' and NUL, GBK or broken UTF-8 included."""
    raw = hostile(rng, allow_newline=True).encode('utf-8', 'surrogatepass')
    raw += bytes(rng.choice([0xb6, 0xd4, 0xc7, 0xff, 0x80, 0x1b, 0x0a, 0x07]) for _ in range(3))
    raw = raw.replace(b'/', b'_').replace(b'\x00', b'_')[:180]
    return b'bill-' + raw + b'.csv'


def write_case(seed, d):
    rng = random.Random(int(seed))
    os.makedirs(d, exist_ok=True)
    rows = io.StringIO()
    w = csv.writer(rows, lineterminator='\n')
    w.writerow(['tenant_id', 'channel', 'out_trade_no', 'callback_type', 'status', 'payload',
                'received_at'])
    for i in range(rng.randint(2, 6)):
        w.writerow([str(rng.randint(1, 3)), hostile(rng), hostile(rng), hostile(rng), '0',
                    json.dumps({'note': hostile(rng)}), '2026-01-0%dT10:00:00Z' % rng.randint(1, 9)])
    # a bad row: its reason quotes data
    w.writerow(['x' + hostile(rng), hostile(rng), 'K', 'pay', '0', '{}', hostile(rng)])
    name = file_name_bytes(rng)
    with open(os.path.join(os.fsencode(d), name), 'wb') as f:
        f.write(rows.getvalue().encode('utf-8', 'surrogatepass'))
    with open(os.path.join(d, 'name.bin'), 'wb') as f:
        f.write(name)
    profile = {
        'name': hostile(rng, allow_newline=False),
        'description': hostile(rng),
        'encoding': 'utf-8', 'timezone': '+00:00', 'delimiter': ',',
        'columns': {
            # a template: braces doubled to stand for themselves
            'channel': {'value': hostile(rng, allow_newline=False).replace('{', '{{')
                        .replace('}', '}}')},
            'out_trade_no': {'from': ['order']},
            'callback_type': {'value': 'pay'},
            'status': {'value': '0'},
            'received_at': {'from': ['time']},
            'tenant_id': {'value': '7'}}}
    with open(os.path.join(d, 'profile.json'), 'w', encoding='utf-8', errors='surrogatepass') as f:
        json.dump(profile, f, ensure_ascii=False)
    bill = io.StringIO()
    w = csv.writer(bill, lineterminator='\n')
    w.writerow(['order', 'time'])
    for i in range(3):
        w.writerow([hostile(rng, allow_newline=False), '2026-01-01 10:00:0%d' % i])
    w.writerow([hostile(rng), 'not a time ' + hostile(rng)])
    with open(os.path.join(d, 'bill.csv'), 'w', encoding='utf-8', errors='surrogatepass') as f:
        f.write(bill.getvalue())
    # a password libpq cannot parse ('%' without two hex digits, %00)
    pw = 'S3cr%t-' + ''.join(rng.choice('abcdefXYZ!*()~') for _ in range(8)) + \
        rng.choice(['%00', '%zz', '%4', '!x'])
    with open(os.path.join(d, 'secret.txt'), 'w') as f:
        f.write(pw)


def bad_text(data, secret):
    if secret and secret.encode() in data:
        return 'the secret is in it'
    for i, b in enumerate(data):
        if (b < 0x20 and b != 0x0a) or b == 0x7f:
            return 'control byte 0x%02x at %d: %r' % (b, i, data[max(0, i - 40):i + 20])
    text = data.decode('utf-8', 'replace')
    for i, c in enumerate(text):
        if 0x80 <= ord(c) <= 0x9f or BIDI.match(c):
            return 'control U+%04X at %d: %r' % (ord(c), i, text[max(0, i - 40):i + 20])
    return None


OWN_TAGS = {'html', 'head', 'meta', 'title', 'style', 'body', 'header', 'h1', 'h2', 'h3', 'dl',
            'dt', 'dd', 'span', 'main', 'div', 'section', 'table', 'thead', 'tbody', 'tr', 'th',
            'td', 'code', 'pre', 'p', 'svg', 'rect', 'text', 'title', 'g', 'line', 'ul', 'li',
            'details', 'summary', 'b', 'small', 'br'}
OWN_ATTRS = {'lang', 'charset', 'name', 'content', 'http-equiv', 'class', 'id', 'data-figure',
             'width', 'height', 'viewbox', 'role', 'aria-label', 'x', 'y', 'fill', 'font-size',
             'text-anchor', 'font-weight', 'x1', 'x2', 'y1', 'y2', 'stroke', 'stroke-width', 'colspan',
             'dominant-baseline', 'title', 'open'}


def bad_page(data, secret):
    from html.parser import HTMLParser
    if secret and secret.encode() in data:
        return 'the secret is in it'
    for i, b in enumerate(data):
        if (b < 0x20 and b not in (0x09, 0x0a)) or b == 0x7f:
            return 'control byte 0x%02x at %d' % (b, i)
    text = data.decode('utf-8')
    m = BIDI.search(text) or re.search('[\u0080-\u009f]', text)
    if m:
        return 'control U+%04X applied at %d' % (ord(m.group()), m.start())
    problems = []

    class P(HTMLParser):
        metas = 0

        def handle_starttag(self, tag, attrs):
            if tag not in OWN_TAGS:
                problems.append('element <%s> made of data' % tag)
            if tag == 'meta':
                P.metas += 1
            for k, v in attrs:
                if k not in OWN_ATTRS:
                    problems.append('attribute %s=%r on <%s> made of data' % (k, v, tag))
            if tag == 'style' and P.metas != 3:
                problems.append('a <style> not idemload\'s own')
            if tag == 'meta' and P.metas > 3:
                problems.append('a <meta> made of data: %r' % (attrs,))
    P().feed(text)
    styles = text.count('<style')
    if styles != 1:
        problems.append('%d <style> elements' % styles)
    return problems[0] if problems else None


if __name__ == '__main__':
    if sys.argv[1] == 'case':
        write_case(sys.argv[2], sys.argv[3])
    elif sys.argv[1] in ('check-text', 'check-page'):
        data = open(sys.argv[2], 'rb').read()
        why = (bad_text if sys.argv[1] == 'check-text' else bad_page)(data, sys.argv[3])
        if why:
            print('%s: %s' % (sys.argv[2], why))
            sys.exit(1)
