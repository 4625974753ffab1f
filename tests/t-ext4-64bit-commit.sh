#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# An ext4 image past 2^32 blocks (4 KiB blocks, 20 TiB, sparse in RAM):
# filled, it is e2fsck-clean with blocks past 2^32.  Then a tree goes into
# a directory whose block and inode table block lie past 2^32: the commit
# logs both in the journal, whose tags carry the high 32 bits
# (t_blocknr_high; the journal as mke2fs leaves it gets 64-bit tags, as
# the ext4 driver gives them at mount).  SIGKILL at the first point where
# the commit record is on disk (found by bisection of ORLOV_FAULT=kill:N)
# and at the next four: the directory's block past 2^32 is still the old
# one on disk there, so only a replay that writes it where it belongs
# (e2fsck -fy, as mount does) gives the image after the run; every kill
# gives exactly the image before or after, e2fsck-clean.
# Skipped when /dev/shm cannot hold a sparse 20 TiB file and 2 GiB.
# With T_FAULT_KILL_STRIDE set (the sanitizer pass) only the two fills.
. "$(dirname "$0")/lib.sh"

shm=/dev/shm
[ -d $shm ] && [ -w $shm ] || t_skip "no writable /dev/shm"
avail=$(df -Pk $shm | awk 'NR == 2 { print $4 }')
[ "${avail:-0}" -ge $((2 << 20)) ] || t_skip "/dev/shm has less than 2 GiB free"
W=$(mktemp -d $shm/orlov-t64.XXXXXX) || t_fail "mktemp in $shm"
trap 'rm -rf "$T_TMP" "$W"' EXIT
truncate -s 20T "$W/probe" 2>/dev/null ||
	t_skip "$shm cannot hold a sparse 20 TiB file"
rm -f "$W/probe"

copy() { cp --sparse=always "$1" "$2" || t_fail "cp $1 $2"; }
dump() { "$ORLOV_LAYOUT" dump "$1" >"$2" || t_fail "dump $1"; }

# lazy_itable_init: no inode table written (mke2fs would zero 640 MiB
# where the host lacks the ext4 lazyinit feature)
mke2fs -q -F -t ext4 -b 4096 -N 200000 -U $T_UUID \
	-E hash_seed=$T_SEED,root_owner=0:0,lazy_itable_init=1 \
	"$W/empty.img" 20T >/dev/null || t_fail "mke2fs"
mkdir -p "$T_TMP/src" "$T_TMP/src2/n"
for d in alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu; do
	mkdir -p "$T_TMP/src/$d/sub"
	printf '%s\n' "$d" >"$T_TMP/src/$d/f"
done
for i in 1 2 3; do printf '%s\n' "$i" >"$T_TMP/src2/n/f$i"; done
t_pin_times "$T_TMP/src"
t_pin_times "$T_TMP/src2"

copy "$W/empty.img" "$W/base.img"
"$ORLOV_POPULATE" -q "$W/base.img" "$T_TMP/src" || t_fail "first fill"
t_fsck "$W/base.img"
dump "$W/base.img" "$T_TMP/base.dump"
# a top-level directory whose (one) block lies past 2^32
set -- $(awk '$4 == "dir" && $1 ~ /^\/[a-z]*$/ {
	sub("blocks=", "", $5); if ($5 + 0 > 4294967295) { print $1, $5; exit } }' \
	"$T_TMP/base.dump")
[ $# = 2 ] || t_fail "no top-level directory past 2^32: $(cat "$T_TMP/base.dump")"
dir=$1 blk=$2
echo "# $dir: block $blk"
grep -q "blocks=[0-9]*" "$T_TMP/base.dump" || t_fail "no blocks in the dump"

copy "$W/base.img" "$W/after.img"
"$ORLOV_POPULATE" -q -t "$dir" "$W/after.img" "$T_TMP/src2" ||
	t_fail "second fill into $dir"
t_fsck "$W/after.img"
dump "$W/after.img" "$T_TMP/after.dump"
cmp -s "$T_TMP/base.dump" "$T_TMP/after.dump" && t_fail "second fill changed nothing"

kill_at() { # kill_at N: w.img as a SIGKILL before operation N leaves it
	copy "$W/base.img" "$W/w.img"
	(ORLOV_FAULT=kill:$1 "$ORLOV_HOOKS_POPULATE" -q --no-fsck -t "$dir" \
		"$W/w.img" "$T_TMP/src2" >/dev/null 2>&1) 2>/dev/null
}

# committed N: killed before operation N, the journal holds a committed
# transaction (what a replay would apply)
committed() {
	kill_at "$1"
	debugfs -R "logdump" "$W/w.img" 2>/dev/null | grep -q "(commit block)"
}

# tools/check.sh's sanitizer pass sets T_FAULT_KILL_STRIDE: there the two
# fills above only (the kills, some twenty runs on 20 TiB, are the plain
# pass's; t-faults.sh thins its kills there the same way)
if [ -n "${T_FAULT_KILL_STRIDE:-}" ]; then
	echo "ok - two fills past 2^32 (kills in the plain pass only)"
	exit 0
fi

run() { # run N: killed before operation N; prints before, after or other
	kill_at "$1"
	dd if="$W/w.img" of="$T_TMP/blk.$1" bs=4096 skip="$blk" count=1 \
		2>/dev/null || t_fail "dd block $blk"
	e2fsck -fy "$W/w.img" >/dev/null 2>&1
	t_fsck "$W/w.img"
	dump "$W/w.img" "$T_TMP/w.dump"
	if cmp -s "$T_TMP/w.dump" "$T_TMP/after.dump"; then echo after
	elif cmp -s "$T_TMP/w.dump" "$T_TMP/base.dump"; then echo before
	else echo other; fi
}

copy "$W/base.img" "$W/w.img"
out=$(ORLOV_FAULT=count "$ORLOV_HOOKS_POPULATE" -q --no-fsck -t "$dir" "$W/w.img" \
	"$T_TMP/src2" 2>&1)
total=$(echo "$out" | sed -n 's/.*: \([0-9]*\) operations, commit from \([0-9]*\).*/\1/p')
first=$(echo "$out" | sed -n 's/.*: \([0-9]*\) operations, commit from \([0-9]*\).*/\2/p')
[ -n "$total" ] && [ -n "$first" ] || t_fail "ORLOV_FAULT=count: $out"
[ "$(run "$first")" = before ] || t_fail "killed at the commit's start: not the old image"
# the journal is emptied again in the commit's last few operations
hi=$total
while [ $hi -gt $((total - 16)) ] && ! committed $hi; do hi=$((hi - 1)); done
committed $hi || t_fail "no kill near the end leaves a transaction in the journal"
lo=$first
while [ $((hi - lo)) -gt 1 ]; do
	mid=$(((lo + hi) / 2))
	if committed $mid; then hi=$mid; else lo=$mid; fi
done
[ "$(run $lo)" = before ] || t_fail "killed before operation $lo, the commit record not written: not the old image"
echo "# commit record on disk from operation $hi of $total (commit from $first)"
dd if="$W/base.img" of="$T_TMP/blk.base" bs=4096 skip="$blk" count=1 2>/dev/null
[ "$(run $hi)" = after ] ||
	t_fail "killed before operation $hi, the commit record written: not the new image"
cmp -s "$T_TMP/blk.$hi" "$T_TMP/blk.base" ||
	t_fail "block $blk already written in place at the commit record: the replay proves nothing"
for n in $((hi + 1)) $((hi + 2)) $((hi + 3)) $((hi + 4)); do
	[ "$(run $n)" = after ] || t_fail "killed before operation $n: not the new image"
done
echo "ok - $dir's block $blk past 2^32 replayed from the journal"
