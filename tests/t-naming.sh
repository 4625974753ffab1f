#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --label and --uuid (mke2fs -L/-U with --create; on an existing image as
# tune2fs -L/-U set them, committed with the tree) and --squash-perms
# (genext2fs -P).
. "$(dirname "$0")/lib.sh"

export SOURCE_DATE_EPOCH=1700000000
U=0f0e0d0c-0b0a-4908-8706-050403020100
src=$T_TMP/src
t_sample_tree "$src"

# sb IMAGE FIELD: a dumpe2fs -h field
sb() { dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^$2: *//p"; }
# same_tree A B: the same inodes and blocks for every path
same_tree() {
	"$ORLOV_LAYOUT" dump "$1" >"$T_TMP/d1" && "$ORLOV_LAYOUT" dump "$2" >"$T_TMP/d2" &&
	cmp -s "$T_TMP/d1" "$T_TMP/d2" || t_fail "$3: the layout changed with the name"
}
# refused IMAGE MESSAGE ARGS...: exit 1 or 2, one line naming MESSAGE,
# IMAGE unchanged
refused() {
	local img=$1 msg=$2
	shift 2
	cp "$img" "$T_TMP/before"
	"$ORLOV_POPULATE" "$@" >"$T_TMP/out" 2>"$T_TMP/err" && t_fail "accepted: $*"
	[ "$(wc -l <"$T_TMP/err")" = 1 ] && grep -q -- "$msg" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "$*: message"; }
	cmp -s "$T_TMP/before" "$img" || t_fail "$*: the image changed"
}

# ---- --create: mke2fs -L and -U, the user's UUID before the epoch's -----
img=$T_TMP/c.img
"$ORLOV_POPULATE" -q --create 8M --label rootfs --uuid $U "$img" "$src" ||
	t_fail "--create --label --uuid"
t_fsck "$img"
[ "$(sb "$img" 'Filesystem volume name')" = rootfs ] || t_fail "--create: label"
[ "$(sb "$img" 'Filesystem UUID')" = $U ] || t_fail "--create: UUID"
[ "$(blkid -p -o value -s LABEL "$img")" = rootfs ] &&
[ "$(blkid -p -o value -s UUID "$img")" = $U ] || t_fail "blkid reads another name"
echo "--create: label and UUID as blkid reads them"

# ---- an existing image, as tune2fs sets them --------------------------
for mk in "-t ext2 -b 1024" "-t ext3 -b 1024" \
	  "-t ext3 -b 1024 -O uninit_bg" "-t ext4 -O metadata_csum_seed"; do
	# shellcheck disable=SC2086
	t_mkimage "$T_TMP/a.img" 8M $mk
	cp "$T_TMP/a.img" "$T_TMP/b.img"
	"$ORLOV_POPULATE" -q "$T_TMP/a.img" "$src" || t_fail "$mk: plain run"
	"$ORLOV_POPULATE" -q --label abcdefghijklmnop --uuid $U "$T_TMP/b.img" \
		"$src" || t_fail "$mk: --label --uuid"
	t_fsck "$T_TMP/b.img"
	[ "$(sb "$T_TMP/b.img" 'Filesystem volume name')" = abcdefghijklmnop ] ||
		t_fail "$mk: label"
	[ "$(sb "$T_TMP/b.img" 'Filesystem UUID')" = $U ] || t_fail "$mk: UUID"
	same_tree "$T_TMP/a.img" "$T_TMP/b.img" "$mk"
	echo "$mk: label and UUID set, e2fsck -fn clean, the same layout"
done
# the keywords: clear, random and time (two draws differ)
t_mkimage "$img" 8M -t ext2 -b 1024
"$ORLOV_POPULATE" -q --uuid clear "$img" "$src" || t_fail "--uuid clear"
[ "$(sb "$img" 'Filesystem UUID')" = "<none>" ] || t_fail "--uuid clear"
t_fsck "$img"
for k in random time; do
	t_mkimage "$T_TMP/$k-1.img" 8M -t ext2 -b 1024
	t_mkimage "$T_TMP/$k-2.img" 8M -t ext2 -b 1024
	"$ORLOV_POPULATE" -q --uuid $k "$T_TMP/$k-1.img" "$src" &&
	"$ORLOV_POPULATE" -q --uuid $k "$T_TMP/$k-2.img" "$src" || t_fail "--uuid $k"
	u1=$(sb "$T_TMP/$k-1.img" 'Filesystem UUID')
	u2=$(sb "$T_TMP/$k-2.img" 'Filesystem UUID')
	[ "$u1" != "$u2" ] && [ "$u1" != $T_UUID ] || t_fail "--uuid $k: $u1 $u2"
done
# --label alone keeps the UUID; with --dry-run nothing is written
t_mkimage "$img" 8M -t ext2 -b 1024
"$ORLOV_POPULATE" -q --dry-run --label dry "$img" "$src" || t_fail "--dry-run"
[ -z "$(sb "$img" 'Filesystem volume name' | grep -v '<none>')" ] ||
	t_fail "--dry-run wrote the label"
"$ORLOV_POPULATE" -q --label only "$img" "$src" || t_fail "--label alone"
[ "$(sb "$img" 'Filesystem UUID')" = $T_UUID ] || t_fail "--label changed the UUID"

# ---- refused, the image unchanged ------------------------------------------
t_mkimage "$img" 8M -t ext4
refused "$img" "needs metadata_csum_seed" --uuid $U "$img" "$src"
refused "$img" "at most 16 bytes" --label abcdefghijklmnopq "$img" "$src"
refused "$img" "give a UUID" --uuid 0f0e0d0c-0b0a-4908-8706-05040302010 "$img" "$src"
refused "$img" "give a UUID" --uuid randomly "$img" "$src"
t_mkimage "$img" 8M -t ext2 -b 1024
cp "$img" "$T_TMP/before"
flock "$img" "$ORLOV_POPULATE" --label busy "$img" "$src" >/dev/null 2>"$T_TMP/err" &&
	t_fail "a locked image was renamed"
grep -q "being written by another process" "$T_TMP/err" || t_fail "locked: $(cat "$T_TMP/err")"
cmp -s "$T_TMP/before" "$img" || t_fail "locked: the image changed"
echo "refused in one line, image unchanged: metadata_csum, 17 bytes, bad UUIDs, locked"

# ---- --squash-perms: genext2fs -P, umask 077 on SOURCE's entries -----------
printf '/dev d 755 0 0\n/dev/null c 666 0 0 1 3\n' >"$T_TMP/dt"
t_mkimage "$img" 8M -t ext2 -b 1024
"$ORLOV_POPULATE" -q --squash-perms --devtable "$T_TMP/dt" "$img" "$src" ||
	t_fail "--squash-perms"
t_fsck "$img"
mode() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/.*Mode: *\([0-7]*\).*/\1/p'; }
for pm in /usr/bin/twelve:04700 /srv:01700 /opt:02700 /etc/passwd:0600 \
	  /usr/bin:0700 /srv/fifo:0600 /dev:0755 /dev/null:0666; do
	p=${pm%:*} want=${pm#*:}
	[ "$(mode "$img" "$p")" = "$want" ] ||
		t_fail "--squash-perms: $p is $(mode "$img" "$p"), not $want"
done
# the fast symlink's mode is the kernel's 0777 whatever the squash
[ "$(mode "$img" /usr/bin/fast)" = 0777 ] || t_fail "symlink mode"
echo "--squash-perms: group and other bits off, setuid/setgid/sticky kept, the table's modes kept"
exit 0
