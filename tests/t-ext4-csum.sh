#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# metadata_csum on the indirect-mapped images (mke2fs -t ext2/ext3 -O
# metadata_csum), written as Linux 6.1's ext4 driver writes them: every
# directory leaf ends in a dirent tail, htree roots and index nodes in a dx
# tail (fewer names a block, so other block counts and splits: the golden
# dumps keep every inode and block), inodes, attribute blocks, bitmaps,
# descriptors and superblock with their checksums, the journal's commit
# with checksums v3.  e2fsck -fn verifies every checksum.  The ext2 driver
# refuses the feature.
. "$(dirname "$0")/lib.sh"
command -v setfattr >/dev/null 2>&1 || t_skip "setfattr not found (attr)"

g=$t_here/golden

t_sample_tree "$T_TMP/src"
# 3,000 names: an htree of two levels in 1 KiB blocks (root limit 123
# with the dx tail), one level in 4 KiB ones
mkdir "$T_TMP/src/many"
(cd "$T_TMP/src/many" && seq -f 'a-rather-longer-file-name-%g' 1 3000 | xargs touch)
# attributes too big for any inode: attribute blocks, two of them shared
for f in etc/passwd usr/bin/twelve var/log/l1 var/log/l2; do
	setfattr -n user.big -v "$(printf 'v%.0s' $(seq 1 300))" "$T_TMP/src/$f" ||
		t_fail "setfattr"
done
setfattr -n user.other -v "$(printf 'w%.0s' $(seq 1 300))" "$T_TMP/src/var/log/l2"
t_pin_times "$T_TMP/src"

# case NAME SIZE MKE2FS-OPTIONS
run_case() {
	name=$1 size=$2
	shift 2
	img=$T_TMP/$name.img
	t_mkimage "$img" "$size" -O metadata_csum "$@"
	"$ORLOV_POPULATE" -q --driver ext4 --no-delalloc --cpus 2 "$img" "$T_TMP/src" ||
		t_fail "$name: orlov-populate failed"
	t_fsck "$img"
	t_verify "$img" "$T_TMP/src" /
	"$ORLOV_LAYOUT" dump "$img" >"$T_TMP/$name.full" || t_fail "$name: dump"
	# of the 3,000 names' inodes every hundredth (they are in order)
	awk '!/^\/many\// || ++n % 100 == 0' "$T_TMP/$name.full" >"$T_TMP/$name.dump"
	if [ -n "${ORLOV_REGEN_GOLDEN:-}" ]; then
		cp "$T_TMP/$name.dump" "$g/$name.dump"
	elif ! diff -u "$g/$name.dump" "$T_TMP/$name.dump" >&2; then
		t_fail "$name: dump differs from tests/golden/$name.dump"
	fi
	debugfs -R "htree /many" "$img" 2>/dev/null >"$T_TMP/htree" ||
		t_fail "$name: /many is no htree"
	grep -q '^Number of entries (count): ' "$T_TMP/htree" ||
		t_fail "$name: /many is no htree"
	# the tail where the kernel puts it: the last 12 bytes of /etc's
	# block, inode 0, rec_len 12, name_len 0, file type 0xde
	blk=$(debugfs -R "blocks /etc" "$img" 2>/dev/null | tr -d ' \n')
	bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
	tail=$(dd if="$img" bs=1 skip=$((blk * bs + bs - 12)) count=8 status=none |
		od -An -tx1 | tr -d ' \n')
	[ "$tail" = 000000000c0000de ] || t_fail "$name: /etc's block ends in $tail, no dirent tail"
	echo "$name: ok ($(grep -c '^Entry #' "$T_TMP/htree") index entries)"
}

run_case csum-1k-ext2 16M -t ext2 -b 1024 -I 128 -N 4096
run_case csum-1k-ext3 16M -t ext3 -b 1024 -I 256 -N 4096
run_case csum-4k-ext2 64M -t ext2 -b 4096 -I 256 -N 4096
run_case csum-4k-ext3 64M -t ext3 -b 4096 -I 128 -N 4096
# two levels of index in 1 KiB blocks
debugfs -R "htree /many" "$T_TMP/csum-1k-ext2.img" 2>/dev/null |
	grep -q 'Indirect levels: 1' || t_fail "csum-1k-ext2: /many has one level"

# The journal as the kernel leaves it after a mount -t ext4 (checksums
# v3): the commit goes through it, its blocks checksummed.
img=$T_TMP/j.img
t_mkimage "$img" 16M -O metadata_csum -t ext3 -b 1024 -I 256 -N 4096
printf 'jo -c\njc\n' | debugfs -w -f - "$img" >/dev/null 2>&1
dumpe2fs -h "$img" 2>/dev/null | grep -q '^Journal features:.*journal_checksum_v3' ||
	t_fail "debugfs did not turn on the journal's checksums"
jseq() { dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Journal sequence: *//p'; }
before=$(jseq "$img")
"$ORLOV_POPULATE" -q --driver ext4 --no-delalloc --cpus 2 "$img" "$T_TMP/src" || t_fail "journal: orlov-populate failed"
[ $(($(jseq "$img"))) = $((before + 1)) ] || t_fail "journal: the commit did not go through the journal"
t_fsck "$img"
t_verify "$img" "$T_TMP/src" /
"$ORLOV_LAYOUT" dump "$img" | cmp -s - "$T_TMP/csum-1k-ext3.full" ||
	t_fail "journal: not the layout of csum-1k-ext3"
echo "journal v3: ok"

# The ext2 driver writes no checksum: refused, the feature named.
t_mkimage "$img" 8M -O metadata_csum -t ext2
if "$ORLOV_POPULATE" -q --driver ext2 "$img" "$T_TMP/src" 2>"$T_TMP/err"; then
	t_fail "--driver ext2 wrote a metadata_csum image"
fi
grep -q 'feature metadata_csum' "$T_TMP/err" || t_fail "ext2: $(cat "$T_TMP/err")"
echo "ext2 driver: refused"

# The first pass counts the tail too: names of 120 bytes fill a block
# eight to a block without it, seven with it, so 3000 of them need 429
# leaves, not 375.  An image with room for the latter only is refused
# before anything is written, not out of space halfway.
mkdir -p "$T_TMP/long/d"
(cd "$T_TMP/long/d" && seq -w 1 3000 | sed 's/$/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/' |
	xargs touch) || t_fail "touch"
t_mkimage "$img" 1200k -O metadata_csum,^dir_index,^resize_inode -t ext2 -b 1024 -I 256 -N 3100
cp "$img" "$T_TMP/before"
"$ORLOV_POPULATE" --driver ext4 "$img" "$T_TMP/long" 2>"$T_TMP/err" &&
	t_fail "tails: a tree bigger than the image went in"
grep -q "^orlov-populate: Not enough free blocks in the image for the source tree while checking $T_TMP/long: it needs" "$T_TMP/err" ||
	t_fail "tails: $(cat "$T_TMP/err")"
cmp -s "$T_TMP/before" "$img" || t_fail "tails: the image changed"
echo "estimate with tails: ok"
exit 0
