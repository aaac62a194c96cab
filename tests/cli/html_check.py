#!/usr/bin/env python3
"""Checks of idemload's HTML report as a browser rendered it (no third-party
modules: the PNG is decoded with zlib, the DOM parsed with html.parser).

  html_check.py render HTML PNG DOM   headless Chromium: screenshot and DOM
  html_check.py png FILE        exit 0 when the screenshot is not blank
  html_check.py dom FILE        prints the facts of a dumped DOM as JSON
"""
import json
import os
import shutil
import subprocess
import tempfile
import struct
import sys
import zlib
from html.parser import HTMLParser


def png_pixels(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat, w = 8, b'', None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
            assert depth == 8 and ctype in (2, 6), 'unexpected PNG colour type'
            bpp = 3 if ctype == 2 else 4
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def png_not_blank(path):
    w, h, bpp, rows = png_pixels(path)
    colours, counts = set(), {}
    for y in range(0, h, 4):
        r = rows[y]
        for x in range(0, w, 4):
            px = r[x * bpp:x * bpp + 3]
            colours.add(px)
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    commonest = max(counts.values())
    # Not one flat colour: many colours, and the commonest covers < 90%.
    ok = len(colours) >= 8 and commonest < 0.9 * total
    print(f'{w}x{h}, {len(colours)} colours, commonest {commonest / total:.0%}')
    return ok


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = {}
        self.urls = []
        self.tiles = {}
        self.stack = []
        self.text = []
        self.ids = {}
        self.tile = None
        self.in_n = False
        self.cells = []
        self.row = None
        self.table_id = None
        self.tables = {}
        # Inline SVG charts, by aria-label: their <text> labels and the
        # <title> of each <rect>, in document order, as ("text"|"rect"|
        # "gap", words) items (a "gap" rect is an empty period).
        self.svgs = {}
        self.svg = None
        self.item = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for k, v in attrs:
            if k in ('src', 'href', 'action', 'srcset', 'poster', 'data') or k.startswith('on'):
                self.urls.append((tag, k, v))
        if 'data-figure' in a:
            self.tile = a['data-figure']
        if tag == 'div' and a.get('class') == 'n' and self.tile:
            self.in_n = True
        if tag == 'table':
            self.table_id = a.get('id') or 'table%d' % len(self.tables)
            self.tables[self.table_id] = []
        if tag == 'tr':
            self.row = []
        if tag in ('td', 'th') and self.row is not None:
            self.row.append('')
        if 'id' in a:
            self.ids[a['id']] = tag
        if tag == 'svg':
            self.svg = self.svgs.setdefault(a.get('aria-label', 'svg%d' % len(self.svgs)), [])
        elif self.svg is not None and tag == 'text':
            self.item = ['text', '']
            self.svg.append(self.item)
        elif self.svg is not None and tag == 'rect':
            self.item = ['gap' if a.get('class') == 'gap' else 'rect', '']
            self.svg.append(self.item)

    def handle_endtag(self, tag):
        if tag == 'svg':
            self.svg = None
        if tag in ('text', 'rect'):
            self.item = None
        if tag == 'tr' and self.row is not None and self.table_id:
            self.tables[self.table_id].append(self.row)
            self.row = None

    def handle_data(self, d):
        self.text.append(d)
        if self.item is not None:
            self.item[1] += d
        if self.in_n:
            self.tiles[self.tile] = int(d.strip())
            self.in_n = False
            self.tile = None
        if self.row:
            self.row[-1] += d


def dom_facts(path):
    d = Dom()
    d.feed(open(path, encoding='utf-8').read())
    return {'tags': d.tags, 'urls': d.urls, 'tiles': d.tiles, 'ids': d.ids,
            'text': ''.join(d.text), 'tables': d.tables, 'svgs': d.svgs}


def render(html, png, dom):
    """Debian's chromium, headless, offline: nothing it could fetch."""
    exe = shutil.which('chromium') or shutil.which('chromium-browser')
    if not exe:
        print('chromium is not installed (scripts/setup.sh installs it)', file=sys.stderr)
        return False
    url = 'file://' + os.path.abspath(html)
    with tempfile.TemporaryDirectory() as profile:
        base = [exe, '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                '--no-first-run', '--disable-background-networking',
                '--disable-component-update', '--disable-sync',
                '--user-data-dir=' + profile, '--window-size=1280,2000']
        shot = subprocess.run(base + ['--screenshot=' + os.path.abspath(png), url],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        with open(dom, 'wb') as out:
            got = subprocess.run(base + ['--dump-dom', url], stdout=out,
                                 stderr=subprocess.DEVNULL, timeout=120)
    return shot.returncode == 0 and got.returncode == 0 and os.path.getsize(dom) > 0 \
        and os.path.exists(png)


if __name__ == '__main__':
    if sys.argv[1] == 'render':
        sys.exit(0 if render(*sys.argv[2:5]) else 1)
    if sys.argv[1] == 'png':
        sys.exit(0 if png_not_blank(sys.argv[2]) else 1)
    print(json.dumps(dom_facts(sys.argv[2]), ensure_ascii=False))
