#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What keeps a run fast, in counts that do not depend on the machine's
# load, plus one growth exponent measured in CPU time:
# - the data of a directory's small files reaches the image in a few
#   writes, not one per file (ext2; ext4 through the delayed writeback);
# - one directory of 40,000 names costs about 4 times one of 10,000: the
#   CPU-time exponent k = log(t2/t1)/log(4) stays far below 2 (a name
#   check walking the directory made it 1.4 here; linear is about 1).
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

# cpu N: user + system seconds of a run on one directory of N empty files
cpu() {
	rm -rf "$T_TMP/one"
	mkdir -p "$T_TMP/one/d"
	(cd "$T_TMP/one/d" && seq -w 1 "$1" | sed 's/^/name-/' | xargs touch) ||
		t_fail "making $1 names"
	t_mkimage "$T_TMP/img" 256M -t ext2 -b 4096 -N 50000
	/usr/bin/time -f '%U %S' -o "$T_TMP/time" "$ORLOV_POPULATE" -q --no-fsck \
		"$T_TMP/img" "$T_TMP/one" || t_fail "populate $1 names"
	awk '{ printf "%.3f\n", $1 + $2 }' "$T_TMP/time"
}
[ -x /usr/bin/time ] || t_skip "no /usr/bin/time (package time)"
t1=$(cpu 10000)
t2=$(cpu 40000)
k=$(awk -v a="$t1" -v b="$t2" 'BEGIN { if (a < 0.01) a = 0.01; printf "%.2f", log(b / a) / log(4) }')
echo "one directory: 10,000 names $t1 s, 40,000 names $t2 s of CPU: k = $k"
awk -v k="$k" 'BEGIN { exit !(k <= 1.25) }' ||
	t_fail "one directory grows as names^$k (quadratic name check?)"
