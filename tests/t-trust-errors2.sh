#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 37, items 20 and 24: a device table line for "/" sets the target
# directory's mode and owners as genext2fs sets its root's (the image,
# e2fsck, orlov-layout verify and the UUID agree); errors name the file
# that failed: a full TMPDIR its scratch file, a rejected file_contexts
# its own path, not SOURCE's.
. "$(dirname "$0")/lib.sh"

src=$T_TMP/src
mkdir -p "$src/etc" || t_fail "mkdir"
printf 'one\n' >"$src/etc/f"
t_pin_times "$src"
img=$T_TMP/a.img

# mode_owner IMAGE PATH: "MODE UID GID" of PATH as debugfs reads it
mode_owner() {
	debugfs -R "stat $2" "$1" 2>/dev/null | awk '
		/Mode:/ { for (i = 1; i < NF; i++) if ($i == "Mode:") m = $(i + 1) }
		/User:/ { for (i = 1; i < NF; i++) {
			if ($i == "User:") u = $(i + 1)
			if ($i == "Group:") g = $(i + 1) } }
		END { print m, u, g }'
}

# ---- 24: a device table line for "/" ---------------------------------------
dt=$T_TMP/dt
printf '/ d 700 1000 1000 - - - - -\n/dev d 755 0 0\n' >"$dt"
t_mkimage "$img" 4M -t ext2 -b 1024
"$ORLOV_POPULATE" -q --devtable "$dt" "$img" "$src" 2>"$T_TMP/err" ||
	t_fail "a devtable line for / refused: $(cat "$T_TMP/err")"
got=$(mode_owner "$img" /)
[ "$got" = "0700 1000 1000" ] || t_fail "root: $got, not 0700 1000 1000"
t_fsck "$img"
t_verify --devtable "$dt" "$img" "$src"
# verify reads the line too: a root changed afterwards is a mismatch
debugfs -w -R "sif / mode 040755" "$img" >/dev/null 2>&1 || t_fail "debugfs sif"
"$ORLOV_LAYOUT" verify --devtable "$dt" "$img" "$src" >"$T_TMP/out" 2>&1 &&
	t_fail "verify missed the root's mode"
grep -q "^mismatch: /: mode (expected 0700, got 0755)" "$T_TMP/out" ||
	t_fail "verify: $(cat "$T_TMP/out")"

# "/" is the --target directory's, as genext2fs -D FILE:PATH takes it
t_mkimage "$img" 4M -t ext2 -b 1024
debugfs -w -R "mkdir sub" "$img" >/dev/null 2>&1 || t_fail "debugfs mkdir"
"$ORLOV_POPULATE" -q --target /sub --devtable "$dt" "$img" "$src" ||
	t_fail "--target with a line for /"
[ "$(mode_owner "$img" /sub)" = "0700 1000 1000" ] || t_fail "/sub: $(mode_owner "$img" /sub)"
[ "$(mode_owner "$img" /)" = "0755 0 0" ] || t_fail "/ changed: $(mode_owner "$img" /)"
t_fsck "$img"
t_verify --devtable "$dt" "$img" "$src" /sub

# --root-owner keeps the last word on the owners; the mode is the line's
rm -f "$img"
"$ORLOV_POPULATE" -q --create 4M --root-owner 5:6 --devtable "$dt" "$img" \
	"$src" || t_fail "--create --root-owner with a line for /"
[ "$(mode_owner "$img" /)" = "0700 5 6" ] || t_fail "root-owner: $(mode_owner "$img" /)"
t_fsck "$img"
t_verify --root-owner 5:6 --devtable "$dt" "$img" "$src"

# the UUID of --create takes the root's mode from the line
uuid_of() {
	rm -f "$T_TMP/u.img"
	printf '/ d %s 1000 1000\n' "$1" >"$T_TMP/dt-u"
	SOURCE_DATE_EPOCH=1700000000 "$ORLOV_POPULATE" -q --create 4M \
		--devtable "$T_TMP/dt-u" "$T_TMP/u.img" "$src" || t_fail "--create $1"
	dumpe2fs -h "$T_TMP/u.img" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p'
}
[ "$(uuid_of 700)" != "$(uuid_of 750)" ] ||
	t_fail "roots of mode 0700 and 0750 gave one UUID"

# "/" as anything but a directory is still malformed, the image unchanged
t_mkimage "$img" 4M -t ext2 -b 1024
cp "$img" "$T_TMP/before.img"
printf '/ f 644 0 0\n' >"$T_TMP/dt-f"
"$ORLOV_POPULATE" -q --devtable "$T_TMP/dt-f" "$img" "$src" 2>"$T_TMP/err" &&
	t_fail "a file line for / accepted"
grep -q "Malformed device table line.*line 1" "$T_TMP/err" ||
	t_fail "'/ f': $(cat "$T_TMP/err")"
cmp -s "$img" "$T_TMP/before.img" || t_fail "image changed by a refused table"
echo "24: a devtable line for / sets the target's mode and owners"

# ---- 20a: TMPDIR full is said as such, not blamed on the source file ---------
# tests/fullfs.c (LD_PRELOAD) leaves FULLFS_FREE bytes to the files whose
# name holds FULLFS_MATCH.  First, none to any scratch file: --delalloc's
# data is read again from the source at the writeback and never passes
# through TMPDIR, so a file of 3 MB goes in all the same.
if ${CC:-cc} -shared -fPIC -o "$T_TMP/fullfs.so" "$top_srcdir/tests/fullfs.c" \
	-ldl 2>"$T_TMP/cc.err" &&
   LD_PRELOAD=$T_TMP/fullfs.so "$ORLOV_POPULATE" --version >/dev/null 2>&1; then
	big=$T_TMP/big
	mkdir -p "$big" "$T_TMP/tmpdir" || t_fail "mkdir"
	head -c 3000000 /dev/urandom >"$big/big"
	t_mkimage "$img" 16M -t ext4
	TMPDIR=$T_TMP/tmpdir FULLFS_MATCH=$T_TMP/tmpdir/orlov- \
	FULLFS_FREE=0 LD_PRELOAD=$T_TMP/fullfs.so \
		"$ORLOV_POPULATE" -q --driver ext4 --delalloc "$img" "$big" \
		2>"$T_TMP/err" || t_fail "delayed data needed TMPDIR: $(cat "$T_TMP/err")"
	t_fsck "$img"
	t_verify "$img" "$big"
	echo "20a: 3 MB of delayed data with no room in TMPDIR: copied"
	t_mkimage "$img" 16M -t ext4
	# tmpfull WHAT PATTERN MATCH FREE ARGS...: TMPDIR with FREE bytes
	# left for the scratch files named MATCH: one line that names TMPDIR, not SOURCE nor the
	# image or disk, which is unchanged
	tmpfull() {
		what=$1 pat=$2 match=$3 free=$4
		shift 4
		cp "$img" "$T_TMP/before.img"
		TMPDIR=$T_TMP/tmpdir FULLFS_MATCH=$T_TMP/tmpdir/$match \
		FULLFS_FREE=$free LD_PRELOAD=$T_TMP/fullfs.so \
			"${tf_prog:-$ORLOV_POPULATE}" -q "$@" 2>"$T_TMP/err" &&
			t_fail "$what: a full TMPDIR went unnoticed"
		[ "$(wc -l <"$T_TMP/err")" = 1 ] &&
		grep -q "^orlov-populate: $pat $T_TMP/tmpdir (TMPDIR)" "$T_TMP/err" ||
			t_fail "$what: $(cat "$T_TMP/err")"
		! grep -q -F -e "$big" -e "$img" "$T_TMP/err" ||
			t_fail "$what: the source or the image blamed: $(cat "$T_TMP/err")"
		cmp -s "$img" "$T_TMP/before.img" || t_fail "$what: $img changed"
		[ -z "$(ls -A "$T_TMP/tmpdir")" ] || t_fail "$what: left in TMPDIR"
		echo "20a: $what: $(cat "$T_TMP/err")"
	}
	tar -cf "$T_TMP/big.tar" -C "$big" big || t_fail "tar"
	tmpfull "an archive's spool" \
		"No space left on device while writing the scratch file in" \
		orlov-spool 65536 "$img" "$T_TMP/big.tar"
	# the staged inodes' spill file (ORLOV_STAGE_BUDGET=1: 1 KiB of them
	# in memory, a hook of the test build), the image a plain one
	mkdir "$T_TMP/many"
	for d in 1 2 3 4 5 6 7 8; do
		mkdir "$T_TMP/many/d$d"
		(cd "$T_TMP/many/d$d" && touch $(seq -f f%g 1 40)) || t_fail "touch"
	done
	t_mkimage "$img" 16M
	ORLOV_STAGE_BUDGET=1 tf_prog=$ORLOV_HOOKS_POPULATE \
		tmpfull "the staged inodes' spill file" \
		"No space left on device while writing the scratch file in" \
		orlov-spill 4096 "$img" "$T_TMP/many"
	# the delayed files' records past their budget (the same hook; the
	# staged inodes' spill file is another, with room)
	for d in 1 2 3 4 5 6 7 8; do
		mkdir -p "$T_TMP/manyd/d$d"
		for f in $(seq 1 40); do
			printf '%s\n' "$f" >"$T_TMP/manyd/d$d/f$f"
		done
	done
	t_mkimage "$img" 16M -t ext4
	ORLOV_STAGE_BUDGET=1 tf_prog=$ORLOV_HOOKS_POPULATE \
		tmpfull "the delayed files' records" \
		"No space left on device while writing the scratch file in" \
		orlov-delayed 4096 --driver ext4 --delalloc "$img" "$T_TMP/manyd"
	unset ORLOV_STAGE_BUDGET tf_prog	# (kept after a function by some shells)
	# a directory whose names pass the walk's 1 MiB: sorted in runs in
	# a scratch file (source/walk_names.c)
	mkdir "$T_TMP/wide"
	(cd "$T_TMP/wide" && seq -w 1 100000 | sed 's/^/name-/' | xargs touch) ||
		t_fail "touch"
	t_mkimage "$img" 64M -N 110000
	tmpfull "a large directory's names" \
		"No space left on device while writing the scratch file in" \
		orlov-spill 4096 "$img" "$T_TMP/wide"
	rm -rf "$T_TMP/wide"
	if command -v sfdisk >/dev/null 2>&1; then
		rm -f "$img"
		truncate -s 40M "$img"
		printf '%s\n' 'label: gpt' 'size=16MiB, type=L, name=root' |
			sfdisk -q "$img" || t_fail "sfdisk"
		tmpfull "--create --partition's scratch image (mke2fs)" \
			"mke2fs failed while making a filesystem with mke2fs in the scratch file in" \
			orlov-partition 65536 --create 8M --partition 1 "$img" "$big"
		tmpfull "--create --partition's scratch image (the run)" \
			"No space left on device while writing the scratch file in" \
			orlov-partition 1000000 --create auto --partition 1 "$img" "$big"
		tmpfull "--dry-run --create's scratch image" \
			"mke2fs failed while making a filesystem with mke2fs in the scratch file in" \
			orlov-dry-run 65536 --dry-run --create 8M --partition 1 "$img" "$big"
	fi
else
	echo "20a: skipped (no LD_PRELOAD library: $(cat "$T_TMP/cc.err"))"
fi

# ---- 20c: --partition N in a disk image that is not there says so -----------
"$ORLOV_POPULATE" -q --partition 1 "$T_TMP/nodisk.img" "$src" 2>"$T_TMP/err" &&
	t_fail "--partition in a missing disk image succeeded"
[ "$(wc -l <"$T_TMP/err")" = 1 ] &&
grep -q "^orlov-populate: No such file or directory while opening the disk image $T_TMP/nodisk.img\$" "$T_TMP/err" ||
	t_fail "missing disk image: $(cat "$T_TMP/err")"
[ ! -e "$T_TMP/nodisk.img" ] || t_fail "a disk image was made"
echo "20c: $(cat "$T_TMP/err")"

# ---- 20b: a rejected file_contexts is named itself, once, not as SOURCE's --
# one_error FILE WHAT: FILE (stderr) is one line naming WHAT exactly once,
# and SOURCE nowhere
one_error() {
	[ "$(wc -l <"$1")" = 1 ] || t_fail "not one line: $(cat "$1")"
	[ "$(grep -o -F -- "$2" "$1" | wc -l)" = 1 ] ||
		t_fail "'$2' not named once: $(cat "$1")"
	! grep -q -F -- "$src" "$1" || t_fail "SOURCE named: $(cat "$1")"
}
if "$ORLOV_POPULATE" --dry-run --file-contexts /dev/null "$img" "$src" 2>&1 |
	grep -q 'no libselinux'; then
	echo "20b: skipped (built without libselinux)"
else
	fc=$T_TMP/fc.txt
	printf '/etc(/.*)? system_u:object_r:etc_t:s0\n/x bad bad bad\n' >"$fc"
	t_mkimage "$img" 4M -t ext2 -b 1024
	cp "$img" "$T_TMP/before.img"
	"$ORLOV_POPULATE" -q --file-contexts "$fc" "$img" "$src" 2>"$T_TMP/err" &&
		t_fail "a malformed file_contexts accepted"
	one_error "$T_TMP/err" "$fc"
	grep -q "^orlov-populate: .* while reading --file-contexts $fc: .*line 2" "$T_TMP/err" ||
		t_fail "populate: $(cat "$T_TMP/err")"
	cmp -s "$img" "$T_TMP/before.img" || t_fail "image changed"
	"$ORLOV_LAYOUT" verify --file-contexts "$fc" "$img" "$src" 2>"$T_TMP/err" &&
		t_fail "verify took a malformed file_contexts"
	one_error "$T_TMP/err" "$fc"
	grep -q "^orlov-layout: .* while reading --file-contexts $fc: .*line 2" "$T_TMP/err" ||
		t_fail "verify: $(cat "$T_TMP/err")"
	echo "20b: $(cat "$T_TMP/err")"
fi
