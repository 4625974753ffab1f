#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# casefold: a directory named by --casefold is made +F, its subdirectories
# inherit the flag (its files do not), its htree hashes the folded names
# (e2fsck -fn checks them); names that fold alike there are refused before
# anything is written, and so is invalid UTF-8 under strict encoding;
# --driver ext2 refuses the feature.
export SOURCE_DATE_EPOCH=1700000000
. "$(dirname "$0")/lib.sh"

src=$T_TMP/src
mkdir -p "$src/Names/Sub/Deeper" "$src/plain" || t_fail "mkdir"
# 3,000 mixed-case names: an htree of several levels of leaves
i=0
while [ $i -lt 3000 ]; do
	case $((i % 3)) in
	0) n=File-$i.TXT ;;
	1) n=file-$i.Txt ;;
	*) n=FILE-$i.tXt ;;
	esac
	: >"$src/Names/$n"
	i=$((i + 1))
done
strasse=$(printf 'Stra\303\237e')
printf 'x' >"$src/Names/Sub/$strasse"
printf 'y' >"$src/Names/Sub/$(printf '\316\251mega')"
printf 'z' >"$src/plain/Same"
printf 'z' >"$src/plain/same"
t_pin_times "$src"
img=$T_TMP/img

flags() {
	debugfs -R "stat $1" "$img" 2>/dev/null |
		sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p'
}
has_cf() { [ $(( $(flags "$1") & 0x40000000 )) != 0 ]; }

t_mkimage "$img" 64M -t ext4 -O casefold
"$ORLOV_POPULATE" -q --casefold Names "$img" "$src" || t_fail "casefold: refused"
t_fsck "$img"
t_verify "$img" "$src"
for d in /Names /Names/Sub /Names/Sub/Deeper; do
	has_cf $d || t_fail "$d: flags $(flags $d), no casefold"
done
for p in /plain /Names/File-0.TXT "/Names/Sub/$strasse"; do
	has_cf "$p" && t_fail "$p: flags $(flags "$p"), casefold"
done
[ $(( $(flags /Names) & 0x1000 )) != 0 ] || t_fail "/Names: no htree"
debugfs -R "htree /Names" "$img" 2>/dev/null | grep -q "Indirect levels: 0" ||
	t_fail "/Names: htree unread"
echo "casefold: /Names and below +F, an htree, e2fsck and verify clean"

# the same with the flag where the image has it already: the target
t_mkimage "$img" 64M -t ext4 -O casefold
"$ORLOV_POPULATE" -q --casefold Names "$img" "$src" || t_fail "first run"
mkdir -p "$T_TMP/more/New" && : >"$T_TMP/more/New/A" && : >"$T_TMP/more/b" ||
	t_fail "more"
"$ORLOV_POPULATE" -q -t /Names "$img" "$T_TMP/more" || t_fail "into /Names"
t_fsck "$img"
has_cf /Names/New || t_fail "/Names/New: flags $(flags /Names/New)"
cp "$img" "$T_TMP/before.img"
mkdir -p "$T_TMP/again" && : >"$T_TMP/again/FILE-0.txt" || t_fail "again"
"$ORLOV_POPULATE" -q -t /Names "$img" "$T_TMP/again" 2>"$T_TMP/err" &&
	t_fail "a name the image has, folded, accepted"
grep -qx "orlov-populate: Name already exists in the target directory while checking $T_TMP/again/FILE-0.txt" "$T_TMP/err" ||
	t_fail "exists: $(cat "$T_TMP/err")"
cmp -s "$img" "$T_TMP/before.img" || t_fail "exists: the image changed"
echo "existing +F directory: inherited, names found folded"

# --merge: a name that folds like a +F directory's goes into it; a
# directory the image has without +F cannot be made casefolded
mkdir -p "$T_TMP/m/sub" && : >"$T_TMP/m/sub/NEW" || t_fail "m"
"$ORLOV_POPULATE" -q --merge -t /Names "$img" "$T_TMP/m" || t_fail "merge into /Names"
t_fsck "$img"
[ -n "$(flags /Names/Sub/NEW)" ] || t_fail "/Names/Sub/NEW missing"
has_cf /Names/Sub/NEW && t_fail "a file with +F"
debugfs -R "stat /Names/sub" "$img" 2>/dev/null | grep -q "Type: directory" &&
	t_fail "/Names/sub made beside /Names/Sub"
cp "$img" "$T_TMP/before.img"
mkdir -p "$T_TMP/p/plain" && : >"$T_TMP/p/plain/x" || t_fail "p"
"$ORLOV_POPULATE" -q --merge --casefold plain "$img" "$T_TMP/p" 2>"$T_TMP/err" &&
	t_fail "--casefold of a directory the image has"
grep -q "the image has already, not casefolded.*while checking $T_TMP/p/plain" "$T_TMP/err" ||
	t_fail "merged: $(cat "$T_TMP/err")"
cmp -s "$img" "$T_TMP/before.img" || t_fail "merged: the image changed"
echo "merge: folded names merged, --casefold of an existing directory refused"

# two names that fold alike in a +F directory: one line, image unchanged
printf 'w' >"$src/Names/Sub/STRASSE"
t_mkimage "$img" 64M -t ext4 -O casefold
cp "$img" "$T_TMP/before.img"
"$ORLOV_POPULATE" -q --casefold Names "$img" "$src" 2>"$T_TMP/err" &&
	t_fail "a case collision accepted"
[ "$(wc -l <"$T_TMP/err")" = 1 ] &&
	grep -q "folds like another.*while checking $src/Names/Sub/Stra" "$T_TMP/err" ||
	t_fail "collision: $(cat "$T_TMP/err")"
cmp -s "$img" "$T_TMP/before.img" || t_fail "collision: the image changed"
echo "collision: $(cat "$T_TMP/err")"
rm "$src/Names/Sub/STRASSE"

# invalid UTF-8: refused under strict encoding, hashed as it is without
printf 'v' >"$src/Names/Sub/bad-$(printf '\377')"
t_mkimage "$img" 64M -t ext4 -O casefold -E encoding_flags=strict
cp "$img" "$T_TMP/before.img"
"$ORLOV_POPULATE" -q --casefold Names "$img" "$src" 2>"$T_TMP/err" &&
	t_fail "strict: invalid UTF-8 accepted"
grep -q "not valid UTF-8" "$T_TMP/err" || t_fail "strict: $(cat "$T_TMP/err")"
cmp -s "$img" "$T_TMP/before.img" || t_fail "strict: the image changed"
t_mkimage "$img" 64M -t ext4 -O casefold
"$ORLOV_POPULATE" -q --casefold Names "$img" "$src" || t_fail "not strict: refused"
t_fsck "$img"
echo "invalid UTF-8: refused when strict, taken otherwise"

# the ext2 driver mounts no casefold image: refused, naming the feature
t_mkimage "$img" 64M -t ext2 -O casefold
cp "$img" "$T_TMP/before.img"
"$ORLOV_POPULATE" -q --driver ext2 "$img" "$src" 2>"$T_TMP/err" &&
	t_fail "--driver ext2 took a casefold image"
grep -q "Filesystem feature not supported.*(feature casefold)" "$T_TMP/err" ||
	t_fail "--driver ext2: $(cat "$T_TMP/err")"
cmp -s "$img" "$T_TMP/before.img" || t_fail "--driver ext2: the image changed"

# --casefold needs the feature, and a directory of SOURCE
t_mkimage "$img" 64M -t ext4
"$ORLOV_POPULATE" -q --casefold Names "$img" "$src" 2>"$T_TMP/err" &&
	t_fail "--casefold without the feature"
grep -q "needs an image with the casefold feature" "$T_TMP/err" ||
	t_fail "no feature: $(cat "$T_TMP/err")"
t_mkimage "$img" 64M -t ext4 -O casefold
"$ORLOV_POPULATE" -q --casefold Names/none "$img" "$src" 2>"$T_TMP/err" &&
	t_fail "--casefold of no directory"
grep -q "names no directory of SOURCE while checking Names/none" "$T_TMP/err" ||
	t_fail "no directory: $(cat "$T_TMP/err")"
exit 0
