#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# orlov-layout verify and holes (issue 37 item 16): a 16 TiB sparse file
# (16 TiB - 4 KiB, the most an extent-mapped file holds with 4 KiB
# blocks) with data at 0, 1 GiB and near its end verifies within a
# minute, its holes skipped, not read; so does a 1 TiB one in an
# indirect-mapped ext2 image.  Skipping holes hides no difference: a
# byte changed in the image's data, a source hole where the image has
# data, and source data where the image has a hole are each reported.
. "$(dirname "$0")/lib.sh"
export SOURCE_DATE_EPOCH=1700000000
P=$ORLOV_POPULATE
L=$ORLOV_LAYOUT
T=$T_TMP
G=1073741824

# put FILE OFFSET TEXT: TEXT written at OFFSET, the file's size kept
put() { printf '%s' "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }

# sparse FILE SIZE...: FILE a sparse file of the first SIZE the host's
# filesystem allows, with data at 0, 1 GiB and 8 KiB before its end;
# its size on stdout
sparse() {
	s_f=$1
	shift
	for s_size; do
		rm -f "$s_f"
		truncate -s "$s_size" "$s_f" 2>/dev/null || continue
		put "$s_f" 0 "first block" &&
			put "$s_f" $G "one GiB in" &&
			put "$s_f" $((s_size - 8192)) "near the end" || continue
		# more than a few blocks allocated: no sparse file here
		[ "$(stat -c %b "$s_f")" -lt 1024 ] || continue
		echo "$s_size"
		return 0
	done
	rm -f "$s_f"
	return 1
}

# verify_ok NAME IMAGE SOURCE: passes within 60 s, time shown
verify_ok() {
	v_t0=$(date +%s.%N)
	timeout 60 "$L" verify --clamp "$2" "$3" >"$T/out" 2>&1
	v_rc=$?
	[ "$v_rc" = 0 ] || { cat "$T/out" >&2
		t_fail "$1: verify exit $v_rc (124: still running after 60 s)"; }
	echo "$1: verify passed in $(awk "BEGIN { print $(date +%s.%N) - $v_t0 }") s"
}

# verify_bad NAME PATTERN IMAGE SOURCE: exit 1 within 60 s, PATTERN said
verify_bad() {
	timeout 60 "$L" verify --clamp "$3" "$4" >"$T/out" 2>&1
	v_rc=$?
	[ "$v_rc" = 1 ] || { cat "$T/out" >&2; t_fail "$1: exit $v_rc, want 1"; }
	grep -Eq -- "$2" "$T/out" ||
		{ cat "$T/out" >&2; t_fail "$1: no /$2/"; }
	echo "$1: reported"
}

# phys IMAGE PATH LBLK: the image block that holds logical block LBLK
phys() { debugfs -R "bmap $2 $3" "$1" 2>/dev/null; }

# ---- ext4: extents, 4 KiB blocks, 16 TiB - 4 KiB ----
src=$T/src
mkdir -p "$src"
size=$(sparse "$src/huge" 17592186040320 2199023255552) ||
	t_skip "no sparse file of 2 TiB or more in ${TMPDIR:-/tmp}"
[ "$size" = 17592186040320 ] ||
	echo "note: ${TMPDIR:-/tmp} holds no 16 TiB file: $size bytes instead"
echo "sparse file: $size bytes, $(stat -c %b "$src/huge") sectors allocated"
t_pin_times "$src"
img=$T/ext4.img
t_mkimage "$img" 64M -t ext4 -b 4096
"$P" "$img" "$src" >/dev/null || t_fail "populate ext4"
t_fsck "$img"
cp "$img" "$T/ext4.keep"
verify_ok ext4-sparse "$img" "$src"

# one byte of the image's data at 1 GiB changed
b=$(phys "$img" /huge $((G / 4096)))
[ -n "$b" ] && [ "$b" -gt 0 ] || t_fail "no block at 1 GiB in the image"
put "$img" $((b * 4096 + 4)) "X"
verify_bad ext4-byte "^mismatch: /huge: data at offset $((G + 4)) \(expected 0x47, got 0x58\)" \
	"$img" "$src"
cp "$T/ext4.keep" "$img"

# the block near the end written in the image's copy only: the source
# punched there, a hole against the image's data
fallocate -p -o $((size - 8192)) -l 4096 "$src/huge" ||
	t_fail "fallocate -p"
verify_bad ext4-src-hole "^mismatch: /huge: data at offset $((size - 8192)) \(expected 0x00, got 0x6e\)" \
	"$img" "$src"
put "$src/huge" $((size - 8192)) "near the end"

# data in the source at 3 GiB, a hole in the image there
put "$src/huge" $((3 * G + 100)) "new"
verify_bad ext4-img-hole "^mismatch: /huge: data at offset $((3 * G + 100)) \(expected 0x6e, got 0x00\)" \
	"$img" "$src"

# ---- ext2: indirect blocks, 4 KiB blocks, 1 TiB ----
src2=$T/src2
mkdir -p "$src2"
size=$(sparse "$src2/big" 1099511627776) ||
	t_skip "no sparse file of 1 TiB in ${TMPDIR:-/tmp}"
t_pin_times "$src2"
img=$T/ext2.img
t_mkimage "$img" 64M -t ext2 -b 4096
"$P" "$img" "$src2" >/dev/null || t_fail "populate ext2"
t_fsck "$img"
verify_ok ext2-sparse "$img" "$src2"
b=$(phys "$img" /big $(((size - 8192) / 4096)))
[ -n "$b" ] && [ "$b" -gt 0 ] || t_fail "no block near the end in the image"
put "$img" $((b * 4096 + 1)) "X"
verify_bad ext2-byte "^mismatch: /big: data at offset $((size - 8191)) \(expected 0x65, got 0x58\)" \
	"$img" "$src2"
put "$img" $((b * 4096 + 1)) "e"
put "$src2/big" $((512 * G)) "new"
verify_bad ext2-img-hole "^mismatch: /big: data at offset $((512 * G)) \(expected 0x6e, got 0x00\)" \
	"$img" "$src2"
echo ok
