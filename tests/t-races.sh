#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The source changes between the check pass and the write pass
# (tests/race-populate runs ORLOV_RACE's command there, so each race
# happens every time).
# What the check pass would have refused is refused by the write pass,
# with one error line and the filesystem as it was (blocks still free may
# hold data written before the refusal); a change the check would have
# accepted is copied as the source is in the end.
. "$(dirname "$0")/lib.sh"

img=$T_TMP/img
src=$T_TMP/src

# fresh [empty]: a new source tree and an image with /x already in it
# (with "empty", nothing in it)
fresh() {
	rm -rf "$src" "$T_TMP/pre"
	mkdir -p "$src/a/sub" "$src/b" "$T_TMP/pre/x"
	printf 'file\n' >"$src/a/f"
	printf 'other\n' >"$src/a/g"
	printf 'deep\n' >"$src/a/sub/h"
	printf 'b\n' >"$src/b/i"
	t_mkimage "$img" 8M -t ext2 -b 1024 -N 256
	[ "${1:-}" = empty ] || "$ORLOV_POPULATE" -q "$img" "$T_TMP/pre" ||
		t_fail "populating /x"
	[ -z "${no_user_xattr:-}" ] || tune2fs -o ^user_xattr "$img" >/dev/null
	snapshot
}

snapshot() {
	dumpe2fs "$img" 2>/dev/null >"$T_TMP/before.dumpe2fs"
	"$ORLOV_LAYOUT" dump "$img" >"$T_TMP/before.dump"
}

# refused NAME PATTERN COMMAND
refused() {
	r_name=$1 r_pattern=$2 r_cmd=$3
	fresh
	ORLOV_RACE=$r_cmd "$ORLOV_RACE_POPULATE" "$img" "$src" >/dev/null 2>"$T_TMP/err"
	was_refused $?
}

# was_refused RC: the run (exit status RC) refused with one line matching
# $r_pattern, the image as snapshot() saw it
was_refused() {
	rc=$1
	[ $rc = 1 ] || { cat "$T_TMP/err" >&2; t_fail "$r_name: exit $rc, want 1"; }
	[ "$(wc -l <"$T_TMP/err")" = 1 ] || { cat "$T_TMP/err" >&2; t_fail "$r_name: not one line"; }
	grep -Eq "^orlov-populate: $r_pattern" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "$r_name: message"; }
	t_fsck "$img"
	dumpe2fs "$img" 2>/dev/null | cmp -s - "$T_TMP/before.dumpe2fs" ||
		t_fail "$r_name: superblock or groups changed"
	"$ORLOV_LAYOUT" dump "$img" | cmp -s - "$T_TMP/before.dump" ||
		t_fail "$r_name: paths changed"
	echo "$r_name: refused: $(cat "$T_TMP/err")"
}

# copied NAME COMMAND: the image then holds the source as it is now
copied() {
	c_name=$1 c_cmd=$2
	fresh empty
	ORLOV_RACE=$c_cmd "$ORLOV_RACE_POPULATE" -q "$img" "$src" 2>"$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "$c_name: failed"; }
	t_fsck "$img"
	t_verify "$img" "$src"
	echo "$c_name: copied as it is now"
}

long=$(printf 'x%.0s' $(seq 1 4000))
refused file-to-long-symlink \
	"Symbolic link target too long for the block size while copying $src/a/f\$" \
	"rm $src/a/f && ln -s /$long $src/a/f"
refused new-name-in-target \
	"Source changed while it was being copied while copying $src/x\$" \
	"mkdir $src/x"
refused new-root-name \
	"Source changed while it was being copied while copying $src/c\$" \
	"printf new >$src/c"
refused outgrows-image \
	"Not enough free blocks|No space left" \
	"head -c 9000000 /dev/zero >>$src/a/g"
if setfattr -n user.t -v 1 "$T_TMP" 2>/dev/null; then
	no_user_xattr=1
	refused user-xattr-refused-by-image \
		"user\\.\\* attributes need user_xattr .* while checking extended attributes of $src/b/i\$" \
		"setfattr -n user.t -v 1 $src/b/i"
	no_user_xattr=
else
	echo "user-xattr-refused-by-image: not checked (no user xattrs in $T_TMP)"
fi

copied file-deleted "rm $src/a/g"
copied file-truncated ": >$src/a/f"
copied dir-to-file "rm -r $src/a/sub && printf s >$src/a/sub"
copied file-to-fifo "rm $src/a/f && mkfifo $src/a/f"
copied dir-to-symlink-out "rm -r $src/b && ln -s /etc $src/b"
copied file-to-short-symlink "rm $src/a/g && ln -s ../b/i $src/a/g"

# ---- delayed allocation: the data is read at the writeback ------------------
# On an ext4 image (delayed allocation, its mount's default) a file's blocks
# are only reserved as its entry is written; the writeback maps them after
# the whole tree and reads the data from the source then (nothing of it
# waits in TMPDIR).  A file changed in between (ORLOV_RACE_ENTRY: right
# after its entry) is refused there with one line, the image as it was.
delayed() {
	d_name=$1 d_cmd=$2
	rm -rf "$src"
	mkdir -p "$src/a"
	head -c 20000 /dev/urandom >"$src/a/f"
	printf 'g\n' >"$src/a/g"
	t_mkimage "$img" 8M -t ext4
	snapshot
	ORLOV_RACE_ENTRY=/a/f ORLOV_RACE=$d_cmd "$ORLOV_RACE_POPULATE" \
		"$img" "$src" >/dev/null 2>"$T_TMP/err"
	rc=$?
	r_name="delayed $d_name"
	r_pattern="Source changed while it was being copied while reading $src/a/f\$"
	was_refused $rc
}
delayed appended "echo x >>$src/a/f"
delayed rewritten-in-place \
	"head -c 100 /dev/zero | dd of=$src/a/f conv=notrunc status=none"
delayed deleted "rm $src/a/f"
delayed replaced "rm $src/a/f && head -c 20000 /dev/zero >$src/a/f"
delayed to-symlink "rm $src/a/f && ln -s g $src/a/f"
# unchanged, the writeback reads what the entry's pass saw
ORLOV_RACE_ENTRY=/a/f ORLOV_RACE=true "$ORLOV_RACE_POPULATE" -q "$img" "$src" ||
	t_fail "delayed, unchanged: failed"
t_fsck "$img"
t_verify "$img" "$src"
echo "delayed unchanged: copied"
