#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The main job on a sample tree: build, copy the e2fsprogs documentation
# tree and a generated tree into a fresh 4-group image, check it, and show
# the layout next to what mke2fs -d makes of the same tree.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tools/deps.sh"
b=$("$top/tools/build.sh")
export MKE2FS_CONFIG=$top/images/mke2fs.conf E2FSPROGS_FAKE_TIME=1700000000
w=$(mktemp -d "${TMPDIR:-/tmp}/orlov-sample.XXXXXX")
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/tree"
cp -a /usr/share/doc/e2fsprogs "$w/tree/doc"
for d in bin etc lib home var srv opt; do
	mkdir -p "$w/tree/$d/sub"
	for i in 1 2 3; do head -c $((i * 5000)) /dev/urandom >"$w/tree/$d/sub/f$i"; done
done
opts="-q -F -t ext2 -b 1024 -g 2048 -N 1024 -I 256 -U 6f726c6f-0000-4000-8000-000000000001 -E hash_seed=6f726c6f-0000-4000-8000-000000000002"
# shellcheck disable=SC2086
mke2fs $opts "$w/orlov.img" 8M >/dev/null 2>&1
# shellcheck disable=SC2086
mke2fs $opts -d "$w/tree" "$w/mke2fs.img" 8M >/dev/null 2>&1
"$b/src/orlov-populate" "$w/orlov.img" "$w/tree"
e2fsck -fn "$w/orlov.img" >/dev/null 2>&1 && echo "e2fsck -fn: clean"
"$b/src/orlov-layout" verify "$w/orlov.img" "$w/tree" | tail -1
echo "--- orlov-populate: layout (top of the tree)"
"$b/src/orlov-layout" dump "$w/orlov.img" | awk 'NR <= 25'
echo "--- top-level directories: orlov-populate vs mke2fs -d"
printf 'orlov-populate: '; "$b/src/orlov-layout" stats "$w/orlov.img" | grep top_level
printf 'mke2fs -d:      '; "$b/src/orlov-layout" stats "$w/mke2fs.img" | grep top_level
