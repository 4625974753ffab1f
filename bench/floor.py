#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The benchmark's floor: the bytes of every regular file of SRC copied
into one file RAW, nothing else (bench/README.md).

  floor.py SRC RAW

Files without holes go through `find SRC -type f | sort | xargs cat`
(C all the way, in sorted path order); the sparse ones (allocated less
than their size, by find's %S) are appended after them, their data ranges
only (SEEK_DATA / SEEK_HOLE, copy_file_range), so a hole stays a hole.
RAW is fsynced at the end.
"""
import os
import subprocess
import sys


def main(src, raw):
    out = os.open(raw, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    found = subprocess.run(['find', src, '-type', 'f', '-printf', r'%S %s %p\0'],
                           stdout=subprocess.PIPE, check=True).stdout
    dense, sparse = [], []
    for rec in found.split(b'\0'):
        if not rec:
            continue
        s, size, path = rec.split(b' ', 2)
        try:
            sp = float(s)
        except ValueError:
            sp = 1.0
        if int(size) > 0 and sp < 0.99:
            sparse.append(path)
        else:
            dense.append(path)
    dense.sort()
    sparse.sort()
    subprocess.run(['xargs', '-0', '-r', 'cat'], input=b'\0'.join(dense),
                   stdout=out, check=True)
    pos = os.lseek(out, 0, os.SEEK_END)
    for path in sparse:
        fd = os.open(path, os.O_RDONLY)
        size = os.fstat(fd).st_size
        off = 0
        while off < size:
            try:
                ds = os.lseek(fd, off, os.SEEK_DATA)
            except OSError:     # ENXIO: only a hole is left
                break
            de = os.lseek(fd, ds, os.SEEK_HOLE)
            o = ds
            while o < de:
                n = os.copy_file_range(fd, out, de - o, o, pos + o)
                if n <= 0:
                    raise OSError(f'copy_file_range: {path!r} stopped at {o}')
                o += n
            off = de
        os.close(fd)
        pos += size
    os.ftruncate(out, pos)
    os.fsync(out)
    os.close(out)
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
