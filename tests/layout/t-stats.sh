#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# orlov-layout stats: per-group counters and the spread of top-level
# directories, on an image whose top-level directories fill group 0 and
# spill into group 1 (debugfs allocates next to the parent).
set -eu
. "$(dirname "$0")/lib.sh"

img=$lt_tmp/s.img
lt_data 3000 f >"$lt_tmp/f"
# 8 MiB, 1 KiB blocks, 4 groups of 16 inodes
lt_mkfs "$img" 8M -b 1024 -I 128 -g 2048 -N 64
{
	for i in $(seq -w 1 8); do
		echo "mkdir top$i"
	done
	echo "write $lt_tmp/f /top1/f"
	echo "write $lt_tmp/f /file"
	echo "mkdir top2/sub"
} | lt_debugfs "$img"

lt_run 0 "$ORLOV_LAYOUT" stats "$img"
lt_golden stats.txt "$lt_tmp/out" "stats"
# The summary agrees with dump: directories under / and their groups.
lt_run 0 "$ORLOV_LAYOUT" dump "$img"
tops=$(awk '$4 == "dir" && $1 ~ /^\/[^/]+$/' "$lt_tmp/out" | wc -l)
groups=$(awk '$4 == "dir" && $1 ~ /^\/[^/]+$/ { print $3 }' "$lt_tmp/out" | sort -u | wc -l)
dirs=$(awk '$4 == "dir"' "$lt_tmp/out" | wc -l)
grep -qx "groups=4 dirs=$dirs top_level_dirs=$tops top_level_groups=$groups" \
	"$golden/stats.txt" || lt_fail "summary disagrees with dump ($dirs $tops $groups)"
[ "$groups" -ge 2 ] || lt_fail "test image should use two groups"
exit 0
