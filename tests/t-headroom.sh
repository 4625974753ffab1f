#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --create auto+N% leaves room to live in: the inodes get the headroom the
# blocks get.  A tree of many small files needs far more inodes than
# mke2fs's ratio gives its few blocks; auto+10% must still leave at least
# 10 % of the inodes free (Free inodes / Inode count), and --dry-run --json
# must say so before anything is made.
. "$(dirname "$0")/lib.sh"

src=$T_TMP/many
i=0
while [ $i -lt 40 ]; do
	mkdir -p "$src/d$i"
	j=0
	while [ $j -lt 100 ]; do
		: >"$src/d$i/f$j"
		j=$((j + 1))
	done
	i=$((i + 1))
done
printf 'x' >"$src/d0/one-byte"

# free_pct IMAGE: the share of its inodes free, in percent (integer part)
free_pct() {
	dumpe2fs -h "$1" 2>/dev/null | awk -F: '
		/^Inode count/ { n = $2 } /^Free inodes/ { f = $2 }
		END { if (n > 0) print int(f * 100 / n); else print -1 }'
}
for fs in ext2 ext4; do
	for m in 10 25; do
		img=$T_TMP/$fs-$m.img
		"$ORLOV_POPULATE" -q --create auto+$m% --fs-type $fs "$img" "$src" ||
			t_fail "$fs: --create auto+$m%"
		t_fsck "$img"
		p=$(free_pct "$img")
		[ "$p" -ge $m ] ||
			t_fail "$fs: --create auto+$m%: $p % of the inodes free, not $m"
		# the dry run reports what the real run makes
		"$ORLOV_POPULATE" --dry-run --json --create auto+$m% --fs-type $fs \
			"$T_TMP/dry.img" "$src" >"$T_TMP/json" || t_fail "$fs: --dry-run --json"
		n=$(sed -n 's/.*"created_inodes": \([0-9]*\).*/\1/p' "$T_TMP/json")
		[ "$n" = "$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Inode count: *//p')" ] ||
			t_fail "$fs: --dry-run --json says $n inodes: $(cat "$T_TMP/json")"
		echo "$fs: --create auto+$m%: $n inodes, $p % free"
	done
done
# without a margin the tree still fits, the inodes no longer padded
"$ORLOV_POPULATE" -q --create auto --fs-type ext4 "$T_TMP/auto.img" "$src" ||
	t_fail "--create auto"
[ "$(free_pct "$T_TMP/auto.img")" -lt 10 ] ||
	t_fail "--create auto: $(free_pct "$T_TMP/auto.img") % of the inodes free: the margin would prove nothing"
exit 0
