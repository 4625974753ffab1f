#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# 100,000 entries in one directory: adding a name must not rescan the
# whole directory each time (mke2fs -d 1.47.0 needs over two minutes).
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
