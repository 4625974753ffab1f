#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Memory flat in the tree's size: the staged inodes beyond a budget
# (ORLOV_STAGE_BUDGET, KiB) go to an unlinked spill file, so 10 times the
# entries must not take more than a little more memory (it was about 230
# bytes per entry).  The images made through the spill file are the ones
# made with everything in memory, byte for byte: hard links and
# in-inode attributes bring spilled inodes back and change them.  The
# same for the commit's copy of the blocks it changes (a journal's
# transaction, or the copy renamed over the image: the inode tables, a
# quarter of a KiB per inode), under the same budget.
. "$(dirname "$0")/lib.sh"
[ -x /usr/bin/time ] || t_skip "no /usr/bin/time (package time)"
command -v python3 >/dev/null 2>&1 || t_skip "no python3"

# N files in directories of 100; with LINKS, each directory's first
# file also linked from the last directory, and an attribute on it.
python3 - "$T_TMP" <<'PY' || t_fail "python tree"
import os, sys
for n, links in ((4000, 0), (40000, 0), (6000, 1)):
    root = os.path.join(sys.argv[1], 't%d' % n)
    for i in range(n):
        d = os.path.join(root, 'd%03d' % (i // 100))
        if i % 100 == 0:
            os.makedirs(d)
        p = os.path.join(d, 'f%02d' % (i % 100))
        open(p, 'w').close()
        if links and i % 100 == 0:
            try:
                os.setxattr(p, 'user.n', b'%d' % i)
            except OSError:
                pass
    if links:
        z = os.path.join(root, 'zz')
        os.makedirs(z)
        for k in range(n // 100):
            os.link(os.path.join(root, 'd%03d' % k, 'f00'),
                    os.path.join(z, 'l%03d' % k))
PY

# run NAME BUDGET TREE IMAGE [OPTIONS...]: fill a fresh image (ext2, or
# what MKFS says); rss is the run's peak in KiB.
run() {
	r_name=$1 r_budget=$2 r_tree=$3 r_img=$4
	shift 4
	# shellcheck disable=SC2086
	t_mkimage "$r_img" 64M ${MKFS:--t ext2} -b 4096 -I 256 -N 48000
	ORLOV_STAGE_BUDGET=$r_budget /usr/bin/time -f %M -o "$T_TMP/rss" \
		"$ORLOV_HOOKS_POPULATE" -q "$@" "$r_img" "$r_tree" ||
		t_fail "$r_name: exit $?"
	t_fsck "$r_img"
	rss=$(tail -n 1 "$T_TMP/rss")
}

# 64 KiB: four chunks of 64 inodes in memory
run small 64 "$T_TMP/t4000" "$T_TMP/small.img"
small=$rss
run large 64 "$T_TMP/t40000" "$T_TMP/large.img"
large=$rss
echo "peak RSS: 4,000 entries $small KiB, 40,000 entries $large KiB"
# 36,000 more inodes held in memory would be 5 MiB and more; a sanitizer
# build's allocator keeps freed memory in quarantine, so its peak says
# nothing of what is held (the comparisons below still run there)
if grep -q __asan_init "$ORLOV_POPULATE"; then
	echo "peak RSS not compared: a sanitizer build"
elif [ $((large - small)) -ge 2048 ]; then
	t_fail "peak RSS grows with the tree: $small KiB at 4,000 entries, $large KiB at 40,000"
fi
run unbounded 1048576 "$T_TMP/t40000" "$T_TMP/mem.img"
cmp "$T_TMP/large.img" "$T_TMP/mem.img" ||
	t_fail "the image made through the spill file differs"
echo "40,000 entries: the same image with and without the spill file"

for drv in ext2 ext4; do
	run links-$drv 64 "$T_TMP/t6000" "$T_TMP/links.img" --driver $drv
	run links-mem-$drv 1048576 "$T_TMP/t6000" "$T_TMP/mem.img" --driver $drv
	cmp "$T_TMP/links.img" "$T_TMP/mem.img" ||
		t_fail "$drv driver, hard links: the image made through the spill file differs"
	echo "$drv driver, hard links and attributes: the same image with and without the spill file"
done

# The commit's captured blocks: through the journal (16 MiB holds the
# transaction) and through a copy (the default 4 MiB journal does not).
# 36,000 more inodes in the capture would be 9 MiB.
for j in 16 4; do
	MKFS="-t ext4 -J size=$j" run cap-small-$j 64 "$T_TMP/t4000" "$T_TMP/small.img"
	small=$rss
	MKFS="-t ext4 -J size=$j" run cap-large-$j 64 "$T_TMP/t40000" "$T_TMP/large.img"
	large=$rss
	echo "ext4 image, ${j} MiB journal: peak RSS 4,000 entries $small KiB, 40,000 entries $large KiB"
	if ! grep -q __asan_init "$ORLOV_POPULATE" && [ $((large - small)) -ge 4096 ]; then
		t_fail "${j} MiB journal: peak RSS grows with the tree: $small KiB at 4,000 entries, $large KiB at 40,000"
	fi
	MKFS="-t ext4 -J size=$j" run cap-mem-$j 1048576 "$T_TMP/t40000" "$T_TMP/mem.img"
	cmp "$T_TMP/large.img" "$T_TMP/mem.img" ||
		t_fail "${j} MiB journal: the image committed through the spill file differs"
	echo "ext4 image, ${j} MiB journal: the same image with and without the spill file"
done
