#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --dry-run: nothing written, and the inodes and blocks it reports are
# exactly what the real run then takes; --json; --create auto[+margin].
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || t_skip "no python3"
src=$T_TMP/src
t_sample_tree "$src"
mkdir -p "$src/big"
(cd "$src/big" && seq 1 700 | sed 's/^/a-fairly-long-file-name-/' | xargs touch)
setfattr -n user.k -v shared "$src/etc/passwd" "$src/usr/bin/twelve" 2>/dev/null || true

free_counts() {	# IMAGE -> "INODES BLOCKS"
	dumpe2fs -h "$1" 2>/dev/null | awk '/^Free inodes:/ { i = $3 } /^Free blocks:/ { b = $3 } END { print i, b }'
}
json() {	# FILE KEY
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

n=0
for case in "ext2 -b 1024 -N 2048|" "ext2 -b 4096 -I 256|" \
	    "ext2 -b 1024 -I 256|--driver ext4" "ext3 -b 1024 -I 256|--driver ext4 --delalloc" \
	    "ext2 -b 2048|--cpus 4 --block-colour 5"; do
	mk=${case%%|*} opts=${case#*|}
	t_mkimage "$T_TMP/img" 32M -t $mk
	debugfs -w -R "mkdir /sub" "$T_TMP/img" >/dev/null 2>&1
	cp "$T_TMP/img" "$T_TMP/before"
	before=$(free_counts "$T_TMP/img")
	# shellcheck disable=SC2086
	"$ORLOV_POPULATE" --dry-run --json $opts -t /sub "$T_TMP/img" "$src" >"$T_TMP/dry.json" ||
		t_fail "$case: --dry-run"
	cmp -s "$T_TMP/before" "$T_TMP/img" || t_fail "$case: --dry-run changed the image"
	[ "$(json "$T_TMP/dry.json" dry_run)" = True ] || t_fail "$case: dry_run not true"
	# shellcheck disable=SC2086
	"$ORLOV_POPULATE" -q $opts -t /sub "$T_TMP/img" "$src" || t_fail "$case: real run"
	t_fsck "$T_TMP/img"
	after=$(free_counts "$T_TMP/img")
	used_i=$(( ${before% *} - ${after% *} )) used_b=$(( ${before#* } - ${after#* } ))
	[ "$used_i" = "$(json "$T_TMP/dry.json" inodes_used)" ] &&
	[ "$used_b" = "$(json "$T_TMP/dry.json" blocks_used)" ] ||
		{ cat "$T_TMP/dry.json" >&2; t_fail "$case: the real run took $used_i inodes, $used_b blocks"; }
	echo "$mk $opts: --dry-run said $used_i inodes and $used_b blocks, the real run took as many"
	n=$((n + 1))
done
[ $n = 5 ] || t_fail "cases run: $n"

# The plain summary says the same.
t_mkimage "$T_TMP/img" 8M -t ext2 -b 1024
"$ORLOV_POPULATE" --dry-run "$T_TMP/img" "$src" >"$T_TMP/out" || t_fail "--dry-run, text"
grep -Eq '^dry run: [0-9]+ entries, [0-9]+ bytes need [0-9]+ inodes and [0-9]+ blocks of 1024 bytes \([0-9]+ and [0-9]+ free\); nothing written$' "$T_TMP/out" ||
	{ cat "$T_TMP/out" >&2; t_fail "--dry-run summary"; }
# A tree that does not fit is refused as the real run refuses it.
t_mkimage "$T_TMP/small.img" 1M -t ext2 -b 1024
"$ORLOV_POPULATE" --dry-run "$T_TMP/small.img" "$src" 2>"$T_TMP/err" && t_fail "too big, --dry-run passed"
grep -q "^orlov-populate: Not enough free inodes in the image" "$T_TMP/err" || { cat "$T_TMP/err" >&2; t_fail "too big: message"; }

# --create auto: the smallest size the check accepts; the margin on top.
"$ORLOV_POPULATE" -q --create auto "$T_TMP/auto.img" "$src" || t_fail "--create auto"
t_fsck "$T_TMP/auto.img"
t_verify "$T_TMP/auto.img" "$src"
blocks=$(dumpe2fs -h "$T_TMP/auto.img" 2>/dev/null | awk '/^Block count:/ { print $3 }')
[ "$(stat -c %s "$T_TMP/auto.img")" = $((blocks * 4096)) ] || t_fail "auto: file size is not the filesystem's"
"$ORLOV_POPULATE" -q --create auto+50% "$T_TMP/auto50.img" "$src" || t_fail "--create auto+50%"
t_fsck "$T_TMP/auto50.img"
b50=$(dumpe2fs -h "$T_TMP/auto50.img" 2>/dev/null | awk '/^Block count:/ { print $3 }')
# and the tables of the inodes added for their own 50 % (t-headroom.sh)
i0=$(dumpe2fs -h "$T_TMP/auto.img" 2>/dev/null | awk '/^Inode count:/ { print $3 }')
i50=$(dumpe2fs -h "$T_TMP/auto50.img" 2>/dev/null | awk '/^Inode count:/ { print $3 }')
isz=$(dumpe2fs -h "$T_TMP/auto50.img" 2>/dev/null | awk '/^Inode size:/ { print $3 }')
tables=$(((i50 - i0) * isz / 4096 + 2))
[ $((b50 * 100)) -ge $((blocks * 149)) ] &&
	[ $((b50 * 100)) -le $((blocks * 151 + tables * 100)) ] ||
	t_fail "auto+50%: $b50 blocks against $blocks (and $tables of tables)"
"$ORLOV_POPULATE" -q --create auto+1M --block-size 1024 "$T_TMP/auto1m.img" "$src" || t_fail "--create auto+1M"
t_fsck "$T_TMP/auto1m.img"
# many small files: the inode count follows the tree
mkdir -p "$T_TMP/many/d"
(cd "$T_TMP/many/d" && seq 1 5000 | xargs touch)
"$ORLOV_POPULATE" -q --create auto "$T_TMP/many.img" "$T_TMP/many" || t_fail "--create auto, 5000 files"
t_fsck "$T_TMP/many.img"
echo "--create auto: $blocks blocks; auto+50%: $b50; 5000 files fit"
