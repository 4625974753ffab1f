#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job on a sample tree: build, copy a small root filesystem (the
# e2fsprogs documentation as /usr/share/doc, generated files in the usual
# top-level directories) into a fresh ext4 image of 4 KiB blocks in 4 flex
# groups, as image builders make them, check it, show the layout next to
# what mke2fs -d makes of the same tree, and say where the programs are.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tools/deps.sh"
b=$("$top/tools/build.sh")
export MKE2FS_CONFIG=$top/images/mke2fs.conf E2FSPROGS_FAKE_TIME=1700000000
w=$(mktemp -d "${TMPDIR:-/tmp}/orlov-sample.XXXXXX")
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/tree/usr/share/doc"
cp -a /usr/share/doc/e2fsprogs "$w/tree/usr/share/doc/e2fsprogs"
for d in bin etc lib home var srv opt usr/lib; do
	mkdir -p "$w/tree/$d/sub"
	for i in 1 2 3; do head -c $((i * 50000)) /dev/urandom >"$w/tree/$d/sub/f$i"; done
done
# 64 groups of 8 MiB in 4 flex groups of 16 (ext4 spreads top-level
# directories over flex groups): small, yet enough to show the spreading
opts="-q -F -t ext4 -b 4096 -g 2048 -N 4096 -I 256 -U 6f726c6f-0000-4000-8000-000000000001 -E hash_seed=6f726c6f-0000-4000-8000-000000000002"
# shellcheck disable=SC2086
mke2fs $opts "$w/orlov.img" 512M >/dev/null 2>&1
# shellcheck disable=SC2086
mke2fs $opts -d "$w/tree" "$w/mke2fs.img" 512M >/dev/null 2>&1
"$b/src/orlov-populate" "$w/orlov.img" "$w/tree"
e2fsck -fn "$w/orlov.img" >/dev/null 2>&1 && echo "e2fsck -fn: clean"
"$b/src/orlov-layout" verify "$w/orlov.img" "$w/tree" | tail -1
echo "--- orlov-populate: layout (top of the tree)"
"$b/src/orlov-layout" dump "$w/orlov.img" | awk 'NR <= 25'
echo "--- top-level directories: orlov-populate vs mke2fs -d"
printf 'orlov-populate: '; "$b/src/orlov-layout" stats "$w/orlov.img" | grep top_level
printf 'mke2fs -d:      '; "$b/src/orlov-layout" stats "$w/mke2fs.img" | grep top_level
echo "--- the programs"
echo "built in $b/src: orlov-populate, orlov-layout, orlov-mkfs"
echo "to use them: export PATH=$b/src:\$PATH"
echo "or install them (to /usr/local/bin): make -C $b install"
