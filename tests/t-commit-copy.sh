#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# An image whose journal is too short for the commit is committed as a
# copy renamed over it.  Where the inode-table blocks of the new inodes
# alone overflow the journal, the copy is made before the write pass and
# the run writes into it, as into an image without a journal: the image
# itself is never written (killed at the first write, it is the same
# file byte for byte), the data is not copied a second time at the
# commit, and the superblock's lifetime writes count the run's writes
# (the copy made at the commit said 1 MB for a run of 425 MB).  Where
# they fit, the journal takes the commit and no copy is made.
. "$(dirname "$0")/lib.sh"

# 40 directories of 100 files of 3 KiB: 4,000 new inodes of 256 bytes,
# 1,000 inode-table blocks of 1 KiB, and 12 MiB of data
mkdir "$T_TMP/src" || t_fail "mkdir"
i=0
while [ $i -lt 40 ]; do
	mkdir "$T_TMP/src/d$i" || t_fail "mkdir d$i"
	j=0
	while [ $j -lt 100 ]; do
		head -c 3072 /dev/zero | tr '\0' "$(printf '\\%03o' $((65 + j % 26)))" \
			>"$T_TMP/src/d$i/f$j"
		j=$((j + 1))
	done
	i=$((i + 1))
done
t_pin_times "$T_TMP/src"
export SOURCE_DATE_EPOCH=1700000000
t_clamp=--clamp

# lifetime IMAGE: the superblock's s_kbytes_written, in KiB
lifetime() {
	dumpe2fs -h "$1" 2>/dev/null | awk '/^Lifetime writes:/ {
		n = $3; u = $4
		if (u == "MB") n *= 1024; else if (u == "GB") n *= 1048576
		print int(n) }'
}

# a journal of 1,024 blocks: too short for the 1,000 table blocks and
# the rest of the commit
t_mkimage "$T_TMP/short.img" 64M -t ext4 -b 1024 -I 256 -N 8192 -J size=1
cp "$T_TMP/short.img" "$T_TMP/short.orig"
before=$(stat -c %i "$T_TMP/short.img")
"$ORLOV_POPULATE" -q "$T_TMP/short.img" "$T_TMP/src" || t_fail "short journal: exit $?"
t_fsck "$T_TMP/short.img"
t_verify "$T_TMP/short.img" "$T_TMP/src"
[ "$(stat -c %i "$T_TMP/short.img")" != "$before" ] ||
	t_fail "short journal: the image was not committed as a copy"
kb=$(lifetime "$T_TMP/short.img")
[ "${kb:-0}" -ge 12288 ] ||
	t_fail "short journal: lifetime writes of ${kb:-?} KiB for 12 MiB of data"
echo "short journal: committed as a copy, $kb KiB of lifetime writes"

# killed at its first write, the image is the file it was
cp "$T_TMP/short.orig" "$T_TMP/kill.img"
ORLOV_FAULT=kill:1 "$ORLOV_HOOKS_POPULATE" -q "$T_TMP/kill.img" "$T_TMP/src" \
	>/dev/null 2>&1 && t_fail "kill:1: the run was not killed"
cmp "$T_TMP/kill.img" "$T_TMP/short.orig" ||
	t_fail "killed at its first write, the image with a short journal changed"
# the copy the killed run left goes with the next run
"$ORLOV_POPULATE" -q "$T_TMP/kill.img" "$T_TMP/src" || t_fail "after kill: exit $?"
cmp "$T_TMP/kill.img" "$T_TMP/short.img" ||
	t_fail "the run after the killed one made another image"
ls -a "$T_TMP" | grep -q orlov- &&
	t_fail "a copy is left next to the image: $(ls -a "$T_TMP" | grep orlov-)"
echo "short journal: killed at the first write, the image unchanged"

# a journal of 4,096 blocks takes the commit: in place, no copy
t_mkimage "$T_TMP/long.img" 64M -t ext4 -b 1024 -I 256 -N 8192 -J size=4
before=$(stat -c %i "$T_TMP/long.img")
"$ORLOV_POPULATE" -q "$T_TMP/long.img" "$T_TMP/src" || t_fail "long journal: exit $?"
t_fsck "$T_TMP/long.img"
[ "$(stat -c %i "$T_TMP/long.img")" = "$before" ] ||
	t_fail "long journal: the image was replaced by a copy"
t_verify "$T_TMP/long.img" "$T_TMP/src"
echo "long journal: through the journal, in place"
