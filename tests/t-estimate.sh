#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The check pass's count of the blocks a tree needs: attribute blocks the
# kernel would share are counted once (no refusal of a tree that fits),
# and directories take the blocks their names fill (a tree that does not
# fit is refused by the check, not half way through writing).
. "$(dirname "$0")/lib.sh"

img=$T_TMP/img
mkdir "$T_TMP/shared" "$T_TMP/long"
if setfattr -n user.t -v 1 "$T_TMP/shared" 2>/dev/null; then
	# 1,000 files with the same attribute: one block, on 874 free ones
	for i in $(seq 1 1000); do
		: >"$T_TMP/shared/f$i"
		setfattr -n user.tag -v same "$T_TMP/shared/f$i"
	done
	t_mkimage "$img" 1M -t ext2 -b 1024 -N 1024
	"$ORLOV_POPULATE" -q "$img" "$T_TMP/shared" ||
		t_fail "1,000 files sharing one attribute block refused"
	t_fsck "$img"
	t_verify "$img" "$T_TMP/shared"
	echo "shared attributes: 1,000 files fit in 874 free blocks"
else
	echo "shared attributes: not checked (no user xattrs in $T_TMP)"
fi

# 3,000 names of 204 bytes in one directory: 625 blocks, on 618 free ones
n=$(printf 'n%.0s' $(seq 1 200))
for i in $(seq 1000 3999); do : >"$T_TMP/long/$n$i"; done
t_mkimage "$img" 1M -t ext2 -b 1024 -N 3072
dumpe2fs "$img" 2>/dev/null >"$T_TMP/before"
"$ORLOV_POPULATE" "$img" "$T_TMP/long" 2>"$T_TMP/err" && t_fail "long names: not refused"
grep -qx "orlov-populate: Not enough free blocks in the image for the source tree while checking $T_TMP/long: it needs [0-9]* blocks of 1024 bytes, $img has [0-9]* free" \
	"$T_TMP/err" || { cat "$T_TMP/err" >&2; t_fail "long names: not refused by the check"; }
dumpe2fs "$img" 2>/dev/null | cmp -s - "$T_TMP/before" || t_fail "long names: image changed"
echo "directory blocks: refused by the check: $(cat "$T_TMP/err")"

# Holes are not counted: a file of 64 MiB with one 1 KiB block of data
# fits in a 4 MiB image (the check asks for the data ranges of a file the
# host allocated less than its size), a dense one of 5 MiB does not (a
# file allocated whole is counted whole, without asking).
mkdir "$T_TMP/holes" "$T_TMP/dense"
printf data | dd of="$T_TMP/holes/s" bs=1024 seek=30000 conv=notrunc 2>/dev/null &&
	truncate -s 64M "$T_TMP/holes/s" || t_fail "holes: sparse file"
head -c 5242880 /dev/urandom >"$T_TMP/dense/d" || t_fail "dense file"
t_mkimage "$img" 4M -t ext2 -b 1024 -N 64
"$ORLOV_POPULATE" -q "$img" "$T_TMP/holes" 2>"$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "holes: a 64 MiB file of one block refused"; }
t_fsck "$img"
t_verify "$img" "$T_TMP/holes"
t_mkimage "$img" 4M -t ext2 -b 1024 -N 64
"$ORLOV_POPULATE" "$img" "$T_TMP/dense" 2>"$T_TMP/err" && t_fail "dense: 5 MiB in 4 MiB taken"
grep -q "^orlov-populate: Not enough free blocks in the image for the source tree while checking" "$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "dense: not refused by the check"; }
echo "holes: a 64 MiB file of one block fits in 4 MiB; 5 MiB of data is refused by the check"
