#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A seeded corpus of damaged images: 1 to 8 random bytes of one metadata
# region (superblock, group descriptors, a bitmap, an inode table, a
# directory, an indirect, symlink or attribute block) of an image that
# holds files.  For every one, orlov-populate must refuse it, unchanged,
# whenever e2fsck -fn rejects it, and otherwise either refuse it unchanged
# or write into it an image e2fsck accepts with the old files intact; no
# orlov-layout verb (dump, stats, verify, diff) may crash on it.
# T_DAMAGED=N tries seeds 1..N (default 400), T_DAMAGED_STRIDE=K every
# K-th of them only (tools/check.sh's sanitizer pass: 2).
. "$(dirname "$0")/lib.sh"
: "${top_builddir:=$PWD}"
[ -x "$top_builddir/tests/corrupt" ] || t_fail "no $top_builddir/tests/corrupt (make check builds it)"
# a sanitizer's report must not pass for an ordinary exit 1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:exitcode=99" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:exitcode=99"

D=${T_KEEP:-$T_TMP}
# The images are tried as processes of their own, two at a time, and a few
# to a shell (--one SEED...: this script's start and lib.sh's once for
# them); each in a subshell, that its verdict's exit ends it alone.
one() {
	seed=$1 d=$T_TMP/d.img w=$T_TMP/w.img
	bad() { echo "$seed FAIL: $*"; exit 0; }
	"$top_builddir/tests/corrupt" "$D/base.img" "$d" "$seed" $regions ||
		bad "corrupt"
	e2fsck -fn "$d" >/dev/null 2>&1
	pre=$?
	"$ORLOV_LAYOUT" verify $t_clamp "$d" "$D/base/b1" /b1 >/dev/null 2>&1
	b1_before=$?
	cp "$d" "$w"
	"$ORLOV_POPULATE" -q -t /data "$w" "$D/new" >/dev/null 2>"$T_TMP/err"
	rc=$?
	[ $rc -le 1 ] || bad "populate exit $rc: $(head -c 300 "$T_TMP/err")"
	for verb in dump stats verify diff; do
		case $verb in
		verify) set -- verify "$d" "$D/base" ;;
		diff) set -- diff "$D/base.img" "$d" ;;
		*) set -- $verb "$d" ;;
		esac
		"$ORLOV_LAYOUT" "$@" >/dev/null 2>&1
		r=$?
		[ $r -le 2 ] || bad "orlov-layout $verb exit $r"
	done
	if [ $rc = 1 ]; then
		[ "$(wc -l <"$T_TMP/err")" = 1 ] || bad "not one line: $(cat "$T_TMP/err")"
		cmp -s "$w" "$d" || bad "refused, but the image changed"
		[ $pre = 0 ] && out=clean-refused || out=damaged-refused
	else
		[ $pre = 0 ] || bad "e2fsck -fn rejects it, and populate wrote into it"
		e2fsck -fn "$w" >/dev/null 2>&1 || bad "e2fsck -fn rejects the image after populate"
		if [ $b1_before = 0 ]; then
			"$ORLOV_LAYOUT" verify $t_clamp "$w" "$D/base/b1" /b1 >/dev/null 2>&1 ||
				bad "/b1 lost data"
		fi
		out=clean-written
	fi
	echo "$seed $out"
}
if [ "${1:-}" = --one ]; then
	D=$T_FAULT_DIR regions=$(cat "$T_FAULT_DIR/regions")
	shift
	for s; do (one "$s"); done
	exit 0
fi

count=${T_DAMAGED:-400} step=${T_DAMAGED_STRIDE:-1}
mkdir -p "$D/base/b1/sub" "$D/base/data/old" "$D/new/n1/n2"
for i in $(seq 1 20); do echo "base $i" >"$D/base/b1/f$i"; done
head -c 30000 /dev/zero | tr '\0' 'k' >"$D/base/b1/sub/big"
for i in 1 2 3; do echo "old $i" >"$D/base/data/old/o$i"; done
ln -s "/$(printf 'y%.0s' $(seq 1 90))" "$D/base/b1/slow"
setfattr -n user.a -v b "$D/base/b1/f1" 2>/dev/null || true
for i in $(seq 1 10); do echo "n$i" >"$D/new/n1/f$i"; done
echo z >"$D/new/n1/n2/z"
t_pin_times "$D/base"
t_mkimage "$D/base.img" 8M -t ext2 -b 1024 -g 2048 -N 512
"$ORLOV_POPULATE" -q "$D/base.img" "$D/base" || t_fail "the base image"
t_fsck "$D/base.img"

# The metadata regions, as byte START:LEN.
img=$D/base.img
sb() { dumpe2fs -h "$img" 2>/dev/null | sed -n "s/^$1:[[:space:]]*//p"; }
bs=$(sb 'Block size') ipg=$(sb 'Inodes per group') isz=$(sb 'Inode size')
groups=$(( $(sb 'Inode count') / ipg ))
{
	echo 1024:256
	echo $(( (bs == 1024 ? 2 : 1) * bs )):$((32 * groups))
	dumpe2fs "$img" 2>/dev/null | awk -v bs="$bs" -v ipg="$ipg" -v isz="$isz" '
		/Block bitmap at/ { print $4 * bs ":" 256 }
		/Inode bitmap at/ { print $4 * bs ":" ipg / 8 }
		/Inode table at/ { split($4, a, "-"); print a[1] * bs ":" 32 * isz }'
	for p in / /data /b1 /data/old /b1/sub/big /b1/slow; do
		debugfs -R "blocks $p" "$img" 2>/dev/null | tr ' ' '\n' |
			grep -E '^[0-9]+$' | head -2 | while read -r b; do
			echo $((b * bs)):$bs
		done
	done
	x=$(debugfs -R "stat /b1/f1" "$img" 2>/dev/null | sed -n 's/.*File ACL: \([0-9]*\).*/\1/p')
	[ -z "$x" ] || [ "$x" = 0 ] || echo $((x * bs)):$bs
} >"$D/regions"
[ "$(wc -l <"$D/regions")" -ge 20 ] || t_fail "regions: $(cat "$D/regions")"

# each image in RAM: the commit's copy and e2fsck's syncs not waited for
seq 1 "$step" "$count" | TMPDIR=$(t_ramdir) T_FAULT_DIR=$D xargs -P 2 -n 8 sh "$0" --one >"$D/out" 2>&1
if grep -v -E '^[0-9]+ (clean-written|clean-refused|damaged-refused)$' "$D/out" >"$D/bad"; then
	head -5 "$D/bad" >&2
	t_fail "$(wc -l <"$D/bad") bad images"
fi
tried=$(( (count - 1) / step + 1 ))
[ "$(wc -l <"$D/out")" = "$tried" ] || t_fail "$(wc -l <"$D/out") results for $tried images"
echo "$tried damaged images (seeds 1 to $count, step $step; $(wc -l <"$D/regions") regions):" \
	$(awk '{ n[$2]++ } END { for (k in n) printf "%s=%d\n", k, n[k] }' "$D/out" | sort) \
	"; orlov-layout dump, stats, verify and diff: $((tried * 4)) runs, no crash"
