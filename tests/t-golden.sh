#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden layouts: a sample tree into small images of several groups; the
# expected orlov-layout dump and allocation trace keep every inode number,
# group and block.  ORLOV_REGEN_GOLDEN=1 rewrites them (review the diff).
. "$(dirname "$0")/lib.sh"

g=$t_here/golden
t_sample_tree "$T_TMP/src"

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
	"$ORLOV_POPULATE" -q --trace "$T_TMP/$name.trace" "$@" "$img" "$T_TMP/src" ||
		t_fail "$name: orlov-populate failed"
	t_fsck "$img"
	path=/
	[ "$name" = 1k-target ] && path=/t/u
	t_verify "$img" "$T_TMP/src" "$path"
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
exit 0
