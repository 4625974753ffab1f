#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A tree 20,000 directories deep, copied, dumped and verified with a
# 1 MiB stack and 128 file descriptors: the walks keep their own stacks
# and reopen outer directories as ".." of their children, so neither the
# depth of recursion nor the number of open directories grows with it.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || t_skip "python3 not found"

depth=20000
python3 - "$T_TMP/src" $depth <<'PY' || t_fail "making the tree"
import os, sys
os.mkdir(sys.argv[1])
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(int(sys.argv[2])):
    os.mkdir('d', dir_fd=fd)
    nfd = os.open('d', os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd
f = os.open('leaf', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(f, b'bottom\n')
os.close(f)
os.close(fd)
PY
img=$T_TMP/img
t_mkimage "$img" 40M -t ext2 -b 1024 -N 20100

small() { ( ulimit -s 1024 && ulimit -n 128 && "$@" ); }
small "$ORLOV_POPULATE" -q "$img" "$T_TMP/src" || t_fail "populate"
t_fsck "$img"
small "$ORLOV_LAYOUT" verify $t_clamp "$img" "$T_TMP/src" >"$T_TMP/verify" ||
	{ cat "$T_TMP/verify" >&2; t_fail "verify"; }
grep -qx "verified=$((depth + 2)) mismatches=0" "$T_TMP/verify" ||
	t_fail "verify: $(cat "$T_TMP/verify")"
small "$ORLOV_LAYOUT" dump "$img" >"$T_TMP/dump" || t_fail "dump"
[ "$(wc -l <"$T_TMP/dump")" = $((depth + 3)) ] || t_fail "dump: $(wc -l <"$T_TMP/dump") lines"
awk -v n=$depth '$1 ~ /\/leaf$/ && length($1) == 2 * n + 5 { f = 1 }
	END { exit !f }' "$T_TMP/dump" || t_fail "dump: no leaf at the bottom"
small "$ORLOV_LAYOUT" diff "$img" "$img" >"$T_TMP/diff" || t_fail "diff"
echo "$depth levels: copied, checked, verified, dumped and diffed in 1 MiB of stack"
