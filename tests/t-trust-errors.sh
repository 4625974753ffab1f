#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The UUID of --create is a function of what the image holds (issue 37,
# item 10), and errors name what failed and where (items 19 to 24).
. "$(dirname "$0")/lib.sh"

# libext2fs's fake clock would hide what SOURCE_DATE_EPOCH must do alone.
unset E2FSPROGS_FAKE_TIME

# uuid IMAGE: its filesystem UUID
uuid() {
	dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p'
}

# build NAME SOURCE: a --create image NAME.img from SOURCE, and its UUID
build() {
	rm -f "$T_TMP/$1.img"
	SOURCE_DATE_EPOCH=1700000000 "$ORLOV_POPULATE" -q --create 8M \
		--block-size 1024 "$T_TMP/$1.img" "$2" || t_fail "--create $1"
	t_fsck "$T_TMP/$1.img"
	uuid "$T_TMP/$1.img" >"$T_TMP/$1.uuid"
}

# same A B...: the images are cmp-identical (and so are their UUIDs)
same() {
	local a=$1 b
	shift
	for b in "$@"; do
		cmp -s "$T_TMP/$a.img" "$T_TMP/$b.img" ||
			t_fail "$a and $b differ: UUIDs $(cat "$T_TMP/$a.uuid") $(cat "$T_TMP/$b.uuid")"
	done
	echo "same image and UUID $(cat "$T_TMP/$a.uuid"): $a $*"
}

# ---- 10: the UUID of --create, from what the image keeps -------------------
# A tree with a symlink (reading one sets its atime, and nothing stops
# it), a hard link, and a directory; two copies made a second apart, their
# times older than the epoch (kept as they are; cp -a itself moves the
# atimes of what it reads), each run twice.
pin() {
	find "$1" -exec touch -h -d '2020-01-01 00:00:00.5' {} +
}
o=$T_TMP/o
mkdir -p "$o/d/e"
printf 'one\n' >"$o/d/f"
ln "$o/d/f" "$o/d/hard"
ln -s f "$o/d/link"
head -c 70000 /dev/zero | tr '\0' 'z' >"$o/e-big"
cp -a "$o" "$T_TMP/c1" || t_fail "cp -a"
pin "$T_TMP/c1"
sleep 1
cp -a "$o" "$T_TMP/c2" || t_fail "cp -a"
pin "$T_TMP/c2"
build c1-first "$T_TMP/c1"
sleep 1
build c1-again "$T_TMP/c1"
build c2-first "$T_TMP/c2"
build c2-again "$T_TMP/c2"
same c1-first c1-again c2-first c2-again
# a host flag the image does not take (nodump on a directory): same image
if chattr +d "$T_TMP/c2/d" 2>/dev/null; then
	build c2-nodump "$T_TMP/c2"
	same c1-first c2-nodump
	chattr -d "$T_TMP/c2/d"
fi
# nanoseconds, which 128-byte inodes do not keep: trees that differ only
# there give one image
ns() { # ns NAME FRACTION: a copy of c1 with its times at FRACTION of a second
	cp -a "$T_TMP/c1" "$T_TMP/$1" || t_fail "cp -a"
	find "$T_TMP/$1" -exec touch -h -d "2020-01-01 00:00:00.$2" {} +
	rm -f "$T_TMP/$1.img"
	SOURCE_DATE_EPOCH=1700000000 "$ORLOV_POPULATE" -q --create 8M \
		--fs-type ext2 --block-size 1024 --mkfs-options "-I 128" \
		"$T_TMP/$1.img" "$T_TMP/$1" || t_fail "--create $1"
	uuid "$T_TMP/$1.img" >"$T_TMP/$1.uuid"
}
ns ns5 5
ns ns7 7
same ns5 ns7
# what the image does keep still changes the UUID: a link made a copy
rm "$T_TMP/c2/d/hard"
cp -p "$T_TMP/c2/d/f" "$T_TMP/c2/d/hard"
pin "$T_TMP/c2"
build c2-copy "$T_TMP/c2"
build c2-copy-again "$T_TMP/c2"
same c2-copy c2-copy-again
cmp -s "$T_TMP/c2-again.img" "$T_TMP/c2-copy-again.img" && t_fail "a link is a copy"
[ "$(cat "$T_TMP/c2-copy-again.uuid")" != "$(cat "$T_TMP/c2-again.uuid")" ] ||
	t_fail "a hard link and a copy gave one UUID"
# files still being written back by the host, then after sync
w=$T_TMP/w
mkdir -p "$w/s"
head -c 300000 /dev/urandom >"$w/s/big"
dd if=/dev/urandom of="$w/s/sparse" bs=4096 seek=16 count=2 2>/dev/null
printf 'x\n' >"$w/small"
ln -s big "$w/s/l"
build w-pending "$w"
sync
build w-synced "$w"
sleep 2
build w-later "$w"
same w-pending w-synced w-later

# ---- errors ----------------------------------------------------------------
# expect NAME STATUS PATTERN ARGS...: one com_err line matching PATTERN,
# exit STATUS
expect() {
	e_name=$1 e_want=$2 e_pattern=$3
	shift 3
	"$ORLOV_POPULATE" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	[ "$rc" = "$e_want" ] || { cat "$T_TMP/err" >&2; t_fail "$e_name: exit $rc, want $e_want"; }
	[ "$(wc -l <"$T_TMP/err")" -eq 1 ] || { cat "$T_TMP/err" >&2; t_fail "$e_name: not one line"; }
	grep -Eq "^orlov-populate: $e_pattern" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "$e_name: message does not match /$e_pattern/"; }
	echo "$e_name: ok: $(cat "$T_TMP/err")"
}
src=$T_TMP/src
mkdir -p "$src/a"
printf 'hello\n' >"$src/a/f"
img=$T_TMP/img
t_mkimage "$img" 4M -t ext2 -b 1024 -N 64

# 21: a missing IMAGE points to --create whatever SOURCE is (a tarball);
# a missing SOURCE may be a tarball; SIZE last, as mke2fs takes it
tar -C "$src" -cf "$T_TMP/src.tar" . || t_fail "tar"
expect 21-no-image-tar 1 "No such image file \(give --create SIZE to make one\) while opening $T_TMP/nope" \
	"$T_TMP/nope" "$T_TMP/src.tar"
expect 21-no-source 1 "No such file or directory while opening source $T_TMP/none.tar$" \
	"$img" "$T_TMP/none.tar"
"$ORLOV_POPULATE" -q --create --fs-type ext4 "$T_TMP/last.img" "$src" 8M ||
	t_fail "--create --fs-type ext4 IMAGE SOURCE SIZE"
dumpe2fs -h "$T_TMP/last.img" 2>/dev/null | grep -q '^Filesystem features:.*extent' ||
	t_fail "SIZE last: not ext4"
[ "$(dumpe2fs -h "$T_TMP/last.img" 2>/dev/null |
	awk '/^Block count:/ { n = $3 } /^Block size:/ { b = $3 } END { print n * b }')" = 8388608 ] ||
	t_fail "SIZE last: not 8M"
t_fsck "$T_TMP/last.img"
"$ORLOV_POPULATE" -q --create "$T_TMP/last2.img" "$src" auto+1M || t_fail "IMAGE SOURCE auto+1M"
t_fsck "$T_TMP/last2.img"
expect 21-no-size 2 "Invalid usage \(--create needs SIZE: --create SIZE, or SIZE after IMAGE and SOURCE\)" \
	--create --fs-type ext4 "$T_TMP/n.img" "$src"
[ -e "$T_TMP/n.img" ] && t_fail "21-no-size: an image was made"
echo "21: --create SIZE last: ok"

# 23: options that undo each other, refused as --atomic --in-place is
expect 23-delalloc 2 "Invalid usage \(--delalloc and --no-delalloc contradict each other: give one\)" \
	--delalloc --no-delalloc "$img" "$src"
expect 23-delalloc-rev 2 "Invalid usage \(--delalloc and --no-delalloc contradict each other: give one\)" \
	--no-delalloc --driver ext4 --delalloc "$img" "$src"
expect 23-verbose 2 "Invalid usage \(--verbose and --quiet contradict each other: give one\)" \
	-v -q "$img" "$src"

# 22: --json's error: a positive code, the message whole (the line on
# standard error), the path alone
json() {
	j_name=$1 j_path=$2
	shift 2
	"$ORLOV_POPULATE" --json "$@" 2>"$T_TMP/err" >"$T_TMP/json" &&
		t_fail "$j_name: no error"
	line=$(sed -n '1s/^orlov-populate: //p' "$T_TMP/err")
	grep -Eq '"code": [0-9]+[,}]' "$T_TMP/json" ||
		{ cat "$T_TMP/json" >&2; t_fail "$j_name: code not a positive number"; }
	grep -qF "\"message\": \"$line\"" "$T_TMP/json" ||
		{ cat "$T_TMP/json" >&2; t_fail "$j_name: message is not '$line'"; }
	if [ -n "$j_path" ]; then
		grep -qF "\"path\": \"$j_path\"" "$T_TMP/json" ||
			{ cat "$T_TMP/json" >&2; t_fail "$j_name: path is not $j_path"; }
	fi
	echo "$j_name: ok: $(cat "$T_TMP/json")"
}
json 22-no-image "$T_TMP/nope" "$T_TMP/nope" "$src"
json 22-no-source "$T_TMP/nosrc" "$img" "$T_TMP/nosrc"
grep -q '"code": 2,' "$T_TMP/json" || t_fail "22-no-source: code not ENOENT's"
printf 'garbage\n' >"$T_TMP/bad.tar"
json 22-bad-archive "$T_TMP/bad.tar" "$img" "$T_TMP/bad.tar"
printf '/a/dev q 600 0 0\n' >"$T_TMP/dt"
json 22-devtable-line "$T_TMP/dt" --devtable "$T_TMP/dt" "$img" "$src"
json 22-usage "" --policy x "$img" "$src"
grep -qF '"usage": "--policy takes orlov or oldalloc"' "$T_TMP/json" ||
	t_fail "22-usage: no usage"

# 19: bigalloc named, as other features are
if mke2fs -q -F -t ext4 -O bigalloc -C 16384 "$T_TMP/big.img" 32M >/dev/null 2>&1; then
	expect 19-bigalloc 1 "Filesystem feature not supported \(feature bigalloc: blocks allocated in clusters\) while checking superblock of $T_TMP/big.img" \
		"$T_TMP/big.img" "$src"
	expect 19-bigalloc-dry 1 "Filesystem feature not supported \(feature bigalloc" \
		--dry-run "$T_TMP/big.img" "$src"
	"$ORLOV_LAYOUT" dump "$T_TMP/big.img" 2>"$T_TMP/err" >/dev/null &&
		t_fail "19: orlov-layout dump read a bigalloc image"
	grep -q "feature bigalloc" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "19: orlov-layout does not name bigalloc"; }
else
	echo "19: skipped: this mke2fs makes no bigalloc image"
fi

# 20 (in part): a directory as --devtable or --fs-config, --create on a
# directory or on what is not a file: said as what they are
mkdir -p "$T_TMP/adir"
expect 20-devtable-dir 1 "Is a directory while reading device table $T_TMP/adir$" \
	--devtable "$T_TMP/adir" "$img" "$src"
expect 20-fs-config-dir 2 "Is a directory while reading fs_config $T_TMP/adir$" \
	--fs-config "$T_TMP/adir" "$img" "$src"
expect 20-create-dir 1 "Is a directory while checking $T_TMP/adir$" \
	--create 8M "$T_TMP/adir" "$src"
expect 20-create-null 1 "IMAGE is neither a regular file nor a block device while checking /dev/null$" \
	--create 8M /dev/null "$src"
