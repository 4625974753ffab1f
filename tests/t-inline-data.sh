#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# inline_data: with 256-byte inodes a file of up to 128 bytes (60 in
# i_block, 68 in system.data) stays in its inode, with and without
# delayed allocation, and takes no block; a longer one is written as any;
# an empty one gets no system.data.  Every new directory starts inline
# (".." and one empty entry in i_block), grows into system.data, and once
# its names outgrow the inode is converted to one block.  Attributes set
# after the data share the inode with it.  e2fsck -fn is clean and the
# data reads back equal; the ext2 driver refuses the image in one line.
# (The kernel's own layout: e4k-inline, e1k-inline in
# tests/kernel/cases.list.)
export SOURCE_DATE_EPOCH=1700000000
. "$(dirname "$0")/lib.sh"

src=$T_TMP/src
mkdir -p "$src/small" "$src/few" "$src/mid" "$src/wide" "$src/empty" ||
	t_fail "mkdir"
for n in 1 59 60 61 100 128 129 4000; do
	head -c $n /dev/zero | tr '\0' y >"$src/small/f$n"
done
: >"$src/small/zero"
: >"$src/few/a"
: >"$src/few/b"
for n in 1 2 3 4 5 6; do : >"$src/mid/name000$n"; done
i=0
while [ $i -lt 40 ]; do : >"$src/wide/entry-$i"; i=$((i + 1)); done
printf 'short data beside an attribute\n' >"$src/small/xattr"
xattr=0
if setfattr -n user.note -v "a value that lives in the inode too" \
	"$src/small/xattr" 2>/dev/null; then
	xattr=1
fi
t_pin_times "$src"
img=$T_TMP/img

# st PATH: debugfs's stat of PATH in the image
st() {
	debugfs -R "stat $1" "$img" 2>/dev/null
}

# inline PATH SIZE: PATH keeps SIZE bytes inline (i_block and
# system.data), no block, EXT4_INLINE_DATA_FL
inline() {
	st "$1" >"$T_TMP/st"
	grep -q "^Size of inline data: $2\$" "$T_TMP/st" &&
		grep -q "Flags: 0x10000000" "$T_TMP/st" &&
		grep -q "Blockcount: 0\$" "$T_TMP/st" ||
		t_fail "$da: $1 not inline ($2): $(cat "$T_TMP/st")"
}

# blocks PATH: PATH has its data in blocks, no system.data
blocks() {
	st "$1" >"$T_TMP/st"
	! grep -q "system.data\|Size of inline data" "$T_TMP/st" &&
		grep -q "Flags: 0x80000\$" "$T_TMP/st" ||
		t_fail "$da: $1 inline: $(cat "$T_TMP/st")"
}

for da in --delalloc --no-delalloc; do
	t_mkimage "$img" 32M -t ext4 -b 1024 -I 256 -O inline_data
	"$ORLOV_POPULATE" -q $da "$img" "$src" || t_fail "$da: refused"
	t_fsck "$img"
	t_verify "$img" "$src"
	for n in 1 59 60; do inline /small/f$n 60; done
	inline /small/f61 61
	inline /small/f100 100
	inline /small/f128 128
	blocks /small/f129
	blocks /small/f4000
	st /small/zero | grep -q "system.data" && t_fail "$da: empty file inline"
	# (debugfs's cat reads the whole inline size: 60 bytes for f59)
	for f in 61 128; do
		debugfs -R "cat /small/f$f" "$img" 2>/dev/null | cmp -s - "$src/small/f$f" ||
			t_fail "$da: /small/f$f reads back different"
	done
	inline /empty 60
	inline /few 60
	st /mid | grep -q "^Size of inline data: 128\$" ||
		t_fail "$da: /mid not grown into system.data: $(st /mid)"
	st /wide | grep -q "Size: 1024\$" && blocks /wide ||
		t_fail "$da: /wide not converted: $(st /wide)"
	if [ $xattr = 1 ]; then
		st /small/xattr | grep -q "user.note" &&
			inline /small/xattr 60 ||
			t_fail "$da: attribute beside inline data: $(st /small/xattr)"
	fi
	echo "$da: small files and directories inline, the rest in blocks, e2fsck and verify clean"
done

# the ext2 driver cannot mount an inline_data image (one of ext2's
# features but for it: the refusal names it)
t_mkimage "$img" 32M -t ext2 -b 1024 -I 256 -O inline_data
cp "$img" "$T_TMP/before.img"
"$ORLOV_POPULATE" -q --driver ext2 "$img" "$src" 2>"$T_TMP/err" &&
	t_fail "--driver ext2 took an inline_data image"
[ "$(wc -l <"$T_TMP/err")" = 1 ] &&
	grep -q "(feature inline_data)" "$T_TMP/err" ||
	t_fail "--driver ext2: $(cat "$T_TMP/err")"
cmp -s "$img" "$T_TMP/before.img" || t_fail "--driver ext2: the image changed"
echo "--driver ext2: $(cat "$T_TMP/err")"
exit 0
