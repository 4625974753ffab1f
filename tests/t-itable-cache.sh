#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A tree into a directory debugfs made (inode 12), whose inode-table block
# the first new inodes share: the commit writes the new inodes in one run
# of table blocks, then the existing ones (the target's link count) into
# a block read again.  libext2fs 1.47.0's unix cache gave that read a
# stale copy from before the run (clean blocks survived its invalidation),
# and the new directories' inodes were written back as zeros: e2fsck
# found /sub's entries pointing at unused inodes.  Every commit path.
. "$(dirname "$0")/lib.sh"

src=$T_TMP/src
mkdir -p "$src/a" "$src/z"
for i in $(seq 1 28); do echo x >"$src/z/f$i"; done
t_pin_times "$src"
for mode in "" --in-place --atomic ext3 ext4; do
	img=$T_TMP/img$mode
	case $mode in
	ext3|ext4) t_mkimage "$img" 4M -t $mode -b 1024 -I 128; set -- ;;
	*) t_mkimage "$img" 4M -t ext2 -b 1024 -I 128; set -- $mode ;;
	esac
	debugfs -w -R "mkdir /sub" "$img" >/dev/null 2>&1 || t_fail "debugfs mkdir"
	"$ORLOV_POPULATE" -q "$@" -t /sub "$img" "$src" || t_fail "${mode:-default}: run failed"
	t_fsck "$img"
	t_verify "$img" "$src/z" /sub/z
done
