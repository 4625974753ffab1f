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
