#!/usr/bin/env python3
"""Checks of idemload's HTML report as a browser rendered it (no third-party
modules: the PNG is decoded with zlib, the DOM parsed with html.parser).

  html_check.py render HTML PNG DOM   headless Chromium: screenshot and DOM
  html_check.py png FILE        exit 0 when the screenshot is not blank
  html_check.py dom FILE        prints the facts of a dumped DOM as JSON
  html_check.py layout HTML WIDTH   prints, as JSON, what the page's layout
                                hides or garbles at that window width
"""
import html as html_text
import json
import os
import re
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


# Measured in the page as Chromium lays it out (a copy of it, its
# Content-Security-Policy taken out so that this one script runs):
# - split: a figure (a number of 4 characters or more: an amount, a count)
#   of a table cell that is not a key (channel, out_trade_no,
#   callback_type, kind, file, reason: data text, which may break
#   anywhere), or a tenant, a day, a time or a verdict, drawn over two
#   lines, so that it reads as two;
# - clipped: a chart's label drawn past the chart's edge, hidden;
# - overflow: a section whose content runs past its width at a width
#   where nothing should (its text hidden behind a scroll bar).
LAYOUT_SCRIPT = r"""<script>
(function () {
  var facts = {split: [], clipped: [], overflow: []};
  var keys = ['channel', 'out_trade_no', 'callback_type', 'kind', 'file', 'reason',
              'first examples (file:line, the raw text)', 'SHA-256'];
  document.querySelectorAll('table').forEach(function (t) {
    var head = Array.prototype.map.call(t.rows[0].cells, function (c) { return c.textContent.trim(); });
    Array.prototype.slice.call(t.rows, 1).forEach(function (row) {
      Array.prototype.forEach.call(row.cells, function (td, i) {
        if (keys.indexOf(head[i]) >= 0) return;
        var lines = function (r) {
          var tops = {};
          Array.prototype.forEach.call(r.getClientRects(), function (b) {
            if (b.width > 0) tops[Math.round(b.top)] = 1;
          });
          return Object.keys(tops).length;
        };
        if (['tenant', 'day', 'first seen', 'verdict'].indexOf(head[i]) >= 0) {
          var whole = document.createRange();
          whole.selectNodeContents(td);
          if (lines(whole) > 1)
            facts.split.push((t.id || 'table') + ': ' + head[i] + ': ' + td.textContent);
          return;
        }
        var w = document.createTreeWalker(td, NodeFilter.SHOW_TEXT), n;
        while ((n = w.nextNode())) {
          var re = /(^|[^0-9A-Za-z_.])([-+]?[0-9][0-9,.]{2,}[0-9])/g, m;
          while ((m = re.exec(n.data))) {
            var r = document.createRange(), at = m.index + m[1].length;
            r.setStart(n, at);
            r.setEnd(n, at + m[2].length);
            if (lines(r) > 1)
              facts.split.push((t.id || 'table') + ': ' + head[i] + ': ' + m[2]);
          }
        }
      });
    });
  });
  document.querySelectorAll('svg').forEach(function (svg) {
    var vb = svg.viewBox.baseVal;
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBBox();
      if (b.x < -0.5 || b.x + b.width > vb.width + 0.5)
        facts.clipped.push(t.textContent + ' [' + Math.round(b.x) + ', ' +
                           Math.round(b.x + b.width) + ']');
    });
  });
  document.querySelectorAll('section').forEach(function (s) {
    if (s.scrollWidth > s.clientWidth + 1)
      facts.overflow.push((s.id || 'section') + ' ' + s.scrollWidth + ' > ' + s.clientWidth);
  });
  var out = document.createElement('pre');
  out.id = 'layout-facts';
  out.textContent = JSON.stringify(facts);
  document.body.appendChild(out);
})();
</script>"""


def layout(path, width):
    exe = shutil.which('chromium') or shutil.which('chromium-browser')
    if not exe:
        print('chromium is not installed (scripts/setup.sh installs it)', file=sys.stderr)
        return None
    page = open(path, encoding='utf-8').read()
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', '', page, count=1)
    page = page.replace('</body>', LAYOUT_SCRIPT + '</body>', 1)
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, 'page.html')
        open(copy, 'w', encoding='utf-8').write(page)
        got = subprocess.run([exe, '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
                              '--no-first-run', '--disable-background-networking',
                              '--disable-component-update', '--disable-sync', '--hide-scrollbars',
                              '--user-data-dir=' + os.path.join(tmp, 'profile'),
                              '--window-size=%d,2000' % width, '--dump-dom', 'file://' + copy],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120)
    m = re.search(r'<pre id="layout-facts">(.*?)</pre>', got.stdout.decode('utf-8'), re.S)
    return json.loads(html_text.unescape(m.group(1))) if m else None


if __name__ == '__main__':
    if sys.argv[1] == 'render':
        sys.exit(0 if render(*sys.argv[2:5]) else 1)
    if sys.argv[1] == 'layout':
        facts = layout(sys.argv[2], int(sys.argv[3]))
        if facts is None:
            sys.exit(1)
        print(json.dumps(facts, ensure_ascii=False))
        sys.exit(0)
    if sys.argv[1] == 'png':
        sys.exit(0 if png_not_blank(sys.argv[2]) else 1)
    print(json.dumps(dom_facts(sys.argv[2]), ensure_ascii=False))
