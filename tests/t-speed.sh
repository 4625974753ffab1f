#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What keeps a run fast, in counts that do not depend on the machine's
# load: the data of a directory's small files reaches the image in a few
# writes, not one per file (ext2; ext4 through the delayed writeback).
# The growth of one directory's time with its names is a benchmark, not a
# test (CPU time moves with the load: k = 1.35 in a clean-clone run beside
# QEMU guests, 1.01 alone): make bench's empty-big workload reports it.
. "$(dirname "$0")/lib.sh"

src=$T_TMP/src
mkdir -p "$src/d" || t_fail "mkdir"
i=0
while [ $i -lt 300 ]; do
	head -c $((i % 3000 + 1)) /dev/zero | tr '\0' x >"$src/d/f$i"
	i=$((i + 1))
done

# ops FS ARGS...: image writes before the commit for the tree
ops() {
	t_mkimage "$T_TMP/img" 16M "$@"
	ORLOV_FAULT=count "$ORLOV_POPULATE" "$T_TMP/img" "$src" >/dev/null 2>"$T_TMP/count" ||
		{ cat "$T_TMP/count" >&2; t_fail "populate $*"; }
	t_fsck "$T_TMP/img"
	t_verify "$T_TMP/img" "$src"
	sed -n 's/.*, commit from \([0-9]*\)$/\1/p' "$T_TMP/count"
}
for fs in ext2 ext4; do
	n=$(ops -t $fs -b 4096 -N 512)
	[ -n "$n" ] || t_fail "$fs: no operation count"
	echo "$fs: 300 small files, $n image writes before the commit"
	# one per file was 300 and more
	[ "$n" -le 30 ] || t_fail "$fs: $n writes for 300 small files"
done
