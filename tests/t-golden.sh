#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden layouts: a sample tree into small images of several groups; the
# expected orlov-layout dump and allocation trace keep every inode number,
# group and block.  ORLOV_REGEN_GOLDEN=1 rewrites them (review the diff).
. "$(dirname "$0")/lib.sh"

g=$t_here/golden
t_sample_tree "$T_TMP/src"
# for the ext4 cases also a directory of 300 names: an htree of 1 KiB blocks
cp -a "$T_TMP/src" "$T_TMP/src4"
t_many_names "$T_TMP/src4/many"
t_pin_times "$T_TMP/src4"

# case NAME SIZE MKE2FS-OPTIONS -- ORLOV-POPULATE-OPTIONS
run_case() {
	name=$1 size=$2
	shift 2
	mk=
	while [ "$1" != "--" ]; do mk="$mk $1"; shift; done
	shift
	img=$T_TMP/$name.img
	# shellcheck disable=SC2086
	t_mkimage "$img" "$size" $mk
	if [ "$name" = 1k-target ]; then
		debugfs -w -R "mkdir /t" "$img" >/dev/null 2>&1
		debugfs -w -R "mkdir /t/u" "$img" >/dev/null 2>&1
		debugfs -w -R "write $T_TMP/src/usr/lib/big /t/existing" "$img" >/dev/null 2>&1
	fi
	src=$T_TMP/src
	case $name in *ext4*) src=$T_TMP/src4 ;; esac
	"$ORLOV_POPULATE" -q --trace "$T_TMP/$name.trace" "$@" "$img" "$src" ||
		t_fail "$name: orlov-populate failed"
	t_fsck "$img"
	path=/
	[ "$name" = 1k-target ] && path=/t/u
	t_verify "$img" "$src" "$path"
	"$ORLOV_LAYOUT" dump "$img" >"$T_TMP/$name.dump" || t_fail "$name: dump"
	for kind in dump trace; do
		if [ -n "${ORLOV_REGEN_GOLDEN:-}" ]; then
			cp "$T_TMP/$name.$kind" "$g/$name.$kind"
		elif ! diff -u "$g/$name.$kind" "$T_TMP/$name.$kind" >&2; then
			t_fail "$name: $kind differs from tests/golden/$name.$kind"
		fi
	done
	echo "$name: ok"
}

run_case 1k-8groups 8M -t ext2 -b 1024 -g 1024 -N 512 -I 128 --
run_case 1k-oldalloc 8M -t ext2 -b 1024 -g 1024 -N 512 -I 128 -- --policy oldalloc
run_case 1k-random 8M -t ext2 -b 1024 -g 1024 -N 512 -I 128 -- --topdir random --seed 7
run_case 1k-colour 8M -t ext2 -b 1024 -g 1024 -N 512 -I 256 -- --block-colour 5
run_case 1k-target 8M -t ext2 -b 1024 -g 1024 -N 512 -I 128 -- --target /t/u
run_case 4k-ext3 64M -t ext3 -b 4096 -g 2048 -N 1024 -I 256 --
run_case 2k-tight 1M -t ext2 -b 2048 -g 256 -N 64 -I 128 -O ^resize_inode --
# the ext4 driver: mballoc, htree, attributes in 256-byte inodes; with 16
# groups mb_optimize_scan's lists
run_case 1k-ext4 8M -t ext2 -b 1024 -g 1024 -N 512 -I 256 -- --driver ext4 --cpus 2
run_case 1k-ext4-16g 16M -t ext2 -b 1024 -g 1024 -N 512 -I 128 -- --driver ext4 --cpus 2 --block-colour 3
run_case 1k-ext4-delalloc 8M -t ext2 -b 1024 -g 1024 -N 512 -I 256 -- --driver ext4 --delalloc --cpus 2
exit 0
