#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The ext4 features mke2fs -d takes: encrypt and verity images are filled
# with plain files, as mke2fs -d fills them (the kernel's layout:
# e4k-crypt-verity in tests/kernel/cases.list); bigalloc is refused
# before anything is written, in one line that names the feature;
# --driver ext2 refuses encrypt and verity as the ext2 driver's mount does
# (casefold: t-casefold.sh; quota and project: t-quota.sh; inline_data:
# t-inline-data.sh).
. "$(dirname "$0")/lib.sh"

src=$T_TMP/src
t_sample_tree "$src"
t_pin_times "$src"
img=$T_TMP/img

t_mkimage "$img" 32M -t ext4 -O encrypt,verity
"$ORLOV_POPULATE" -q "$img" "$src" || t_fail "encrypt,verity: refused"
t_fsck "$img"
t_verify "$img" "$src"
echo "encrypt,verity: filled, e2fsck and verify clean"

t_mkimage "$img" 32M -t ext4 -O encrypt,verity
cp "$img" "$T_TMP/before.img"
"$ORLOV_POPULATE" -q --driver ext2 "$img" "$src" 2>"$T_TMP/err" &&
	t_fail "--driver ext2 took an encrypt image"
grep -q "feature" "$T_TMP/err" || t_fail "--driver ext2: $(cat "$T_TMP/err")"
cmp -s "$img" "$T_TMP/before.img" || t_fail "--driver ext2: the image changed"

for feat in bigalloc; do
	t_mkimage "$img" 32M -t ext4 -I 256 -O "$feat" 2>/dev/null || continue
	cp "$img" "$T_TMP/before.img"
	"$ORLOV_POPULATE" -q "$img" "$src" 2>"$T_TMP/err" &&
		t_fail "$feat: accepted"
	[ "$(wc -l <"$T_TMP/err")" = 1 ] &&
		grep -q "Filesystem feature not supported.*(feature $feat[:)]" "$T_TMP/err" ||
		t_fail "$feat: $(cat "$T_TMP/err")"
	cmp -s "$img" "$T_TMP/before.img" || t_fail "$feat: the image changed"
	echo "$feat: $(cat "$T_TMP/err")"
done
exit 0
