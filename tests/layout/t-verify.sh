#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# orlov-layout verify against an image made by `mke2fs -d` (which copies
# data, modes, owners, times, hard links and xattrs): no mismatch; then
# the same image with one file's data zapped, and with several inode
# fields changed by debugfs: each difference reported, exit 1.  The same
# with 256-byte inodes holding attributes (mke2fs -d, orlov-populate
# --driver ext4): changed, duplicated and damaged ones reported.
set -eu
. "$(dirname "$0")/lib.sh"

root=false
[ "$(id -u)" = 0 ] && root=true

src=$lt_tmp/src
mkdir -p "$src/dir1" "$src/sticky" "$src/acl"
lt_data 5000 file >"$src/dir1/file"
lt_data 300000 big >"$src/dir1/big"              # DIND with 1 KiB blocks
{ printf abc; head -c 99997 /dev/zero; printf xyz; } >"$src/dir1/sparse"
: >"$src/empty"
printf sp >"$src/name with space"
printf pc >"$src/p%c"
ln -s dir1/file "$src/fast"
ln -s "$(printf 'L%.0s' $(seq 1 200))" "$src/slow"
mkfifo "$src/fifo"
lt_data 100 hard >"$src/hard1"
ln "$src/hard1" "$src/dir1/hard2"
# Linked from outside SOURCE too: st_nlink 2, but one link in the image.
lt_data 100 out >"$lt_tmp/outside"
ln "$lt_tmp/outside" "$src/dir1/shared-outside"
chmod 4755 "$src/dir1/file"
chmod 2750 "$src/dir1"
chmod 1777 "$src/sticky"
chmod 0600 "$src/empty"
if $root; then
	mknod "$src/dir1/chr" c 4 5
	mknod "$src/dir1/blk" b 259 70000   # needs the new encoding
	chown 100000:200000 "$src/empty"    # i_uid_high / i_gid_high
fi
xattrs=false
if command -v setfattr >/dev/null &&
	setfattr -n user.colour -v blue "$src/dir1/file" 2>/dev/null; then
	xattrs=true
	setfattr -n user.empty "$src/sticky"
	setfattr -n user.bin -v 0x00ff2541 "$src/hard1"
	! $root || setfattr -n trusted.t -v x "$src/dir1/big"
fi
if $xattrs && command -v setfacl >/dev/null &&
	setfacl -m u:1234:rw,g:55:r "$src/acl" 2>/dev/null; then
	setfacl -d -m u:4321:rwx "$src/acl"
fi
command -v python3 >/dev/null &&
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
		"$src/dir1/sock"
# Times last, deepest first: whole seconds (128-byte inodes hold no more).
find "$src" -depth -exec touch -h -d @1600000000 {} +
npaths=$(find "$src" | wc -l)

img=$lt_tmp/v.img
lt_mkfs "$img" 16M -b 1024 -I 128 -N 256 -d "$src"

lt_run 0 "$ORLOV_LAYOUT" verify "$img" "$src"
echo "verified=$npaths mismatches=0" >"$lt_tmp/want"
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "verify of mke2fs -d image"

# A subtree against the matching source subdirectory.  hard2's other
# link, /hard1, is outside this SOURCE, so one link is expected there.
lt_run 1 "$ORLOV_LAYOUT" verify "$img" "$src/dir1" /dir1
cat >"$lt_tmp/want" <<EOT
mismatch: /dir1/hard2: links (expected 1, got 2)
verified=$(find "$src/dir1" | wc -l) mismatches=1
EOT
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "verify /dir1"
lt_run 0 "$ORLOV_LAYOUT" verify "$img" "$src/sticky" /sticky
echo "verified=1 mismatches=0" >"$lt_tmp/want"
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "verify /sticky"

# 1. One byte of file data.
bad=$lt_tmp/bad.img
cp "$img" "$bad"
echo "zap_block -f /dir1/file -o 100 -l 1 -p 0x58 1" | lt_debugfs "$bad"
lt_run 1 "$ORLOV_LAYOUT" verify "$bad" "$src"
want_byte=$(tail -c +1125 "$src/dir1/file" | head -c 1 | od -An -tx1 | tr -d ' ')
cat >"$lt_tmp/want" <<EOT
mismatch: /dir1/file: data at offset 1124 (expected 0x$want_byte, got 0x58)
verified=$npaths mismatches=1
EOT
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "verify after zapping data"

# 2. Inode fields, a link count, a time, a symlink, a missing entry.
cp "$img" "$bad"
{
	echo "sif /dir1/file mode 0100644"
	echo "sif \"/name with space\" uid 7"
	echo "sif /hard1 links_count 1"
	echo "sif /dir1/sparse mtime 5"
	echo "sif /fifo ctime 6"
	echo "sif /dir1 links_count 9"
	echo "rm /p%c"
} | lt_debugfs "$bad"
lt_run 1 "$ORLOV_LAYOUT" verify "$bad" "$src"
for l in \
	'mismatch: /dir1: links (expected 2, got 9)' \
	'mismatch: /dir1/file: mode (expected 4755, got 0644)' \
	'mismatch: /dir1/sparse: mtime (expected 1600000000, got 5)' \
	'mismatch: /fifo: ctime (expected [0-9]*, got 6)' \
	"mismatch: /name%20with%20space: uid (expected $(id -u), got 7)" \
	'mismatch: /p%25c: entry (expected present, got missing)' \
	'mismatch: /dir1/hard2: links (expected 2, got 1)' \
	'mismatch: /hard1: links (expected 2, got 1)' \
	"verified=$npaths mismatches=8"; do
	grep -qx -- "$l" "$lt_tmp/out" || {
		cat "$lt_tmp/out" >&2
		lt_fail "no line: $l"
	}
done
[ "$(wc -l <"$lt_tmp/out")" = 9 ] || lt_fail "unexpected lines: $(cat "$lt_tmp/out")"

# 3. Extended attributes, ACLs and the slow symlink's target.
if $xattrs; then
	cp "$img" "$bad"
	{
		echo "ea_set /dir1/file user.colour red"
		echo "ea_rm /sticky user.empty"
		echo "ea_set /empty user.new x"
	} | lt_debugfs "$bad"
	lt_run 1 "$ORLOV_LAYOUT" verify "$bad" "$src"
	cat >"$lt_tmp/want" <<EOT
mismatch: /dir1/file: xattr user.colour (expected blue, got red)
mismatch: /empty: xattr user.new (expected absent, got present)
mismatch: /sticky: xattr user.empty (expected present, got missing)
verified=$npaths mismatches=3
EOT
	lt_same_text "$lt_tmp/want" "$lt_tmp/out" "verify after changing xattrs"
fi

# 4. The image has an entry the source lacks; lost+found is only allowed
# at the image root.
cp "$img" "$bad"
echo "mkdir /dir1/lost+found" | lt_debugfs "$bad"
lt_run 1 "$ORLOV_LAYOUT" verify "$bad" "$src"
grep -qx 'mismatch: /dir1/lost+found: entry (expected absent, got present)' \
	"$lt_tmp/out" || lt_fail "extra entry: $(cat "$lt_tmp/out")"
grep -qx 'mismatch: /dir1: links (expected 2, got 3)' "$lt_tmp/out" ||
	lt_fail "extra subdirectory: $(cat "$lt_tmp/out")"

# 5. Attributes inside large inodes (after i_extra_isize), where mke2fs -d
# and ext4 put those that fit, together with those in the block.  A tree
# of its own in 256-byte inodes, which hold nanoseconds: mke2fs -d drops
# them, so the ctimes (which setfattr moves to now) are compared clamped
# to SOURCE_DATE_EPOCH and set to it in the image.
verify_clamped() {
	SOURCE_DATE_EPOCH=1700000000 "$ORLOV_LAYOUT" verify --clamp "$@"
}
file_acl() { # file_acl IMAGE PATH: i_file_acl, 0 when no attribute block
	debugfs -R "stat \"$2\"" "$1" 2>/dev/null |
		sed -n 's/^File ACL: \([0-9]*\).*/\1/p'
}
isrc=$lt_tmp/isrc
mkdir -p "$isrc/d"
printf one >"$isrc/d/f"
printf two >"$isrc/g"
printf three >"$isrc/h"
ixattrs=false
if command -v setfattr >/dev/null &&
	setfattr -n user.colour -v blue "$isrc/d/f" 2>/dev/null; then
	ixattrs=true
else
	lt_log "setfattr does not work in $lt_tmp: in-inode attributes not checked"
fi
if $ixattrs; then
	setfattr -n user.bin -v 0x00ff2541 "$isrc/g"
	setfattr -n user.empty "$isrc/d/f"
	setfattr -n user.yydup -v small "$isrc/h"
	# 300 bytes: too big for the inode, so in the block
	setfattr -n user.zzdup -v "$(printf 'V%.0s' $(seq 1 300))" "$isrc/h"
	if command -v setfacl >/dev/null &&
		setfacl -m u:1234:rw,g:55:r "$isrc/g" 2>/dev/null; then
		setfacl -d -m u:4321:rwx "$isrc/d"
	fi
	find "$isrc" -depth -exec touch -h -d @1600000000 {} +
	inpaths=$(find "$isrc" | wc -l)

	iimg=$lt_tmp/inode.img
	lt_mkfs "$iimg" 4M -b 1024 -I 256 -N 64 -d "$isrc"
	(cd "$isrc" && find . -mindepth 1) |
		sed 's|^\.\(.*\)$|sif "\1" ctime @1700000000|' | lt_debugfs "$iimg"
	[ "$(file_acl "$iimg" /d/f)" = 0 ] && [ "$(file_acl "$iimg" /g)" = 0 ] ||
		lt_fail "mke2fs -d put small attributes in a block"
	[ "$(file_acl "$iimg" /h)" != 0 ] ||
		lt_fail "mke2fs -d kept 300 bytes of attribute in the inode"
	lt_run 0 verify_clamped "$iimg" "$isrc"
	echo "verified=$inpaths mismatches=0" >"$lt_tmp/want"
	lt_same_text "$lt_tmp/want" "$lt_tmp/out" \
		"verify of mke2fs -d image with in-inode attributes"

	# Values changed, removed and added in the inode.
	cp "$iimg" "$bad"
	{
		echo "ea_set /d/f user.colour red"
		echo "ea_rm /g user.bin"
		echo "ea_set /g user.new x"
	} | lt_debugfs "$bad"
	[ "$(file_acl "$bad" /d/f)" = 0 ] && [ "$(file_acl "$bad" /g)" = 0 ] ||
		lt_fail "debugfs moved attributes to a block"
	lt_run 1 verify_clamped "$bad" "$isrc"
	cat >"$lt_tmp/want" <<EOT
mismatch: /d/f: xattr user.colour (expected blue, got red)
mismatch: /g: xattr user.bin (expected present, got missing)
mismatch: /g: xattr user.new (expected absent, got present)
verified=$inpaths mismatches=3
EOT
	lt_same_text "$lt_tmp/want" "$lt_tmp/out" \
		"verify after changing in-inode xattrs"

	# One name in the inode and in the block: the block's entry for
	# user.zzdup renamed user.yydup, like the one in the inode.
	cp "$iimg" "$bad"
	blk=$(file_acl "$bad" /h)
	bs=$(lt_block_size "$bad")
	at=$(dd if="$bad" bs="$bs" skip="$blk" count=1 status=none |
		grep -obUa zzdup | head -n 1 | cut -d: -f1)
	[ -n "$at" ] || lt_fail "no user.zzdup in block $blk"
	lt_poke "$bad" $((blk * bs + at)) 79 79
	lt_run 1 verify_clamped "$bad" "$isrc"
	cat >"$lt_tmp/want" <<EOT
mismatch: /h: xattr user.yydup (expected one copy, got in the inode and the block)
mismatch: /h: xattr user.zzdup (expected present, got missing)
verified=$inpaths mismatches=2
EOT
	lt_same_text "$lt_tmp/want" "$lt_tmp/out" "verify of a duplicate name"

	# A damaged attribute area: the first entry's e_value_size (8 bytes
	# into the entry, after the 4-byte magic) past the inode's end, and
	# an i_extra_isize that is not a multiple of 4.
	cp "$iimg" "$bad"
	at=$(lt_inode_at "$bad" /d/f)
	extra=$(lt_peek_u16 "$bad" $((at + 128)))
	[ "$(od -An -tx1 -j $((at + 128 + extra)) -N 4 "$bad" | tr -d ' ')" = \
		000002ea ] || lt_fail "no in-inode attributes in /d/f's inode"
	lt_poke "$bad" $((at + 128 + extra + 4 + 8)) ff ff 00 00
	at=$(lt_inode_at "$bad" /g)
	lt_poke "$bad" $((at + 128)) "$(printf %02x $((extra + 1)))" 00
	lt_run 1 verify_clamped "$bad" "$isrc"
	cat >"$lt_tmp/want" <<EOT
mismatch: /d/f: in-inode xattrs (expected valid, got corrupt)
mismatch: /g: in-inode xattrs (expected valid, got corrupt)
verified=$inpaths mismatches=2
EOT
	lt_same_text "$lt_tmp/want" "$lt_tmp/out" \
		"verify of damaged in-inode xattrs"
fi

# 6. orlov-populate --driver ext4 keeps small attributes in the inode too.
if ! $ixattrs; then
	:
elif [ ! -x "$ORLOV_POPULATE" ]; then
	lt_log "no $ORLOV_POPULATE: its --driver ext4 image not checked"
else
	pimg=$lt_tmp/ext4.img
	lt_mkfs "$pimg" 4M -b 1024 -I 256 -N 64
	lt_run 0 env SOURCE_DATE_EPOCH=1700000000 \
		"$ORLOV_POPULATE" -q --driver ext4 "$pimg" "$isrc"
	[ "$(file_acl "$pimg" /g)" = 0 ] ||
		lt_fail "orlov-populate --driver ext4 put small attributes in a block"
	lt_run 0 verify_clamped "$pimg" "$isrc"
	echo "verified=$inpaths mismatches=0" >"$lt_tmp/want"
	lt_same_text "$lt_tmp/want" "$lt_tmp/out" \
		"verify of orlov-populate --driver ext4 image"
fi

# Errors: PATH not a directory, SOURCE missing.
lt_run 2 "$ORLOV_LAYOUT" verify "$img" "$src" /empty
lt_run 2 "$ORLOV_LAYOUT" verify "$img" "$lt_tmp/nowhere"
grep -q "^orlov-layout: .* while opening $lt_tmp/nowhere\$" "$lt_tmp/err" ||
	lt_fail "error line: $(cat "$lt_tmp/err")"
exit 0
