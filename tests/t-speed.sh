#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What keeps a run fast, in counts that do not depend on the machine's
# load: the data of a directory's small files reaches the image in a few
# writes, not one per file (ext2; ext4 through the delayed writeback).
# The reader thread (--jobs 2) changes no byte of the image.
# The growth of one directory's time with its names is a benchmark, not a
# test (CPU time moves with the load: k = 1.35 in a clean-clone run beside
# QEMU guests, 1.01 alone): make bench's empty-big workload reports it.
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
	ORLOV_FAULT=count "$ORLOV_HOOKS_POPULATE" "$T_TMP/img" "$src" >/dev/null 2>"$T_TMP/count" ||
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

# The reader thread (--jobs 2) opens files ahead of the walk, which takes
# them in its own order: the image is the one --jobs 1 writes, byte for
# byte.  The tree mixes what the reader does (regular files, past its
# 16-name ring), what it stops at (directories) and what it leaves to the
# walk (symlinks, FIFOs), with attributes and hard links; in the write
# pass it also reads small dense files whole (up to 64 KiB) and finds
# where the first data ends: files at and past that size, and sparse ones
# (a hole first, a hole last) are the walk's to read.
mix=$T_TMP/mix
t_sample_tree "$mix"
mkdir -p "$mix/m" || t_fail "mkdir"
i=0
while [ $i -lt 60 ]; do
	case $((i % 9)) in
	0) mkdir "$mix/m/n$i" && printf '%s' $i >"$mix/m/n$i/in" ;;
	4) ln -s "n$i" "$mix/m/n$i" ;;
	7) mkfifo "$mix/m/n$i" ;;
	8) ln "$mix/m/n$((i - 2))" "$mix/m/n$i" ;;
	*) head -c $((i * 37)) /dev/zero | tr '\0' y >"$mix/m/n$i" ;;
	esac || t_fail "mix $i"
	i=$((i + 1))
done
seq 100000 | head -c 65536 >"$mix/m/s64k" &&
	seq 100000 | head -c 65537 >"$mix/m/s64k1" &&
	seq 100000 | head -c 5000 >"$mix/m/shole" &&
	truncate -s 300000 "$mix/m/shole" &&
	printf tail | dd of="$mix/m/sdata" bs=1 seek=200000 conv=notrunc 2>/dev/null ||
	t_fail "mix: sizes and holes"
find "$mix" -type f -exec setfattr -n user.k -v v {} + 2>/dev/null ||
	echo "no user attributes in TMPDIR: the images are compared without"
t_pin_times "$mix"
for fs in ext2 ext4; do
	for j in 1 2; do
		t_mkimage "$T_TMP/j$j" 16M -t $fs -b 1024 -N 512
		SOURCE_DATE_EPOCH=1700000000 "$ORLOV_POPULATE" -q --jobs $j \
			"$T_TMP/j$j" "$mix" || t_fail "$fs: --jobs $j"
	done
	t_fsck "$T_TMP/j2"
	t_verify "$T_TMP/j2" "$mix"
	cmp "$T_TMP/j1" "$T_TMP/j2" || t_fail "$fs: --jobs 2 differs from --jobs 1"
	echo "$fs: --jobs 1 and --jobs 2 give the same image"
done
"$ORLOV_POPULATE" --jobs 3 "$T_TMP/j1" "$mix" 2>"$T_TMP/err" && t_fail "--jobs 3 taken"
grep -q -- "--jobs takes 1 or 2" "$T_TMP/err" || t_fail "--jobs 3: $(cat "$T_TMP/err")"
