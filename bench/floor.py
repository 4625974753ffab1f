#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The benchmark's floor: the bytes of every regular file of SRC copied
into one file RAW, with the least metadata and the fewest system calls
that still read the whole tree (bench/README.md).

  floor.py SRC RAW

The tree is walked once (scandir, no sort: no tool can do with less);
each regular file is lstat'ed and, unless empty, opened, read and
closed.  The bytes go to
RAW in writes of 8 MiB, back to back, no padding to blocks: one file,
one growing extent, no inode or directory of its own for any of them.
A sparse file (allocated less than its size) gives its data ranges only
(SEEK_DATA / SEEK_HOLE, copy_file_range), so a hole stays a hole.  RAW is
fsynced at the end, as every tool's image is.  Symlinks are not followed.
"""
import os
import sys

CHUNK = 8 << 20


def walk(top):
    """Regular files below @top: (path, lstat result), depth first, with
    the walk's own stack (no recursion limit), empty ones left out: they
    have no bytes to copy."""
    stack = [top]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    if st.st_size:
                        yield e.path, st


def copy_sparse(fd, size, out, pos):
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
                raise OSError('copy_file_range stopped')
            o += n
        off = de


def write_all(out, parts):
    b = memoryview(b''.join(parts))
    while b:
        b = b[os.write(out, b):]


def main(src, raw):
    out = os.open(raw, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    buf, held, pos = [], 0, 0
    for path, st in walk(src):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        size = st.st_size
        if st.st_blocks * 512 < size:
            # write out what is held, then the ranges at their offsets
            if buf:
                write_all(out, buf)
                buf, held = [], 0
            copy_sparse(fd, size, out, pos)
            os.close(fd)
            pos += size
            os.lseek(out, pos, os.SEEK_SET)
            continue
        want = size
        while True:
            b = os.read(fd, min(want, CHUNK) if want > 0 else CHUNK)
            if not b:
                break
            buf.append(b)
            held += len(b)
            pos += len(b)
            want -= len(b)
            if held >= CHUNK:
                write_all(out, buf)
                buf, held = [], 0
            if want == 0:
                break       # all of st_size: no read for the EOF
        os.close(fd)
    if buf:
        write_all(out, buf)
    os.ftruncate(out, pos)
    os.fsync(out)
    os.close(out)
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
