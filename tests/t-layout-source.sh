#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# orlov-layout verify reads SOURCE as orlov-populate does (issue 20 item
# 21): an image filled from an archive, and one with --devtable, verify
# clean with the same SOURCE and options; a changed file or a changed
# device table entry is a mismatch (exit 1).  And the one host-xattr
# reader (issue 21): an attribute that grows between getxattr's size
# query and its read (tests/xattrgrow.c, LD_PRELOAD) is asked for again,
# by orlov-populate and orlov-layout alike.
. "$(dirname "$0")/lib.sh"

export SOURCE_DATE_EPOCH=1700000000
t_clamp=--clamp
src=$T_TMP/src
t_sample_tree "$src"
img=$T_TMP/img
base=$T_TMP/base.img
t_mkimage "$base" 16M -t ext2 -b 1024 -N 512

# verify_out STATUS ARGS...: orlov-layout verify's status and output
verify_out() {
	want=$1
	shift
	"$ORLOV_LAYOUT" verify $t_clamp "$@" >"$T_TMP/out" 2>&1
	got=$?
	[ "$got" = "$want" ] ||
		{ cat "$T_TMP/out" >&2; t_fail "verify $* exited $got, not $want"; }
}
# has LINE: the last verify printed LINE
has() {
	grep -qxF -- "$1" "$T_TMP/out" || { cat "$T_TMP/out" >&2; t_fail "no line: $1"; }
}

# ---- an archive as SOURCE ----
if ! "$ORLOV_POPULATE" --help=all | grep -q "archive SOURCE"; then
	echo "archive: skipped (built --without-libarchive)"
elif ! command -v tar >/dev/null; then
	echo "archive: skipped (no tar)"
else
	(cd "$src" && tar --format=posix -cf "$T_TMP/src.tar" .) || t_fail "tar"
	cp "$base" "$img"
	"$ORLOV_POPULATE" -q "$img" "$T_TMP/src.tar" || t_fail "populate from the archive"
	verify_out 0 "$img" "$T_TMP/src.tar"
	has "verified=$(find "$src" | wc -l) mismatches=0"
	verify_out 0 "$img" - <"$T_TMP/src.tar"
	# one byte of a file changed, its size and times kept
	cp -a "$src" "$T_TMP/src2"
	printf 'R' | dd of="$T_TMP/src2/etc/passwd" conv=notrunc status=none
	touch -h -r "$src/etc/passwd" "$T_TMP/src2/etc/passwd"
	(cd "$T_TMP/src2" && tar --format=posix -cf "$T_TMP/src2.tar" .) || t_fail "tar"
	verify_out 1 "$img" "$T_TMP/src2.tar"
	# the hard links of passwd are one inode: one line for each path
	has "mismatch: /etc/passwd: data at offset 0 (expected 0x52, got 0x72)"
	has "mismatch: /home/a/passwd-link: data at offset 0 (expected 0x52, got 0x72)"
	has "verified=$(find "$src" | wc -l) mismatches=3"
	# an ext2 image is no archive
	verify_out 2 "$img" "$base"
	grep -q "SOURCE is an ext2/3/4 image" "$T_TMP/out" || t_fail "image as SOURCE: $(cat "$T_TMP/out")"
	echo "archive: verified clean, from a file and from standard input; a changed file found"
fi

# ---- a device table ----
cat >"$T_TMP/dt" <<'EOT'
# name		type mode uid gid major minor start inc count
/dev		d 755 0 0 - - - - -
/dev/console	c 600 0 5 5 1 - - -
/dev/tty	c 666 0 5 4 0 0 1 3
/dev/pipe	p 640 7 8
/dev/sub	d 755 0 0
/dev/sub/deep	d 700 1 1
/etc/passwd	f 600 9 9
/usr		d 711 0 0
EOT
cp "$base" "$img"
"$ORLOV_POPULATE" -q --devtable "$T_TMP/dt" "$img" "$src" || t_fail "populate --devtable"
t_fsck "$img"
n=$(($(find "$src" | wc -l) + 8))
verify_out 0 --devtable "$T_TMP/dt" "$img" "$src"
has "verified=$n mismatches=0"
# without the table: its entries missing, the modes and owners it set wrong
verify_out 1 "$img" "$src"
has "mismatch: /etc/passwd: mode (expected 0644, got 0600)"
has "mismatch: /dev: entry (expected absent, got present)"
# a device number and a mode changed in the table
awk '$1 == "/dev/console" { $7 = 2 } $1 == "/usr" { $3 = 755 } { print }' \
	"$T_TMP/dt" >"$T_TMP/dt2"
! cmp -s "$T_TMP/dt" "$T_TMP/dt2" || t_fail "awk changed nothing"
verify_out 1 --devtable "$T_TMP/dt2" "$img" "$src"
has "mismatch: /dev/console: rdev (expected 5:2, got 5:1)"
has "mismatch: /usr: mode (expected 0755, got 0711)"
has "verified=$n mismatches=2"
# a table line without its entry in the image
echo "/dev/null c 666 0 0 1 3" >>"$T_TMP/dt2"
verify_out 1 --devtable "$T_TMP/dt2" "$img" "$src"
has "mismatch: /dev/null: entry (expected present, got missing)"
# a malformed table: an error naming the line
echo "/dev/x q 1" >"$T_TMP/dt3"
verify_out 2 --devtable "$T_TMP/dt3" "$img" "$src"
grep -q "while reading device table $T_TMP/dt3 line 1" "$T_TMP/out" ||
	t_fail "bad table: $(cat "$T_TMP/out")"
if [ -f "$T_TMP/src.tar" ]; then
	cp "$base" "$img"
	"$ORLOV_POPULATE" -q --devtable "$T_TMP/dt" "$img" "$T_TMP/src.tar" ||
		t_fail "populate --devtable from the archive"
	verify_out 0 --devtable "$T_TMP/dt" "$img" "$T_TMP/src.tar"
	has "verified=$n mismatches=0"
fi
echo "devtable: verified clean; changed entries found"

# ---- owners and the target's own attributes ----
cp "$base" "$img"
"$ORLOV_POPULATE" -q --uid-map 0:1000 --gid-map 0:2000 --root-owner 3:4 \
	"$img" "$src" || t_fail "populate --uid-map --root-owner"
verify_out 0 --uid-map 0:1000 --gid-map 0:2000 --root-owner 3:4 "$img" "$src"
verify_out 1 --uid-map 0:1000 --gid-map 0:2000 --root-owner 3:5 "$img" "$src"
has "mismatch: /: gid (expected 5, got 4)"
chmod 0755 "$src"
cp "$base" "$img"
"$ORLOV_POPULATE" -q --root-attrs -t /lost+found "$img" "$src" ||
	t_fail "populate --root-attrs"
verify_out 0 --root-attrs "$img" "$src" /lost+found
chmod 0705 "$src"
verify_out 1 --root-attrs "$img" "$src" /lost+found
has "mismatch: /lost+found: mode (expected 0705, got 0755)"
chmod 0755 "$src"
echo "owners, --root-owner, --root-attrs: verified"

# ---- an attribute growing between the size query and the read ----
# LD_PRELOAD does not work with the sanitizers' runtime (it must come
# first): then this case is skipped, with the reason.
g=$T_TMP/grow
mkdir -p "$g"
printf 'data' >"$g/f"
ln -s f "$g/l"
if ! setfattr -n user.grow -v short "$g/f" 2>/dev/null; then
	echo "xattr-grow: skipped (no user attributes in $T_TMP)"
elif ! ${CC:-cc} -shared -fPIC -o "$T_TMP/xattrgrow.so" \
	"$top_srcdir/tests/xattrgrow.c" -ldl 2>"$T_TMP/cc.err"; then
	echo "xattr-grow: skipped (no compiler: $(head -n 1 "$T_TMP/cc.err"))"
elif ! LD_PRELOAD=$T_TMP/xattrgrow.so "$ORLOV_POPULATE" --version >/dev/null 2>&1; then
	echo "xattr-grow: skipped (LD_PRELOAD does not work with this build, a sanitizer's?)"
else
	long=$(printf 'L%.0s' $(seq 1 300))
	t_pin_times "$g"
	cp "$base" "$img"
	LD_PRELOAD=$T_TMP/xattrgrow.so XATTRGROW_NAME=user.grow XATTRGROW_VALUE=$long \
		"$ORLOV_POPULATE" -q "$img" "$g" 2>"$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "populate with a growing attribute"; }
	[ "$(getfattr --absolute-names --only-values -n user.grow "$g/f")" = "$long" ] ||
		t_fail "xattrgrow.so did not grow the attribute"
	t_pin_times "$g"
	verify_out 0 "$img" "$g"
	# orlov-layout reads through the same reader: grown again, to the
	# value the image holds
	setfattr -n user.grow -v short "$g/f"
	t_pin_times "$g"
	export XATTRGROW_NAME=user.grow XATTRGROW_VALUE="$long"
	LD_PRELOAD=$T_TMP/xattrgrow.so
	export LD_PRELOAD
	verify_out 0 "$img" "$g"
	unset LD_PRELOAD XATTRGROW_NAME XATTRGROW_VALUE
	setfattr -n user.grow -v short "$g/f"
	t_pin_times "$g"
	verify_out 1 "$img" "$g"
	has "mismatch: /f: xattr user.grow (expected short, got $long)"
	echo "xattr-grow: the attribute grown between the two calls is read again"
fi
exit 0
