#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# An ext4 image of more than 2^32 blocks (64bit block numbers): 24 TiB of
# 4 KiB blocks, 196,608 groups, a sparse file on /dev/shm (a file past 16
# TiB does not fit on an ext4 /tmp; tmpfs holds it and only what is
# written takes memory: about 400 MiB a copy here).  Forty directories at the root, each in
# the flex group its name hashes to (a third of the flex groups lie past
# block 2^32, and 10 of the 40 names hash there), each with a file whose
# attributes need a block and a file of five extents (one more than the
# inode holds: an extent-tree leaf).  The tool fills it with and without
# delayed allocation; e2fsck -fn is clean, the contents read back, and
# directory blocks, attribute blocks and extent-tree leaves lie past
# block 2^32 (and data below it too).
# Where the kernel puts them is checked in QEMU by
# tests/kernel/cases.list's e4k-64bit-26t (t-crosscheck-debian.sh).
# Skipped, with the reason, when /dev/shm is missing, no tmpfs, or short
# of room.
. "$(dirname "$0")/lib.sh"

shm=${ORLOV_SHM:-/dev/shm}
[ -d "$shm" ] && [ -w "$shm" ] || t_skip "no writable $shm"
[ "$(stat -f -c %T "$shm")" = tmpfs ] || t_skip "$shm is not a tmpfs"
avail=$(df -Pm "$shm" | awk 'NR == 2 { print $4 }')
# the base image and one filled copy at a time, 400 MiB each, and a
# margin for what the commit writes and reserves
[ "${avail:-0}" -ge 1536 ] || t_skip "$shm has ${avail:-?} MiB free, this needs 1536"
S=$(mktemp -d "$shm/orlov-t-ext4-64bit.XXXXXX") || t_skip "cannot create a directory in $shm"
trap 'rm -rf "$T_TMP" "$S"' EXIT
truncate -s 24T "$S/base" 2>/dev/null || t_skip "$shm cannot hold a sparse file of 24 TiB"
rm -f "$S/base"

# the tree: 40 directories at the root, each with an attribute too big
# for a 128-byte inode, five islands of 4 KiB (holes between, also on a
# source filesystem of 4 KiB blocks), a subdirectory and a small file
src=$T_TMP/src
i=0
while [ $i -lt 40 ]; do
	d=$src/d$i
	mkdir -p "$d/sub" || t_fail "mkdir $d"
	printf 'file %s\n' $i >"$d/sub/small"
	printf 'attributes %s\n' $i >"$d/attr"
	setfattr -n user.big -v "$(printf 'v%0300d' $i)" "$d/attr" 2>/dev/null ||
		t_skip "cannot set user.* attributes in $T_TMP"
	: >"$d/islands"
	for k in 0 3 9 20 42; do
		printf 'island %s' $k | dd of="$d/islands" bs=4096 seek=$k \
			conv=notrunc status=none
	done
	i=$((i + 1))
done
printf 'at the root\n' >"$src/rootfile"
t_pin_times "$src"

# mke2fs -t ext4 (Debian 12's features, 64bit among them) with few
# inodes (32 a group) and lazy inode tables and journal: nothing but the
# metadata written
# metadata written (not t_mkimage: mke2fs keeps only the last -E, and the
# hash seed must be pinned, or the directories go elsewhere each run)
mke2fs -q -F -t ext4 -b 4096 -I 128 -N 4096 -U $T_UUID \
	-E hash_seed=$T_SEED,root_owner=0:0,lazy_itable_init=1,lazy_journal_init=1 \
	"$S/base" 24T >/dev/null 2>&1 || t_fail "mke2fs"
dumpe2fs -h "$S/base" 2>/dev/null | grep -q '^Filesystem features:.* 64bit' ||
	t_fail "mke2fs made no 64bit image"

# past2 IMAGE: "PATHS HIGH LOW" from orlov-layout dump: paths with a
# block (data, tree, attributes) at or past 2^32, and with one below
past2() {
	"$ORLOV_LAYOUT" dump "$1" >"$T_TMP/dump" || t_fail "$2: orlov-layout dump"
	awk '{
		hi = lo = 0
		for (f = 2; f <= NF; f++) {
			if ($f !~ /^(blocks|xattr)=/) continue
			v = $f; sub(/^[a-z]+=/, "", v)
			n = split(v, r, /[,-]/)
			for (k = 1; k <= n; k++)
				if (r[k] ~ /^[0-9]+$/) {
					if (r[k] + 0 >= 4294967296) hi = 1; else lo = 1
				}
		}
		p++; H += hi; L += lo
	} END { print p + 0, H + 0, L + 0 }' "$T_TMP/dump"
}

# high NUMBERS...: at least one of NUMBERS (ranges a-b too) is at or
# past 2^32
high() {
	echo "$*" | tr ' ,-' '\n\n\n' |
		awk '/^[0-9]+$/ && $1 + 0 >= 4294967296 { f = 1 } END { exit !f }'
}

for mode in delalloc nodelalloc; do
	img=$S/$mode.img
	cp --sparse=always "$S/base" "$img" || t_fail "cp"
	opt=--delalloc
	[ $mode = nodelalloc ] && opt=--no-delalloc
	"$ORLOV_POPULATE" -q --driver ext4 $opt --cpus 2 "$img" "$src" \
		>"$T_TMP/out" 2>&1 || { cat "$T_TMP/out" >&2; t_fail "$mode: orlov-populate failed"; }
	t_fsck "$img"
	t_verify "$img" "$src" /
	# shellcheck disable=SC2046 # three numbers
	set -- $(past2 "$img" $mode)
	[ $# = 3 ] || t_fail "$mode: no figures from the dump"
	echo "$mode: $1 paths, $2 with a block past 2^32, $3 with one below"
	[ "$2" -ge 20 ] || t_fail "$mode: only $2 paths with a block past 2^32"
	[ "$3" -ge 20 ] || t_fail "$mode: only $3 paths with a block below 2^32"
	# what lies past 2^32, one kind at a time, from one debugfs run (each
	# opening reads 196,608 group descriptors): per directory its
	# blocks, its attr file's attribute block (File ACL) and its islands
	# file's extent-tree leaf (ex: the index entry at level 0 of 1)
	i=0
	while [ $i -lt 40 ]; do
		echo "blocks /d$i"
		echo "stat /d$i/attr"
		echo "ex /d$i/islands"
		i=$((i + 1))
	done >"$T_TMP/cmds"
	debugfs -f "$T_TMP/cmds" "$img" >"$T_TMP/kinds" 2>/dev/null ||
		t_fail "$mode: debugfs"
	awk -v big=4294967296 '
	function high(s,   n, r, k) {
		n = split(s, r, /[ ,-]+/)
		for (k = 1; k <= n; k++) if (r[k] ~ /^[0-9]+$/ && r[k] + 0 >= big) return 1
		return 0
	}
	/^debugfs: / { cmd = $2; path = $3; next }
	cmd == "blocks" && /^[0-9]/ { d[path] = 1; if (high($0)) D++ }
	cmd == "stat" && /File ACL: / {
		x = $0; sub(/.*File ACL: /, "", x); sub(/ .*/, "", x)
		if (x + 0 > 0) { a[path] = 1; if (high(x)) X++ }
	}
	cmd == "ex" && $1 == "0/" && $2 == "1" { l[path] = 1; if (high($(NF - 1))) L++ }
	END {
		for (p in d) nd++; for (p in a) na++; for (p in l) nl++
		print nd + 0, na + 0, nl + 0, D + 0, X + 0, L + 0
	}' "$T_TMP/kinds" >"$T_TMP/counts"
	read -r nd na nl dirs xattrs leaves <"$T_TMP/counts"
	[ "$nd" = 40 ] && [ "$na" = 40 ] && [ "$nl" = 40 ] || {
		cat "$T_TMP/kinds" >&2
		t_fail "$mode: of 40, $nd directories with blocks, $na attr files with an attribute block, $nl islands files with an extent-tree leaf"
	}
	echo "$mode: past 2^32: $dirs of 40 directories' blocks, $xattrs attribute blocks, $leaves extent-tree leaves"
	[ $dirs -gt 0 ] && [ $xattrs -gt 0 ] && [ $leaves -gt 0 ] ||
		t_fail "$mode: not every kind of block past 2^32"
	rm -f "$img"
done
