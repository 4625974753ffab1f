#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The journal commit on ext4 images (mke2fs -t ext4: 64bit, metadata_csum,
# extents, flex_bg) with the journal as a mount leaves it (journal_64bit
# and checksums v3, which debugfs's journal_open -c sets the same way; the
# journal as mke2fs leaves it is t-faults.sh's ext4 scenario).  SIGKILL before each
# operation from the commit's first on (ORLOV_FAULT=kill:N): after
# recovery (e2fsck -fy replays the journal, as mount does) e2fsck -fn
# passes and every path is exactly as before the run or exactly as after
# it; a kill inside the log leaves needs_recovery set, so the commit went
# through the journal, not a copy.  T_FAULT_STRIDE=K tries every K-th
# operation (default 4).
. "$(dirname "$0")/lib.sh"

stride=${T_FAULT_STRIDE:-4}
t_sample_tree "$T_TMP/src"
t_many_names "$T_TMP/src/many"
t_pin_times "$T_TMP/src"

dump() {
	"$ORLOV_LAYOUT" dump "$1" >"$2" || t_fail "dump $1"
}

# kills NAME BASE-IMAGE
kills() {
	name=$1 base=$2 w=$T_TMP/w.img
	cp "$base" "$T_TMP/after.img"
	"$ORLOV_POPULATE" -q --cpus 2 "$T_TMP/after.img" "$T_TMP/src" ||
		t_fail "$name: orlov-populate failed"
	t_fsck "$T_TMP/after.img"
	dump "$base" "$T_TMP/before.dump"
	dump "$T_TMP/after.img" "$T_TMP/after.dump"
	cp "$base" "$w"
	out=$(ORLOV_FAULT=count "$ORLOV_HOOKS_POPULATE" -q --cpus 2 "$w" "$T_TMP/src" 2>&1)
	total=$(echo "$out" | sed -n 's/.*: \([0-9]*\) operations, commit from \([0-9]*\).*/\1/p')
	first=$(echo "$out" | sed -n 's/.*: \([0-9]*\) operations, commit from \([0-9]*\).*/\2/p')
	[ -n "$total" ] && [ -n "$first" ] || t_fail "$name: ORLOV_FAULT=count: $out"
	n=$first before=0 after=0 journalled=0
	while [ "$n" -le "$total" ]; do
		cp "$base" "$w"
		(ORLOV_FAULT=kill:$n "$ORLOV_HOOKS_POPULATE" -q --cpus 2 "$w" "$T_TMP/src" \
			>/dev/null 2>&1)
		rm -f "$w".*
		dumpe2fs -h "$w" 2>/dev/null | grep -q '^Filesystem features:.*needs_recovery' &&
			journalled=$((journalled + 1))
		e2fsck -fy "$w" >/dev/null 2>&1
		t_fsck "$w"
		dump "$w" "$T_TMP/w.dump"
		if cmp -s "$T_TMP/w.dump" "$T_TMP/before.dump"; then
			before=$((before + 1))
		elif cmp -s "$T_TMP/w.dump" "$T_TMP/after.dump"; then
			after=$((after + 1))
		else
			diff "$T_TMP/after.dump" "$T_TMP/w.dump" | head -n 5 >&2
			t_fail "$name: kill:$n: neither the old nor the new tree"
		fi
		n=$((n + stride))
	done
	[ $journalled -gt 0 ] || t_fail "$name: no kill left the journal to replay"
	[ $after -gt 0 ] || t_fail "$name: no kill after the commit point"
	echo "$name: kills $first..$total: $before old, $after new, $journalled replayed"
}

t_mkimage "$T_TMP/v3.img" 16M -t ext4 -b 1024
printf 'jo -c\njc\n' | debugfs -w -f - "$T_TMP/v3.img" >/dev/null 2>&1
dumpe2fs -h "$T_TMP/v3.img" 2>/dev/null |
	grep -q '^Journal features:.*journal_64bit.*journal_checksum_v3' ||
	t_fail "debugfs journal_open -c set no 64bit/csum v3 journal"
kills journal-64bit-csum-v3 "$T_TMP/v3.img"
exit 0
