#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ext4 images as mke2fs -t ext4 makes them (Debian 12's mke2fs.conf:
# extent, flex_bg, 64bit, metadata_csum, huge_file, dir_nlink,
# extra_isize) and their common variants: without --driver the tool takes
# the ext4 driver and delayed allocation, as mounting them does; regular
# files, directories and slow symlinks are mapped by extents (a fast
# symlink is not), extent-tree blocks carry their checksums, a file of many
# islands gets tree blocks; e2fsck -fn is clean and the contents
# read back for every variant, with and without delayed allocation.  The
# golden dumps keep every inode and block (their truth is the Debian
# kernel's crosscheck, tests/kernel/cases.list's e* cases).  The ext2
# driver refuses the images; --create --fs-type ext4 makes one.
. "$(dirname "$0")/lib.sh"

g=$t_here/golden
t_sample_tree "$T_TMP/src"
t_many_names "$T_TMP/src/many"
# 400 islands of 4 KiB, 8 KiB apart (holes in a source filesystem of
# 4 KiB blocks too): 400 extents, five leaves of 1 KiB blocks, more than
# the inode's four index entries: an index block between (depth 2)
i=0
: >"$T_TMP/src/islands"
while [ $i -lt 400 ]; do
	printf 'island %s' $i | dd of="$T_TMP/src/islands" bs=1024 seek=$((i * 8)) \
		conv=notrunc status=none
	i=$((i + 1))
done
t_pin_times "$T_TMP/src"
src=$T_TMP/src

# inode flags of PATH in IMAGE, in hex
flags() {
	debugfs -R "stat $2" "$1" 2>/dev/null |
		sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p'
}

# mapped PATH-IN-IMAGE IMAGE: the inode has EXT4_EXTENTS_FL
mapped() {
	[ $(( $(flags "$2" "$1") & 0x80000 )) != 0 ]
}

# case NAME SIZE MKE2FS-OPTIONS...: both mounts, checked; the golden dump
# for the cases that have one
run_case() {
	name=$1 size=$2
	shift 2
	t_mkimage "$T_TMP/$name.base" "$size" -t ext4 "$@"
	for mode in delalloc nodelalloc; do
		img=$T_TMP/$name.$mode.img
		cp "$T_TMP/$name.base" "$img"
		opt=
		[ $mode = nodelalloc ] && opt=--no-delalloc
		"$ORLOV_POPULATE" -q --cpus 2 $opt "$img" "$src" ||
			t_fail "$name/$mode: orlov-populate failed"
		t_fsck "$img"
		t_verify "$img" "$src" /
		for p in /usr/lib/big /usr/lib /usr/bin/slow /islands /many; do
			mapped "$p" "$img" || t_fail "$name/$mode: $p not extent-mapped"
		done
		! mapped /usr/bin/fast "$img" ||
			t_fail "$name/$mode: a fast symlink with EXT4_EXTENTS_FL"
		debugfs -R "ex /islands" "$img" 2>/dev/null | grep -q '^ *0/ *[1-5] ' ||
			t_fail "$name/$mode: /islands has no extent-tree blocks"
		if [ -e "$g/ext4-$name.$mode.dump" ]; then
			"$ORLOV_LAYOUT" dump "$img" >"$T_TMP/dump" ||
				t_fail "$name/$mode: dump"
			diff -u "$g/ext4-$name.$mode.dump" "$T_TMP/dump" >&2 ||
				t_fail "$name/$mode: not the golden layout"
		fi
		echo "$name/$mode: ok"
	done
}

run_case 1k 32M -b 1024
run_case 4k 64M -b 4096
run_case 1k-noflex 32M -b 1024 -O ^flex_bg
run_case 4k-nocsum 64M -b 4096 -O ^metadata_csum
run_case 1k-i128 32M -b 1024 -I 128
run_case 2k-32bit-seed 32M -b 2048 -O ^64bit,metadata_csum_seed
run_case 1k-g4-zeroed 32M -b 1024 -G 4 -E lazy_itable_init=0

# The default is what mount gives: the ext4 driver, delayed allocation.
t_mkimage "$T_TMP/d.img" 32M -t ext4 -b 1024
cp "$T_TMP/d.img" "$T_TMP/e.img"
"$ORLOV_POPULATE" -q "$T_TMP/d.img" "$src" || t_fail "default: refused"
"$ORLOV_POPULATE" -q --driver ext4 --delalloc "$T_TMP/e.img" "$src" ||
	t_fail "explicit: refused"
cmp -s "$T_TMP/d.img" "$T_TMP/e.img" ||
	t_fail "default: not the image of --driver ext4 --delalloc"
# ... unless the superblock's default mount options say nodelalloc
t_mkimage "$T_TMP/d.img" 32M -t ext4 -b 1024
tune2fs -o nodelalloc "$T_TMP/d.img" >/dev/null || t_fail "tune2fs -o nodelalloc"
cp "$T_TMP/d.img" "$T_TMP/e.img"
"$ORLOV_POPULATE" -q "$T_TMP/d.img" "$src" || t_fail "nodelalloc default: refused"
"$ORLOV_POPULATE" -q --no-delalloc "$T_TMP/e.img" "$src" ||
	t_fail "nodelalloc explicit: refused"
cmp -s "$T_TMP/d.img" "$T_TMP/e.img" ||
	t_fail "default mount option nodelalloc: not the image of --no-delalloc"
echo "defaults: ok"

# The ext2 driver cannot write extents: refused, the feature named, the
# image untouched.
t_mkimage "$T_TMP/r.img" 16M -t ext4 -b 1024
cp "$T_TMP/r.img" "$T_TMP/r.before"
"$ORLOV_POPULATE" -q --driver ext2 "$T_TMP/r.img" "$src" 2>"$T_TMP/err" &&
	t_fail "--driver ext2 wrote an ext4 image"
grep -q "^orlov-populate: Filesystem feature not supported while checking filesystem $T_TMP/r.img (feature extent)\$" \
	"$T_TMP/err" || t_fail "ext2 driver: $(cat "$T_TMP/err")"
cmp -s "$T_TMP/r.img" "$T_TMP/r.before" || t_fail "refused image changed"
echo "ext2 driver: refused"

# --create --fs-type ext4, of a fixed size and of the least it takes
for size in 48M auto; do
	rm -f "$T_TMP/c.img"
	"$ORLOV_POPULATE" -q --create $size --fs-type ext4 "$T_TMP/c.img" "$src" ||
		t_fail "--create $size --fs-type ext4 failed"
	t_fsck "$T_TMP/c.img"
	t_verify "$T_TMP/c.img" "$src" /
	dumpe2fs -h "$T_TMP/c.img" 2>/dev/null | grep -q '^Filesystem features:.* extent .*flex_bg' ||
		t_fail "--create $size --fs-type ext4: no extent/flex_bg"
	mapped /usr/lib/big "$T_TMP/c.img" ||
		t_fail "--create $size --fs-type ext4: files not extent-mapped"
	echo "create $size: ok"
done
exit 0
