#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Fills an existing ext2 image from a directory tree with a debugfs script:
# the benchmark's "debugfs write" tool (bench/README.md).
#
# usage: debugfs-write.sh [--script-only] IMAGE SRC
#
# The script is generated from SRC, depth first with names sorted bytewise:
# for each directory `cd` into it, then for each entry `write` (regular
# file), `symlink` (symbolic link) or `mkdir` (directory); then the
# subdirectories.  debugfs's write takes a name in the current directory
# (it links the name as given), so the script cds into each directory.
# It is run with `debugfs -w -f SCRIPT IMAGE`; debugfs echoes each command,
# so the number of "debugfs: " lines on stdout is the progress.
# Entries that debugfs cannot express are left out with a warning on
# stderr: names with a double quote or a newline, and anything other than
# a directory, a regular file or a symlink.  Modes, owners and times are
# what debugfs gives (write copies the mode; times are now).
# --script-only prints the script instead of running it.
set -u

script_only=0
[ "${1:-}" = --script-only ] && { script_only=1; shift; }
[ $# = 2 ] || { sed -n '5p' "$0" | sed 's/^# //' >&2; exit 2; }
img=$1
src=$(cd "$2" && pwd) || exit 1
PATH=$PATH:/usr/sbin:/sbin

gen() {
	python3 - "$src" <<'EOF'
import os, stat, sys
src = os.fsencode(sys.argv[1])
out = sys.stdout.buffer
skipped = 0

def bad(name):
    return b'"' in name or b'\n' in name

def q(b):
    return b'"' + b + b'"'

def walk(rel):
    global skipped
    d = src + rel
    try:
        names = sorted(os.listdir(d))
    except OSError as e:
        print('debugfs-write.sh: %s' % e, file=sys.stderr)
        return
    out.write(b'cd ' + q(rel or b'/') + b'\n')
    subdirs = []
    for n in names:
        p = d + b'/' + n
        if bad(n) or bad(d):
            skipped += 1
            continue
        st = os.lstat(p)
        if stat.S_ISDIR(st.st_mode):
            out.write(b'mkdir ' + q(n) + b'\n')
            subdirs.append(n)
        elif stat.S_ISREG(st.st_mode):
            out.write(b'write ' + q(p) + b' ' + q(n) + b'\n')
        elif stat.S_ISLNK(st.st_mode):
            t = os.readlink(p)
            if bad(t):
                skipped += 1
                continue
            out.write(b'symlink ' + q(n) + b' ' + q(t) + b'\n')
        else:
            skipped += 1
    for n in subdirs:
        walk(rel + b'/' + n)

walk(b'')
if skipped:
    print('debugfs-write.sh: %d entries left out (quote or newline in the name, '
          'or not a directory, file or symlink)' % skipped, file=sys.stderr)
EOF
}

if [ $script_only = 1 ]; then
	gen
	exit
fi
tmp=$(mktemp "${TMPDIR:-/tmp}/debugfs-write.XXXXXX") || exit 1
trap 'rm -f "$tmp" "$tmp.err"' EXIT
trap 'exit 143' TERM INT
gen >"$tmp" || exit 1
# debugfs exits 0 even when a command fails; its errors go to stderr,
# which is kept, and a failure of any command is a failure of the tool.
debugfs -w -f "$tmp" "$img" 2>"$tmp.err"
rc=$?
if [ -s "$tmp.err" ] && grep -v '^debugfs [0-9]' "$tmp.err" | grep -q .; then
	cat "$tmp.err" >&2
	rm -f "$tmp.err"
	exit 1
fi
rm -f "$tmp.err"
exit $rc
