#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A source directory with the TOPDIR flag (chattr +T) keeps it in the image,
# and its subdirectories are spread as top-level ones (orlov-top), while a
# plain directory's stay near it (orlov-near).
. "$(dirname "$0")/lib.sh"

mkdir -p "$T_TMP/src/top/a" "$T_TMP/src/top/b" "$T_TMP/src/plain/a" "$T_TMP/src/plain/b"
command -v chattr >/dev/null 2>&1 && chattr +T "$T_TMP/src/top" 2>/dev/null ||
	t_skip "the filesystem of $T_TMP cannot set the TOPDIR flag"
t_mkimage "$T_TMP/img" 8M -t ext2 -b 1024 -g 1024 -N 512
"$ORLOV_POPULATE" -q --trace "$T_TMP/trace" "$T_TMP/img" "$T_TMP/src" || t_fail populate
t_fsck "$T_TMP/img"
debugfs -R "stat /top" "$T_TMP/img" 2>/dev/null | grep -q "Flags: 0x20000" ||
	t_fail "/top lost its TOPDIR flag"
for d in a b; do
	grep -q "name=$d mode=dir branch=orlov-top .* path=top/$d\$" "$T_TMP/trace" ||
		t_fail "top/$d not placed as a top-level directory"
	grep -q "name=$d mode=dir branch=orlov-near .* path=plain/$d\$" "$T_TMP/trace" ||
		t_fail "plain/$d not placed near its parent"
done
echo "TOPDIR children spread, plain children near"
