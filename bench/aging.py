#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Aging and in-guest traversal helpers of bench/aging.sh and
bench/guest-traversal.sh (python3 stdlib only).

  aging.py changes OLD NEW OUTDIR
      The change list that turns tree OLD into tree NEW: OUTDIR/changes.list
      (the format bench/guest/agetool.c applies), OUTDIR/data/PATH (the
      content of every file written), OUTDIR/summary.json (counts, bytes).
      Order: unlink removed files and symlinks (and entries whose type
      changes), rmdir removed directories (deepest first), mkdir new ones,
      then in sorted depth-first order write every new or changed file
      (in place: open O_TRUNC, so a changed file keeps its inode and gets
      its blocks again) and make every new symlink.
  aging.py cost TRACE SEGMENTS BLOCKS BLOCKSIZE
      Cost the guest's real read requests: TRACE is QEMU's log of the
      virtio_blk_handle_read event, SEGMENTS the guest's
      /results/segments; the requests between the two marker reads of a
      segment are costed in order with the seek model of bench/layout.py
      (the head at block 0 at the start of each segment, no cache: the
      guest's page cache already filtered them).  JSON on stdout: a list,
      one object a segment.
  aging.py row ROWS ROUND MODELDIR COSTJSON
      Append to the TSV ROWS one line per segment of COSTJSON: round,
      image, scope, modelled seconds (MODELDIR/IMAGE.json from
      bench/layout.py metrics; a top-level directory's own cold figure),
      guest-request seconds, requests, seeks, MiB read, guest wall time.
  aging.py report-aging ROWS OUTDIR META    OUTDIR/aging.md, OUTDIR/aging*.svg
  aging.py report-guest ROWS OUTDIR META    OUTDIR/guest.md, OUTDIR/guest-traversal.svg
      META: a JSON file of the run's parameters (subset, rounds, sizes,
      times, notes).
"""
import json
import math
import os
import re
import shutil
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layout import Disk                  # the one disk model

TOOLS = ['orlov', 'mke2fs-d', 'genext2fs', 'kernel']
LABEL = {'orlov': 'orlov-populate', 'mke2fs-d': 'mke2fs -d',
         'genext2fs': 'genext2fs', 'kernel': 'kernel-made (replay in the guest)'}
SHORT = {'orlov': 'orlov-populate', 'mke2fs-d': 'mke2fs -d', 'genext2fs': 'genext2fs',
         'kernel': 'kernel-made'}
# orlov-populate "loses" only where another image is more than this
# fraction cheaper (smaller differences are reported as ties)
TIE = 0.01
COLOUR = {'orlov': '#1f77b4', 'mke2fs-d': '#d62728', 'genext2fs': '#ff7f0e',
          'kernel': '#2ca02c'}


# ------------------------------------------------------------ change list

def esc(p):
    out = []
    for ch in p.encode('utf-8', 'surrogateescape'):
        if ch < 0x21 or ch > 0x7e or ch == 0x25:
            out.append('%%%02X' % ch)
        else:
            out.append(chr(ch))
    return ''.join(out)


def scan(root):
    """path -> (kind, mode, size, target) for every entry below root."""
    ents = {}
    for dp, dns, fns in os.walk(root):
        rel = os.path.relpath(dp, root)
        for n in dns + fns:
            p = n if rel == '.' else rel + '/' + n
            st = os.lstat(os.path.join(dp, n))
            if stat.S_ISDIR(st.st_mode):
                ents[p] = ('d', stat.S_IMODE(st.st_mode), 0, None)
            elif stat.S_ISREG(st.st_mode):
                ents[p] = ('f', stat.S_IMODE(st.st_mode), st.st_size, None)
            elif stat.S_ISLNK(st.st_mode):
                ents[p] = ('l', 0, 0, os.readlink(os.path.join(dp, n)))
        dns[:] = [d for d in dns if not os.path.islink(os.path.join(dp, d))]
    return ents


def same_content(a, b):
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, 'rb') as fa, open(b, 'rb') as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def key(p):
    return [c.encode('utf-8', 'surrogateescape') for c in p.split('/')]


def changes(old, new, outdir):
    o, n = scan(old), scan(new)
    data = os.path.join(outdir, 'data')
    os.makedirs(data, exist_ok=True)
    ops = []
    cnt = {'unlink': 0, 'rmdir': 0, 'mkdir': 0, 'create': 0, 'rewrite': 0,
           'symlink': 0, 'bytes_written': 0, 'bytes_removed': 0,
           'old_entries': len(o), 'new_entries': len(n), 'unchanged_files': 0}
    gone = [p for p in o if p not in n or n[p][0] != o[p][0]]
    for p in sorted((p for p in gone if o[p][0] != 'd'), key=key):
        ops.append('u %s' % esc(p))
        cnt['unlink'] += 1
        cnt['bytes_removed'] += o[p][2]
    # a removed directory's contents first (they are all gone too)
    for p in sorted((p for p in gone if o[p][0] == 'd'), key=key, reverse=True):
        ops.append('r %s' % esc(p))
        cnt['rmdir'] += 1
    for p in sorted(n, key=key):
        kind, mode, size, target = n[p]
        fresh = p not in o or o[p][0] != kind
        if kind == 'd':
            if fresh:
                ops.append('d %o %s' % (mode, esc(p)))
                cnt['mkdir'] += 1
        elif kind == 'f':
            if not fresh and o[p][1] == mode and same_content(os.path.join(old, p),
                                                              os.path.join(new, p)):
                cnt['unchanged_files'] += 1
                continue
            ops.append('w %o %s' % (mode, esc(p)))
            cnt['create' if fresh else 'rewrite'] += 1
            cnt['bytes_written'] += size
            if not fresh:
                cnt['bytes_removed'] += o[p][2]
            dst = os.path.join(data, p)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(new, p), dst)
        elif kind == 'l':
            if not fresh and o[p][3] == target:
                continue
            if not fresh:
                ops.append('u %s' % esc(p))
                cnt['unlink'] += 1
            ops.append('l %s %s' % (esc(p), esc(target)))
            cnt['symlink'] += 1
    with open(os.path.join(outdir, 'changes.list'), 'w') as f:
        f.write(''.join(x + '\n' for x in ops))
    with open(os.path.join(outdir, 'summary.json'), 'w') as f:
        json.dump(cnt, f, indent=1)
    print(json.dumps(cnt))


# ------------------------------------------------------------ costing

MARK0 = 4194304
TRACE = re.compile(r'virtio_blk_handle_read vdev (0x[0-9a-f]+|\(nil\)) req \S+ '
                   r'sector (\d+) nsectors (\d+)')


class Head(Disk):
    """layout.py's disk, fed the guest's own requests in their order."""

    def __init__(self, nblocks, bs):
        super().__init__(nblocks, bs)
        self.seconds = 0.0
        self.bytes = 0

    def request(self, start, length):
        self.seconds += self.read_run(start, length)
        self.bytes += length * self.bs


def cost(trace, segments, nblocks, bs):
    segs = {}
    with open(segments) as f:
        for line in f:
            w = line.split()
            if len(w) < 3:
                continue
            kv = dict(x.split('=', 1) for x in w[3:] if '=' in x)
            segs[int(w[0])] = {'seg': int(w[0]), 'image': w[1], 'scope': w[2],
                               'entries': int(kv.get('entries', 0)),
                               'bytes_read': int(kv.get('bytes', 0)),
                               'wall_s': int(kv.get('ns', 0)) / 1e9}
    reads = []
    with open(trace, errors='replace') as f:
        for line in f:
            m = TRACE.search(line)
            if m:
                reads.append((m.group(1), int(m.group(2)), int(m.group(3))))
    # marker K: sector MARK0 + 512 (K + 1) of the marker disk (see
    # bench/guest/traverse-guest.sh), beyond the end of every image
    marker = None
    for v, s, ns in reads:
        if s == MARK0 + 512:
            marker = v
    if marker is None:
        sys.exit('aging.py cost: no marker read in %s' % trace)
    cur = None
    heads = {}
    devs = {}
    spb = bs // 512
    for v, s, ns in reads:
        if v == marker:
            if s < MARK0 + 1024 or (s - MARK0) % 512:
                continue
            mk = (s - MARK0) // 512 - 1
            k = (mk - 1) // 2
            if mk % 2 == 1:
                cur = k
                heads[k] = Head(nblocks, bs)
                devs[k] = set()
            else:
                cur = None
            continue
        if cur is None:
            continue
        first = s // spb
        last = (s + ns - 1) // spb
        heads[cur].request(first, last - first + 1)
        devs[cur].add(v)
    out = []
    for k in sorted(segs):
        h = heads.get(k)
        if h is None:
            sys.exit('aging.py cost: segment %d has no markers in the trace' % k)
        if len(devs[k]) > 1:
            sys.exit('aging.py cost: segment %d read from %d disks' % (k, len(devs[k])))
        d = dict(segs[k])
        d.update({'guest_model_s': h.seconds, 'requests': h.reads, 'seeks': h.seeks,
                  'request_bytes': h.bytes})
        out.append(d)
    json.dump(out, sys.stdout, indent=1)
    print()


# ------------------------------------------------------------ rows

ROW_HEAD = ['round', 'image', 'scope', 'model_s', 'guest_s', 'requests', 'seeks',
            'mib', 'wall_s', 'model_reads', 'model_seeks']


def row(rows, rnd, modeldir, costjson):
    with open(costjson) as f:
        segs = json.load(f)
    new = not os.path.exists(rows)
    with open(rows, 'a') as f:
        if new:
            f.write('\t'.join(ROW_HEAD) + '\n')
        for s in segs:
            with open(os.path.join(modeldir, s['image'] + '.json')) as mf:
                m = json.load(mf)
            scope = s['scope']
            mr = m['model_reads']
            ms = m['model_seeks']
            if scope in ('/', '/-r'):
                model = m['model_seconds']
            else:
                sub = m['subtrees'].get(scope)
                model = sub[2] if sub else float('nan')
                mr = ms = ''
            f.write('\t'.join(str(x) for x in [
                rnd, s['image'], scope, '%.4f' % model, '%.4f' % s['guest_model_s'],
                s['requests'], s['seeks'], '%.1f' % (s['request_bytes'] / 1048576),
                '%.3f' % s['wall_s'], mr, ms]) + '\n')


def read_rows(path):
    out = []
    with open(path) as f:
        head = f.readline().rstrip('\n').split('\t')
        for line in f:
            d = dict(zip(head, line.rstrip('\n').split('\t')))
            d['round'] = int(d['round'])
            for k in ('model_s', 'guest_s', 'wall_s', 'mib'):
                d[k] = float(d[k])
            for k in ('requests', 'seeks'):
                d[k] = int(d[k])
            out.append(d)
    return out


# ------------------------------------------------------------ SVG

def svg_lines(path, title, ylabel, xs, series, xlabel='round'):
    """series: list of (label, colour, dashed, [y per x or None]); a log
    y axis when the values span more than a factor of 5."""
    W, H, L, R, T, B = 780, 420, 70, 230, 40, 50
    ys = [y for s in series for y in s[3] if y is not None and y > 0]
    if not ys:
        return
    log = max(ys) / min(ys) > 5
    if log:
        lo = 10 ** math.floor(math.log10(min(ys)))
        hi = 10 ** math.ceil(math.log10(max(ys)))
        ymax = hi
    else:
        ymax = max(ys) * 1.1 or 1.0
    xmin, xmax = min(xs), max(xs)
    span = (xmax - xmin) or 1

    def X(x):
        return L + (x - xmin) / span * (W - L - R)

    def Y(y):
        if log:
            return T + (1 - math.log(y / lo) / math.log(hi / lo)) * (H - T - B)
        return T + (1 - y / ymax) * (H - T - B)

    o = svg_head(W, H, L, T, B, title, ylabel)
    o.append('<text x="%d" y="%d">%s</text>' % ((L + W - R) // 2, H - 12, xesc(xlabel)))
    if log:
        ticks = []
        d = lo
        while d <= hi * 1.001:
            ticks += [d * m for m in (1, 2, 5) if d * m <= hi * 1.001]
            d *= 10
        ylabel += ' (log scale)'
        o[3] = '<text x="16" y="%d" transform="rotate(-90 16 %d)">%s</text>' % (
            (T + H - B) // 2, (T + H - B) // 2, xesc(ylabel))
    else:
        ticks = [ymax * i / 5 for i in range(6)]
    for y in ticks:
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (L, W - R, Y(y), Y(y)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.3g</text>' % (L - 6, Y(y) + 4, y))
    for x in xs:
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (X(x), H - B + 18, x))
    o.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"/>' % (L, W - R, H - B, H - B))
    o.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"/>' % (L, L, T, H - B))
    for k, (label, col, dashed, vals) in enumerate(series):
        pts = ['%.1f,%.1f' % (X(x), Y(y)) for x, y in zip(xs, vals) if y is not None]
        dash = ' stroke-dasharray="6,4"' if dashed else ''
        if len(pts) > 1:
            o.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>' % (
                col, dash, ' '.join(pts)))
        for p in pts:
            x, y = p.split(',')
            o.append('<circle cx="%s" cy="%s" r="3" fill="%s"/>' % (x, y, col))
        ly = T + 10 + 18 * k
        o.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"%s/>' % (
            W - R + 10, W - R + 40, ly, ly, col, dash))
        o.append('<text x="%d" y="%d">%s</text>' % (W - R + 46, ly + 4, xesc(label)))
    o.append('</svg>')
    with open(path, 'w') as f:
        f.write('\n'.join(o) + '\n')


def svg_bars(path, title, ylabel, groups, series):
    """groups: labels; series: list of (label, colour, [value per group])."""
    W, H, L, R, T, B = 820, 400, 70, 260, 40, 60
    vals = [v for s in series for v in s[2] if v is not None]
    if not vals:
        return
    ymax = max(vals) * 1.1 or 1.0
    gw = (W - L - R) / len(groups)
    bw = gw * 0.8 / len(series)

    def Y(y):
        return T + (1 - y / ymax) * (H - T - B)

    o = svg_head(W, H, L, T, B, title, ylabel)
    for i in range(6):
        y = ymax * i / 5
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (L, W - R, Y(y), Y(y)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.3g</text>' % (L - 6, Y(y) + 4, y))
    for g, gl in enumerate(groups):
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (
            L + gw * (g + 0.5), H - B + 18, xesc(gl)))
        for k, (sl, col, v) in enumerate(series):
            if v[g] is None:
                continue
            x = L + gw * g + gw * 0.1 + bw * k
            o.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>' % (
                x, Y(v[g]), bw - 2, H - B - Y(v[g]), col))
    for k, (sl, col, v) in enumerate(series):
        ly = T + 10 + 18 * k
        o.append('<rect x="%d" y="%d" width="14" height="10" fill="%s"/>' % (W - R + 10, ly - 8, col))
        o.append('<text x="%d" y="%d">%s</text>' % (W - R + 30, ly + 2, xesc(sl)))
    o.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"/>' % (L, W - R, H - B, H - B))
    o.append('</svg>')
    with open(path, 'w') as f:
        f.write('\n'.join(o) + '\n')


def xesc(s):
    return str(s).replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')


def svg_head(W, H, L, T, B, title, ylabel):
    """An SVG's opening, white background, title and rotated y label."""
    return ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'font-family="sans-serif" font-size="12">' % (W, H),
            '<rect width="100%" height="100%" fill="white"/>',
            '<text x="%d" y="22" font-size="14">%s</text>' % (L, xesc(title)),
            '<text x="16" y="%d" transform="rotate(-90 16 %d)">%s</text>' % (
                (T + H - B) // 2, (T + H - B) // 2, xesc(ylabel))]


# ------------------------------------------------------------ reports

def f3(v):
    return '-' if v is None or v != v else '%.3f' % v


def fr(v):
    return '-' if v is None or v != v else '%.2f' % v


def losses(keys, get, tools, label_of):
    """Plain statements: for every key (a round or a scope), every image
    cheaper than orlov-populate by more than TIE, modelled or measured."""
    st = []
    for kk in keys:
        o = get(kk, 'orlov')
        if not o:
            continue
        for t in tools:
            r = get(kk, t)
            if t == 'orlov' or not r:
                continue
            lm = r['model_s'] < o['model_s'] * (1 - TIE) and kk != '/-r'
            lg = r['guest_s'] < o['guest_s'] * (1 - TIE)
            if not (lm or lg):
                continue
            how = ('modelled and guest-measured' if lm and lg else
                   'modelled only' if lm else 'guest-measured only')
            st.append('- %s: orlov-populate loses to %s (%s): %.3f vs %.3f s modelled '
                      '(x%.2f), %.3f vs %.3f s from the guest\'s requests (x%.2f).' % (
                          label_of(kk), SHORT[t], how, o['model_s'], r['model_s'],
                          o['model_s'] / r['model_s'], o['guest_s'], r['guest_s'],
                          o['guest_s'] / r['guest_s']))
    return st


def fs_names(meta):
    """The SVG name prefix and heading suffix of a run on META's file
    system: ext2's keep their names; another's sit next to them in the
    same report."""
    fs = meta.get('fs', 'ext2')
    return ('', '') if fs == 'ext2' else (fs + '-', f', {fs} images')


def report_aging(rows_path, outdir, meta_path):
    rows = [r for r in read_rows(rows_path) if r['scope'] == '/']
    with open(meta_path) as f:
        meta = json.load(f)
    rounds = sorted({r['round'] for r in rows})
    tools = [t for t in TOOLS if any(r['image'] == t for r in rows)]
    get = {(r['round'], r['image']): r for r in rows}
    px, sfx = fs_names(meta)
    o = ['## Aging in the QEMU guest' + sfx, '']
    o += meta.get('method', [])
    o += ['', '| round | tree | image | model s | guest requests s | guest/model | '
          'reads model/guest | seeks model/guest | MiB | model vs mke2fs -d | guest vs mke2fs -d | guest wall s (TCG) |',
          '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for rd in rounds:
        base = get.get((rd, 'mke2fs-d'))
        for t in tools:
            r = get.get((rd, t))
            if not r:
                continue
            o.append('| %d | %s | %s | %s | %s | %s | %s/%d | %s/%d | %.1f | %s | %s | %s |' % (
                rd, meta.get('versions', {}).get(str(rd), ''), LABEL[t], f3(r['model_s']),
                f3(r['guest_s']), fr(r['guest_s'] / r['model_s'] if r['model_s'] else None),
                r.get('model_reads') or '-', r['requests'], r.get('model_seeks') or '-',
                r['seeks'], r['mib'],
                fr(r['model_s'] / base['model_s']) if base else '-',
                fr(r['guest_s'] / base['guest_s']) if base else '-', f3(r['wall_s'])))
    o += ['']
    # plain statements
    st = losses(rounds, lambda rd, t: get.get((rd, t)), tools,
                lambda rd: 'round %d (%s)' % (rd, meta.get('versions', {}).get(str(rd), '')))
    if st:
        o += ['Where orlov-populate loses (a lower traversal cost is better; within %d %% counts as a tie):' % round(TIE * 100), ''] + st
    else:
        o += ['orlov-populate is the cheapest (or within %d %% of it) in every round, modelled and measured.' % round(TIE * 100)]
    same = [str(rd) for rd in rounds if (rd, 'orlov') in get and (rd, 'kernel') in get and
            abs(get[(rd, 'orlov')]['model_s'] - get[(rd, 'kernel')]['model_s']) <=
            1e-3 * get[(rd, 'kernel')]['model_s']]
    if same:
        o += ['', 'The orlov-populate and kernel-made images have the same modelled cost '
              '(within 0.1 %%) in round(s) %s: the tool reproduces the kernel\'s layout, and '
              'the same changes applied by the same kernel keep them equal (their lines '
              'coincide in the plots; the stock kernel places top-level directories at '
              'random, so a run can also start them apart).' % ', '.join(same)]
    o += ['']
    o += ['Growth over the rounds (last round / round 0):', '']
    for t in tools:
        a, b = get.get((rounds[0], t)), get.get((rounds[-1], t))
        if a and b:
            o.append('- %s: modelled %s -> %s s (x%s), guest %s -> %s s (x%s)' % (
                LABEL[t], f3(a['model_s']), f3(b['model_s']), fr(b['model_s'] / a['model_s']),
                f3(a['guest_s']), f3(b['guest_s']), fr(b['guest_s'] / a['guest_s'])))
    o += [''] + meta.get('notes', []) + ['']
    o += [f'![aging: traversal cost per round]({px}aging.svg)', '',
          f'![aging: ratio to mke2fs -d]({px}aging-ratio.svg)', '']
    with open(os.path.join(outdir, 'aging.md'), 'w') as f:
        f.write('\n'.join(o))
    series = []
    for t in tools:
        series.append((SHORT[t] + ' model', COLOUR[t], False,
                       [get[(rd, t)]['model_s'] if (rd, t) in get else None for rd in rounds]))
        series.append((SHORT[t] + ' guest requests', COLOUR[t], True,
                       [get[(rd, t)]['guest_s'] if (rd, t) in get else None for rd in rounds]))
    svg_lines(os.path.join(outdir, px + 'aging.svg'),
              'Cold traversal after aging rounds (%s)' % meta.get('subset', ''),
              'seconds (seek model)', rounds, series)
    series = []
    for t in tools:
        for k, dashed, sfx in (('model_s', False, ' model'), ('guest_s', True, ' guest requests')):
            vals = []
            for rd in rounds:
                r, b = get.get((rd, t)), get.get((rd, 'mke2fs-d'))
                vals.append(r[k] / b[k] if r and b and b[k] else None)
            series.append((SHORT[t] + sfx, COLOUR[t], dashed, vals))
    svg_lines(os.path.join(outdir, px + 'aging-ratio.svg'),
              'Traversal cost relative to the mke2fs -d image of the same round',
              'ratio to mke2fs -d', rounds, series)


def report_guest(rows_path, outdir, meta_path):
    rows = read_rows(rows_path)
    with open(meta_path) as f:
        meta = json.load(f)
    tools = [t for t in TOOLS if any(r['image'] == t for r in rows)]
    scopes = []
    for r in rows:
        if r['scope'] not in scopes:
            scopes.append(r['scope'])
    get = {(r['image'], r['scope']): r for r in rows}
    px, sfx = fs_names(meta)
    o = ['## Cold traversal in the QEMU guest (fresh images)' + sfx, '']
    o += meta.get('method', [])
    o += ['', '| scope | image | model s | guest requests s | guest/model | requests | '
          'model reads | seeks | model seeks | MiB | model vs mke2fs -d | guest vs mke2fs -d | guest wall s (TCG) |',
          '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for sc in scopes:
        base = get.get(('mke2fs-d', sc))
        for t in tools:
            r = get.get((t, sc))
            if not r:
                continue
            name = {'/': 'whole tree, sorted', '/-r': 'whole tree, readdir order (model: sorted)'}.get(sc, sc + ' alone')
            o.append('| %s | %s | %s | %s | %s | %d | %s | %d | %s | %.1f | %s | %s | %s |' % (
                name, LABEL[t], f3(r['model_s']), f3(r['guest_s']),
                fr(r['guest_s'] / r['model_s'] if r['model_s'] else None), r['requests'],
                r.get('model_reads') or '-', r['seeks'], r.get('model_seeks') or '-', r['mib'],
                fr(r['model_s'] / base['model_s']) if base else '-',
                fr(r['guest_s'] / base['guest_s']) if base else '-', f3(r['wall_s'])))
    o += ['']
    st = losses(scopes, lambda sc, t: get.get((t, sc)), tools,
                lambda sc: {'/': 'whole tree', '/-r': 'whole tree in readdir order'}.get(sc, sc))
    if st:
        o += ['Where orlov-populate loses (lower is better; within %d %% counts as a tie; the readdir-order traversal is compared on the guest figure only):' % round(TIE * 100), ''] + st
    else:
        o += ['orlov-populate is the cheapest (or within %d %% of it) everywhere here, modelled and measured.' % round(TIE * 100)]
    o += [''] + meta.get('notes', []) + ['', f'![model vs guest]({px}guest-traversal.svg)', '']
    with open(os.path.join(outdir, 'guest.md'), 'w') as f:
        f.write('\n'.join(o))
    series = [('model', '#1f77b4', [get[(t, '/')]['model_s'] if (t, '/') in get else None for t in tools]),
              ('guest requests (sorted)', '#ff7f0e',
               [get[(t, '/')]['guest_s'] if (t, '/') in get else None for t in tools])]
    if any(r['scope'] == '/-r' for r in rows):
        series.append(('guest requests (readdir order)', '#2ca02c',
                       [get[(t, '/-r')]['guest_s'] if (t, '/-r') in get else None for t in tools]))
    svg_bars(os.path.join(outdir, px + 'guest-traversal.svg'),
             'Cold traversal of %s: model vs the guest\'s requests' % meta.get('subset', ''),
             'seconds (seek model)', [SHORT[t] for t in tools], series)


def main(argv):
    if len(argv) == 5 and argv[1] == 'changes':
        changes(argv[2], argv[3], argv[4])
    elif len(argv) == 6 and argv[1] == 'cost':
        cost(argv[2], argv[3], int(argv[4]), int(argv[5]))
    elif len(argv) == 6 and argv[1] == 'row':
        row(argv[2], int(argv[3]), argv[4], argv[5])
    elif len(argv) == 5 and argv[1] == 'report-aging':
        report_aging(argv[2], argv[3], argv[4])
    elif len(argv) == 5 and argv[1] == 'report-guest':
        report_guest(argv[2], argv[3], argv[4])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
