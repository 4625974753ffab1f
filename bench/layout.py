#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Layout metrics and the benchmark report (stdlib only).

  layout.py metrics DUMP DUMPE2FS        JSON metrics of one image on stdout
      DUMP: `orlov-layout dump IMAGE` output; DUMPE2FS: `dumpe2fs IMAGE`
  layout.py report DIR                   DIR/report.md, DIR/*.svg, table on stdout
      reads DIR/times.tsv, DIR/metrics/WORKLOAD.TOOL.json, DIR/machine.txt

The cold-cache traversal model: entries in dump order; for each, the
inode-table block holding its inode, then its blocks as listed (indirect
blocks included).  Consecutive blocks are merged into one read; a block
already read is cached (never read twice).  A read that does not start at
the block after the head costs seek(x) = 1 + 5.17 x + 10.83 sqrt(x) ms,
x = |block - head| / block_count, plus 4.17 ms rotation; every read costs
its transfer at 150 MB/s.
"""
import json
import math
import os
import re
import statistics
import sys

SEEK_A, SEEK_B, SEEK_C = 1.0, 5.17, 10.83   # ms
ROTATION_MS = 4.17
TRANSFER_BPS = 150e6

LINE = re.compile(r'^(.*) ino=(\d+) group=(\d+) (\S+) blocks=(\S+)(?: xattr=.*)?$')


def parse_blocks(s):
    out = []
    if s == '-':
        return out
    for part in s.split(','):
        if '-' in part:
            a, b = part.split('-', 1)
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def parse_dumpe2fs(path):
    info = {'itable': []}
    with open(path, errors='replace') as f:
        for line in f:
            m = re.match(r'^(Block count|Block size|Inodes per group|Inode size|'
                         r'Blocks per group|First block|Inode count):\s*(\d+)', line)
            if m:
                info[m.group(1)] = int(m.group(2))
                continue
            m = re.match(r'^\s+Inode table at (\d+)', line)
            if m:
                info['itable'].append(int(m.group(1)))
    info.setdefault('Inode size', 128)
    info.setdefault('First block', 0)
    return info


class Disk:
    """Head position, cache and cost accounting of the model."""

    def __init__(self, block_count, block_size):
        self.n = block_count
        self.bs = block_size
        self.head = None
        self.cache = set()
        self.reads = 0
        self.seeks = 0

    def read_run(self, start, length):
        cost = 0.0
        if self.head is None or start != self.head + 1:
            x = abs(start - (self.head if self.head is not None else 0)) / self.n
            cost += SEEK_A + SEEK_B * x + SEEK_C * math.sqrt(x) + ROTATION_MS
            self.seeks += 1
        cost += length * self.bs / TRANSFER_BPS * 1000.0
        self.reads += 1
        self.head = start + length - 1
        return cost / 1000.0            # seconds

    def read(self, blocks):
        """Read a list of blocks in order, merging consecutive uncached ones."""
        cost = 0.0
        run_start = None
        run_len = 0
        for b in blocks:
            if b in self.cache:
                if run_len:
                    cost += self.read_run(run_start, run_len)
                    run_len = 0
                continue
            self.cache.add(b)
            if run_len and b == run_start + run_len:
                run_len += 1
            else:
                if run_len:
                    cost += self.read_run(run_start, run_len)
                run_start, run_len = b, 1
        if run_len:
            cost += self.read_run(run_start, run_len)
        return cost


def metrics(dump_path, dumpe2fs_path):
    fs = parse_dumpe2fs(dumpe2fs_path)
    bs = fs['Block size']
    nblocks = fs['Block count']
    ipg = fs['Inodes per group']
    isz = fs['Inode size']
    bpg = fs.get('Blocks per group', 8 * bs)
    first = fs['First block']
    itable = fs['itable']
    disk = Disk(nblocks, bs)
    groups_inodes = set()
    groups_blocks = set()
    dir_group = {}
    nfiles = nsame = 0
    dist_dir = []
    dist_consec = []
    prev_file_group = None
    multi_extent = 0
    nentries = 0
    subtree = {}
    total = 0.0
    with open(dump_path, errors='surrogateescape') as f:
        for line in f:
            line = line.rstrip('\n')
            m = LINE.match(line)
            if not m:
                continue
            path, ino, grp, typ, bl = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)
            nentries += 1
            blocks = parse_blocks(bl)
            groups_inodes.add(grp)
            for b in blocks:
                groups_blocks.add((b - first) // bpg)
            if typ == 'dir':
                dir_group[path] = grp
            else:
                nfiles += 1
                parent = path.rsplit('/', 1)[0] or '/'
                pg = dir_group.get(parent)
                if pg is not None:
                    nsame += pg == grp
                    dist_dir.append(abs(pg - grp))
                if prev_file_group is not None:
                    dist_consec.append(abs(grp - prev_file_group))
                prev_file_group = grp
                breaks = sum(1 for a, b in zip(blocks, blocks[1:]) if b != a + 1)
                if breaks:
                    multi_extent += 1
            # the model
            g = (ino - 1) // ipg
            idx = (ino - 1) % ipg
            itb = itable[g] + idx * isz // bs if g < len(itable) else None
            cost = disk.read([itb] if itb is not None else [])
            cost += disk.read(blocks)
            total += cost
            top = path.split('/')[1] if path != '/' else ''
            top = '/' + top
            subtree[top] = subtree.get(top, 0.0) + cost
    top10 = sorted(subtree.items(), key=lambda kv: -kv[1])[:10]
    return {
        'entries': nentries,
        'files': nfiles,
        'block_size': bs,
        'block_count': nblocks,
        'groups_total': len(itable),
        'groups_inodes': len(groups_inodes),
        'groups_used': len(groups_inodes | groups_blocks),
        'same_group_frac': (nsame / len(dist_dir)) if dist_dir else None,
        'mean_dist_dir': statistics.fmean(dist_dir) if dist_dir else None,
        'mean_dist_consec': statistics.fmean(dist_consec) if dist_consec else None,
        'multi_extent_files': multi_extent,
        'model_seconds': total,
        'model_reads': disk.reads,
        'model_seeks': disk.seeks,
        'model_top10': top10,
    }


# ---------------------------------------------------------------- report

TOOLS = ['orlov', 'oldalloc', 'mke2fs-d', 'genext2fs', 'raw-copy', 'mke2fs-empty']
TOOL_LABEL = {
    'orlov': 'orlov-populate',
    'oldalloc': 'orlov-populate --policy oldalloc',
    'mke2fs-d': 'mke2fs -d',
    'genext2fs': 'genext2fs',
    'raw-copy': 'raw copy (tar | cat)',
    'mke2fs-empty': 'mke2fs (empty image, no -d)',
}
IMAGE_TOOLS = ['orlov', 'oldalloc', 'mke2fs-d', 'genext2fs']
COLOURS = {'orlov': '#1f77b4', 'oldalloc': '#aec7e8', 'mke2fs-d': '#d62728',
           'genext2fs': '#ff9896', 'raw-copy': '#7f7f7f', 'mke2fs-empty': '#c7c7c7'}


def esc(s):
    return (str(s).replace('&', '&amp;').replace('<', '&lt;')
            .replace('>', '&gt;').replace('"', '&quot;'))


def svg_bars(path, title, ylabel, workloads, tools, value, fmt='{:.2f}', refline=None,
             cap=None):
    """Grouped bar chart: one group per workload, one bar per tool; bars
    above cap are cut at it (their label gives the value)."""
    W, H = 900, 420
    left, right, top, bottom = 70, 20, 50, 90
    vals = [value(w, t) for w in workloads for t in tools]
    vmax = max([v for v in vals if v is not None] + [refline or 0, 1e-9])
    if cap is not None:
        vmax = min(vmax, cap)
    vmax *= 1.12
    pw, ph = W - left - right, H - top - bottom
    gw = pw / max(1, len(workloads))
    bw = gw * 0.8 / max(1, len(tools))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W/2}" y="22" text-anchor="middle" font-size="15">{esc(title)}</text>',
           f'<text x="16" y="{top+ph/2}" transform="rotate(-90 16 {top+ph/2})" '
           f'text-anchor="middle">{esc(ylabel)}</text>']
    for i in range(6):
        v = vmax * i / 5
        y = top + ph - ph * i / 5
        out.append(f'<line x1="{left}" x2="{W-right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left-5}" y="{y+4:.1f}" text-anchor="end">{v:.3g}</text>')
    if refline is not None:
        y = top + ph - ph * refline / vmax
        out.append(f'<line x1="{left}" x2="{W-right}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'stroke="black" stroke-dasharray="4 3"/>')
    for wi, w in enumerate(workloads):
        x0 = left + wi * gw + gw * 0.1
        for ti, t in enumerate(tools):
            v = value(w, t)
            x = x0 + ti * bw
            if v is None:
                out.append(f'<text x="{x+bw/2:.1f}" y="{top+ph-3}" text-anchor="middle" '
                           f'font-size="9">n/a</text>')
                continue
            h = ph * min(v, vmax / 1.06) / vmax
            out.append(f'<rect x="{x:.1f}" y="{top+ph-h:.1f}" width="{bw*0.92:.1f}" '
                       f'height="{h:.1f}" fill="{COLOURS.get(t, "#888")}">'
                       f'<title>{esc(w)} {esc(TOOL_LABEL.get(t, t))}: {fmt.format(v)}</title></rect>')
            out.append(f'<text x="{x+bw*0.46:.1f}" y="{top+ph-h-3:.1f}" text-anchor="middle" '
                       f'font-size="9">{fmt.format(v)}{" (cut)" if v > vmax / 1.06 else ""}</text>')
        out.append(f'<text x="{left+wi*gw+gw/2:.1f}" y="{top+ph+16}" text-anchor="middle">{esc(w)}</text>')
    lx = left
    for t in tools:
        out.append(f'<rect x="{lx}" y="{H-40}" width="12" height="12" fill="{COLOURS.get(t, "#888")}"/>')
        lab = TOOL_LABEL.get(t, t)
        out.append(f'<text x="{lx+16}" y="{H-30}">{esc(lab)}</text>')
        lx += 22 + 6.2 * len(lab)
    out.append('</svg>')
    with open(path, 'w') as f:
        f.write('\n'.join(out) + '\n')


def read_times(path):
    """times.tsv: workload tool run seconds rss_kib status"""
    runs = {}
    status = {}
    order = []
    with open(path) as f:
        for line in f:
            p = line.rstrip('\n').split('\t')
            if len(p) < 6 or p[0] == 'workload':
                continue
            w, t, _, sec, rss, st = p[:6]
            if w not in order:
                order.append(w)
            if st == 'ok':
                runs.setdefault((w, t), []).append((float(sec), int(rss or 0)))
            else:
                status[(w, t)] = st
    return order, runs, status


def fmt_s(v):
    return '-' if v is None else (f'{v:.3f}' if v < 10 else f'{v:.1f}')


def fmt_r(v):
    return '-' if v is None else f'{v:.2f}'


def report(d):
    order, runs, status = read_times(os.path.join(d, 'times.tsv'))
    met = {}
    mdir = os.path.join(d, 'metrics')
    for w in order:
        for t in IMAGE_TOOLS:
            p = os.path.join(mdir, f'{w}.{t}.json')
            if os.path.exists(p):
                with open(p) as f:
                    met[(w, t)] = json.load(f)
    machine = ''
    mp = os.path.join(d, 'machine.txt')
    if os.path.exists(mp):
        with open(mp) as f:
            machine = f.read()
    notes = ''
    np_ = os.path.join(d, 'notes.txt')
    if os.path.exists(np_):
        with open(np_) as f:
            notes = f.read()

    def med(w, t):
        r = runs.get((w, t))
        return statistics.median(s for s, _ in r) if r else None

    def ratio(w, t):
        a, b = med(w, t), med(w, 'mke2fs-d')
        return a / b if a is not None and b else None

    def mratio(w, t):
        a, b = met.get((w, t)), met.get((w, 'mke2fs-d'))
        if a and b and b['model_seconds'] > 0:
            return a['model_seconds'] / b['model_seconds']
        return None

    lines = []
    lines.append('# orlov-populate benchmark report\n')
    lines.append(machine.rstrip() + '\n')
    # where we lose
    lose = []
    for w in order:
        o, m = met.get((w, 'orlov')), met.get((w, 'mke2fs-d'))
        if o and m and o['model_seconds'] > m['model_seconds'] * 1.001:
            lose.append(f'- **{w}**: the modelled cold-cache traversal of the '
                        f'orlov-populate image takes {o["model_seconds"]:.2f} s, '
                        f'{o["model_seconds"]/m["model_seconds"]:.2f}x the packed '
                        f'`mke2fs -d` image ({m["model_seconds"]:.2f} s): a fresh full '
                        f'traversal is faster on the mke2fs -d image '
                        f'({o["groups_used"]} groups used against {m["groups_used"]}).')
        r = ratio(w, 'orlov')
        if r is not None and r > 1.0:
            lose.append(f'- **{w}**: orlov-populate takes {r:.2f}x the wall time of '
                        f'`mke2fs -d` ({fmt_s(med(w, "orlov"))} s against '
                        f'{fmt_s(med(w, "mke2fs-d"))} s).')
        if o and m and o['multi_extent_files'] > m['multi_extent_files']:
            lose.append(f'- **{w}**: {o["multi_extent_files"]} files in more than one '
                        f'extent, against {m["multi_extent_files"]} for `mke2fs -d`.')
    lines.append('## Where our layout loses\n')
    if lose:
        lines.append('These statements are what the kernel\'s allocator does on a '
                     'fresh filesystem, which orlov-populate reproduces on purpose: '
                     'Orlov spreads top-level directories over the groups to leave room '
                     'for growth, so a one-shot full traversal of a fresh image pays '
                     'more seeks than a tightly packed image.\n')
        lines.extend(lose)
    else:
        lines.append('Nowhere in this run: orlov-populate was no slower than '
                     '`mke2fs -d` and its image no slower to traverse in the model.')
    lines.append('')
    if notes:
        lines.append('## Notes on this run\n')
        lines.append(notes.rstrip() + '\n')

    # wall time table
    lines.append('## Wall time\n')
    lines.append('Median of the runs (min-max), seconds; peak RSS in MiB (largest over '
                 'the runs); ratio = median / median of `mke2fs -d` in this run.\n')
    lines.append('| workload | tool | runs | median s | min-max s | ratio to mke2fs -d | peak RSS MiB |')
    lines.append('|---|---|---:|---:|---:|---:|---:|')
    table = []
    for w in order:
        for t in TOOLS:
            r = runs.get((w, t))
            if not r:
                if (w, t) in status:
                    lines.append(f'| {w} | {TOOL_LABEL[t]} | 0 | skipped: {status[(w, t)]} | | | |')
                continue
            secs = [s for s, _ in r]
            rss = max(x for _, x in r)
            lines.append(f'| {w} | {TOOL_LABEL[t]} | {len(r)} | {fmt_s(med(w, t))} | '
                         f'{fmt_s(min(secs))}-{fmt_s(max(secs))} | {fmt_r(ratio(w, t))} | '
                         f'{rss/1024:.1f} |')
    lines.append('')

    # layout table
    lines.append('## Layout\n')
    lines.append('groups: groups holding an inode or a block of the tree / groups in the '
                 'image; same-group: fraction of non-directories whose inode is in their '
                 'directory\'s group; dist dir / dist consec: mean group distance between '
                 'a file and its directory / between consecutive files in dump order; '
                 'multi-extent: files whose block list (indirect blocks included) is not '
                 'one contiguous run; model s: modelled cold-cache traversal; ratio: '
                 'against the `mke2fs -d` image.\n')
    lines.append('| workload | tool | entries | groups | same-group | dist dir | dist consec | multi-extent | reads | seeks | model s | ratio |')
    lines.append('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')

    def f3(v):
        return '-' if v is None else f'{v:.3f}'
    for w in order:
        for t in IMAGE_TOOLS:
            m = met.get((w, t))
            if not m:
                continue
            lines.append(f'| {w} | {TOOL_LABEL[t]} | {m["entries"]} | {m["groups_used"]}/{m["groups_total"]} | '
                         f'{f3(m["same_group_frac"])} | {f3(m["mean_dist_dir"])} | '
                         f'{f3(m["mean_dist_consec"])} | {m["multi_extent_files"]} | '
                         f'{m["model_reads"]} | {m["model_seeks"]} | {m["model_seconds"]:.2f} | '
                         f'{fmt_r(mratio(w, t))} |')
    lines.append('')
    lines.append('### Modelled traversal by top-level subtree (top 10 by cost, seconds)\n')
    for w in order:
        for t in IMAGE_TOOLS:
            m = met.get((w, t))
            if not m:
                continue
            parts = ', '.join(f'`{esc(p)}` {c:.2f}' for p, c in m['model_top10'])
            lines.append(f'- {w}, {TOOL_LABEL[t]}: {parts}')
    lines.append('')
    lines.append('## Plots\n')
    lines.append('- [wall time ratio to mke2fs -d](walltime.svg)')
    lines.append('- [modelled traversal seconds](traversal.svg)')
    lines.append('- [modelled traversal ratio to mke2fs -d](traversal-ratio.svg)')
    lines.append('')
    lines.append('## Model\n')
    lines.append('Entries are visited in dump order (depth first, names sorted bytewise). '
                 'For each: the inode-table block holding its inode, then its blocks in '
                 'logical order (indirect blocks where listed). Consecutive blocks merge '
                 'into one read; a block read once stays cached. A read not starting at '
                 'the block after the head costs seek(x) = 1 + 5.17 x + 10.83 sqrt(x) ms '
                 '(x = distance / block count) plus 4.17 ms rotation; every read costs '
                 'its size at 150 MB/s. The head starts at block 0.\n')
    with open(os.path.join(d, 'report.md'), 'w') as f:
        f.write('\n'.join(lines))

    tools_t = [t for t in TOOLS if t != 'mke2fs-empty' and any((w, t) in runs for w in order)]
    svg_bars(os.path.join(d, 'walltime.svg'), 'Wall time, ratio to mke2fs -d (median)',
             'ratio', order, tools_t, ratio, refline=1.0, cap=4.0)
    tools_i = [t for t in IMAGE_TOOLS if any((w, t) in met for w in order)]
    svg_bars(os.path.join(d, 'traversal.svg'), 'Modelled cold-cache traversal (seconds)',
             'seconds', order, tools_i,
             lambda w, t: met[(w, t)]['model_seconds'] if (w, t) in met else None)
    svg_bars(os.path.join(d, 'traversal-ratio.svg'),
             'Modelled cold-cache traversal, ratio to mke2fs -d', 'ratio', order, tools_i,
             mratio, refline=1.0, cap=3.0)

    # terminal table
    print(f'{"workload":<10} {"tool":<33} {"median s":>9} {"ratio":>6} {"RSS MiB":>8} '
          f'{"model s":>9} {"m.ratio":>7}')
    for w in order:
        for t in TOOLS:
            if (w, t) not in runs and (w, t) not in status:
                continue
            m = met.get((w, t))
            rss = max(x for _, x in runs[(w, t)]) / 1024 if (w, t) in runs else None
            ms = '-' if not m else f'{m["model_seconds"]:.2f}'
            rs = '-' if rss is None else f'{rss:.1f}'
            print(f'{w:<10} {TOOL_LABEL[t]:<33} {fmt_s(med(w, t)):>9} {fmt_r(ratio(w, t)):>6} '
                  f'{rs:>8} {ms:>9} '
                  f'{fmt_r(mratio(w, t)):>7}'
                  + (f'  skipped: {status[(w, t)]}' if (w, t) in status and (w, t) not in runs else ''))


def main(argv):
    if len(argv) == 4 and argv[1] == 'metrics':
        json.dump(metrics(argv[2], argv[3]), sys.stdout, indent=1)
        print()
        return 0
    if len(argv) == 3 and argv[1] == 'report':
        report(argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
