#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# 100,000 entries in one directory: adding a name must not rescan the
# whole directory each time (mke2fs -d 1.47.0 needs over two minutes);
# nor must looking a name up in a directory the image already has (the
# target, or one merged into), which the write pass did once per name
# over the directory as it grew: 50,000 names at the root took 14 s.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T_TMP/src/d"
(cd "$T_TMP/src/d" && seq -w 0 99999 | sed 's/^/entry-/' | xargs touch) ||
	t_fail "making the source"
t_mkimage "$T_TMP/img" 256M -t ext2 -b 1024 -N 120000
start=$(date +%s)
"$ORLOV_POPULATE" -q "$T_TMP/img" "$T_TMP/src" || t_fail "populate"
secs=$(( $(date +%s) - start ))
echo "100000 entries in $secs s"
# Generous for sanitizer builds and a loaded machine; quadratic takes minutes.
[ "$secs" -le 60 ] || t_fail "took $secs s"
t_fsck "$T_TMP/img"
t_verify "$T_TMP/img" "$T_TMP/src"
n=$(debugfs -R "ls -p /d" "$T_TMP/img" 2>/dev/null | grep -c '/entry-')
[ "$n" = 100000 ] || t_fail "$n entries in /d"

# 100,000 names at the top of an ext4 image (into its root, which it
# has), then 20,000 more merged into that root
mkdir -p "$T_TMP/top" "$T_TMP/more"
(cd "$T_TMP/top" && seq -w 0 99999 | sed 's/^/t-/' | xargs touch) &&
	(cd "$T_TMP/more" && seq -w 0 19999 | sed 's/^/m-/' | xargs touch) ||
	t_fail "making the sources"
t_mkimage "$T_TMP/img4" 512M -t ext4 -N 130000
for src in top more; do
	start=$(date +%s)
	"$ORLOV_POPULATE" -q "$T_TMP/img4" "$T_TMP/$src" || t_fail "populate $src"
	secs=$(( $(date +%s) - start ))
	echo "$src: into the root in $secs s"
	[ "$secs" -le 20 ] || t_fail "$src: into the root took $secs s"
done
t_fsck "$T_TMP/img4"
n=$(debugfs -R "ls -p /" "$T_TMP/img4" 2>/dev/null | grep -c '/[tm]-')
[ "$n" = 120000 ] || t_fail "$n entries in /"
