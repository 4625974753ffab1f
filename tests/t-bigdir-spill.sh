#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A directory's blocks past its budget go to a scratch file in TMPDIR
# (ORLOV_DIR_BUDGET, KiB, for tests; at least 8 blocks stay): a million
# names held 16 to 28 MiB before.  Where the blocks wait never changes
# the image: with every block but eight spilled, each image here is the
# one made with all of them in memory, byte for byte: linear directories
# (the ext2 driver), an htree of two levels (1 KiB blocks, metadata_csum),
# a directory inside another spilling at the same time, and a merge into
# a large directory the image has (its names looked up in spilled
# blocks).  A scratch file that cannot be made is told as TMPDIR's, and
# the image is left as it was.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || t_skip "no python3"

# d: 12,000 names of 1 to 40 bytes (a linear directory's short names go
# back into blocks with room); d/sub: 6,000 more, made while d is open;
# more/d: 3,000 names to merge into d, one of them already there
python3 - "$T_TMP/src" "$T_TMP/more" <<'PY' || t_fail "python tree"
import os, sys
src, more = sys.argv[1], sys.argv[2]
def names(n, salt):
    for i in range(n):
        k = (i * 7919 + salt) % 40
        yield ('%s%06d' % (chr(97 + i % 26), i) + 'x' * 40)[:1 + k] + '-%d' % i
os.makedirs(os.path.join(src, 'd', 'sub'))
for name in names(12000, 1):
    open(os.path.join(src, 'd', name), 'w').close()
for name in names(6000, 2):
    open(os.path.join(src, 'd', 'sub', name), 'w').close()
os.makedirs(os.path.join(more, 'd'))
for i in range(3000):
    open(os.path.join(more, 'd', 'm-%05d' % i), 'w').close()
PY
t_pin_times "$T_TMP/src"
t_pin_times "$T_TMP/more"

# fill NAME BUDGET MKE2FS-OPTIONS...: NAME.img made and filled from src,
# the directories' budget BUDGET KiB (empty: the default)
fill() {
	f_name=$1 f_budget=$2
	shift 2
	t_mkimage "$T_TMP/$f_name.img" 64M "$@"
	ORLOV_DIR_BUDGET=$f_budget "$ORLOV_HOOKS_POPULATE" -q $drv \
		"$T_TMP/$f_name.img" "$T_TMP/src" || t_fail "$f_name: exit $?"
	t_fsck "$T_TMP/$f_name.img"
}

for c in "ext2-linear|--driver ext2|-t ext2 -b 1024 -N 30000" \
	 "ext4-htree|--driver ext4|-t ext4 -b 1024 -N 30000 -O metadata_csum" \
	 "ext4-4k|--driver ext4|-t ext4 -b 4096 -N 30000"; do
	name=${c%%|*} rest=${c#*|}
	drv=${rest%%|*} mk=${rest#*|}
	# shellcheck disable=SC2086
	fill "$name-memory" "" $mk
	# shellcheck disable=SC2086
	fill "$name-spilled" 1 $mk
	cmp "$T_TMP/$name-memory.img" "$T_TMP/$name-spilled.img" ||
		t_fail "$name: the image made with the directories spilled differs"
	n=$(debugfs -R "ls -p /d" "$T_TMP/$name-spilled.img" 2>/dev/null | awk -F/ '$2 > 0' | wc -l)
	# 12,000 names, sub, . and .. (an index block's empty entry is none)
	[ "$n" = 12003 ] || t_fail "$name: $n entries in /d"
	echo "$name: the same image with every directory block but eight spilled"

	# merge 3,000 names into d, spilled and not
	for b in "" 1; do
		cp "$T_TMP/$name-memory.img" "$T_TMP/merge$b.img"
		ORLOV_DIR_BUDGET=$b "$ORLOV_HOOKS_POPULATE" -q --merge $drv \
			"$T_TMP/merge$b.img" "$T_TMP/more" || t_fail "$name: merge (budget '$b')"
		t_fsck "$T_TMP/merge$b.img"
	done
	cmp "$T_TMP/merge.img" "$T_TMP/merge1.img" ||
		t_fail "$name: the merge with the directory spilled differs"
	# a name d has: found in its spilled blocks, refused
	cp "$T_TMP/$name-memory.img" "$T_TMP/before.img"
	mkdir -p "$T_TMP/clash/d"
	last=$(ls "$T_TMP/src/d" | grep -v '^sub$' | tail -n 1)
	: >"$T_TMP/clash/d/$last"
	ORLOV_DIR_BUDGET=1 "$ORLOV_HOOKS_POPULATE" --merge $drv \
		"$T_TMP/before.img" "$T_TMP/clash" 2>"$T_TMP/err" &&
		t_fail "$name: a name the directory has was copied over"
	grep -qx "orlov-populate: Name already exists in the target directory while checking $T_TMP/clash/d/$last" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "$name: clash message"; }
	cmp -s "$T_TMP/before.img" "$T_TMP/$name-memory.img" ||
		t_fail "$name: the refused merge changed the image"
	rm -rf "$T_TMP/clash"
done

# no TMPDIR: within the budget nothing needs it; past it, one line that
# names TMPDIR, and the image as it was
drv="--driver ext4"
t_mkimage "$T_TMP/tmp.img" 64M -t ext4 -b 1024 -N 30000
cp "$T_TMP/tmp.img" "$T_TMP/tmp-before.img"
TMPDIR=$T_TMP/nope ORLOV_DIR_BUDGET=1 "$ORLOV_HOOKS_POPULATE" $drv \
	"$T_TMP/tmp.img" "$T_TMP/src" 2>"$T_TMP/err" &&
	t_fail "spilled into a TMPDIR that does not exist"
[ "$(wc -l <"$T_TMP/err")" = 1 ] || { cat "$T_TMP/err" >&2; t_fail "not one line"; }
grep -qx "orlov-populate: No such file or directory while creating the scratch file in $T_TMP/nope (TMPDIR)" "$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "TMPDIR message"; }
cmp -s "$T_TMP/tmp.img" "$T_TMP/tmp-before.img" ||
	t_fail "the failed run changed the image"
TMPDIR=$T_TMP/nope "$ORLOV_HOOKS_POPULATE" -q $drv "$T_TMP/tmp.img" "$T_TMP/src" ||
	t_fail "within the budget, TMPDIR was needed"
t_fsck "$T_TMP/tmp.img"
echo "no TMPDIR: refused in one line past the budget, not needed within it"
