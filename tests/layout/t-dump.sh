#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# orlov-layout dump on an image built by debugfs: every file type, a
# sparse file, a file needing double-indirect blocks (1 KiB blocks), a
# hard link, names needing escapes, an xattr block, inodes in two groups.
# The output (inode numbers included) must equal the golden files.
set -eu
. "$(dirname "$0")/lib.sh"

img=$lt_tmp/dump.img
lt_data 300000 big >"$lt_tmp/big"       # 12 + 256 + 25 blocks: DIND
lt_data 2000 small >"$lt_tmp/small"
: >"$lt_tmp/empty"
# block 0 and block 97 only, via an IND block
{ printf abc; head -c 99997 /dev/zero; printf xyz; } >"$lt_tmp/sparse"
slow=$(printf 's%.0s' $(seq 1 100))    # too long for i_block: slow symlink

lt_mkfs "$img" 8M -b 1024 -I 128 -g 2048 -N 128
{
	echo "mkdir a"
	echo "mkdir a/b"
	echo "mkdir z"
	echo "write $lt_tmp/big /a/big"
	echo "write $lt_tmp/sparse \"/a/sp arse\""
	echo "write $lt_tmp/small /z/small"
	echo "ea_set /z/small user.colour blue"
	echo "symlink /a/fast target"
	echo "symlink /a/slow $slow"
	echo "cd /a"
	echo "mknod fifo p"
	echo "mknod chr c 4 5"
	echo "mknod blk b 8 1"
	echo "cd /"
	echo "ln /a/big /hard"
	echo "mkdir p%c"
	# 32 inodes per group: these push the last ones into group 1
	for i in $(seq -w 1 24); do
		echo "write $lt_tmp/empty /z/e$i"
	done
	echo "mkdir z/last"
} | lt_debugfs "$img"

lt_run 0 "$ORLOV_LAYOUT" dump "$img"
lt_golden dump-all.txt "$lt_tmp/out" "dump"

lt_run 0 "$ORLOV_LAYOUT" dump "$img" /a
lt_golden dump-a.txt "$lt_tmp/out" "dump /a"

# PATH is normalized and may name a non-directory.
lt_run 0 "$ORLOV_LAYOUT" dump "$img" a//big/
grep '^/a/big ' "$golden/dump-a.txt" >"$lt_tmp/want"
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "dump a//big/"

# Cross-check the big file with debugfs: the same blocks (as a set; the
# order of `blocks` is not the dump's), and the IND/DIND ones from `stat`
# each right before the blocks they map.
ino=$(awk '$1 == "/a/big" { sub("ino=", "", $2); print $2 }' "$golden/dump-all.txt")
list=$(awk '$1 == "/a/big" { sub("blocks=", "", $5); print $5 }' "$golden/dump-all.txt")
expand() { # a-b,c -> one number a line
	tr ',' '\n' | awk -F- '{ if (NF == 2) for (i = $1; i <= $2; i++) print i; else print $1 }'
}
printf '%s\n' "$list" | expand >"$lt_tmp/dump-blocks"
debugfs -R "blocks <$ino>" "$img" 2>/dev/null | tr ' ' '\n' | grep . \
	| sort -n >"$lt_tmp/dfs-blocks"
sort -n "$lt_tmp/dump-blocks" | lt_same_text "$lt_tmp/dfs-blocks" /dev/stdin \
	"block set of /a/big"
[ "$(wc -l <"$lt_tmp/dump-blocks")" = 296 ] || lt_fail "296 blocks expected"
# stat's "(IND):x, (12-267):a-b, (DIND):y, (IND):z, ..." in logical order
# is exactly the dump's order.
debugfs -R "stat <$ino>" "$img" 2>/dev/null | sed -n '/^BLOCKS:/{n;p}' \
	| tr ',' '\n' | sed 's/^ *([^)]*)://' | expand >"$lt_tmp/stat-blocks"
lt_same_text "$lt_tmp/stat-blocks" "$lt_tmp/dump-blocks" "stat order of /a/big"
debugfs -R "stat <$ino>" "$img" 2>/dev/null | grep -q '(DIND)' ||
	lt_fail "/a/big has no DIND block"

# Errors: exit 2 and one com_err line naming what failed.
lt_run 2 "$ORLOV_LAYOUT" dump "$img" /nonexistent
grep -q '^orlov-layout: .* while looking up /nonexistent$' "$lt_tmp/err" ||
	lt_fail "no error line for a missing PATH: $(cat "$lt_tmp/err")"
lt_run 2 "$ORLOV_LAYOUT" dump "$lt_tmp/no-such.img"
grep -q '^orlov-layout: .* while opening image ' "$lt_tmp/err" ||
	lt_fail "no error line for a missing image: $(cat "$lt_tmp/err")"
head -c 65536 /dev/zero >"$lt_tmp/zero.img"
lt_run 2 "$ORLOV_LAYOUT" dump "$lt_tmp/zero.img"
exit 0
