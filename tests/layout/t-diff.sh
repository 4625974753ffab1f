#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# orlov-layout diff: identical copies (exit 0), one file's blocks moved
# (exit 1, first difference and summary asserted), paths present on one
# side only, a PATH subtree, attribute block contents, and a broken image
# (exit 2).
set -eu
. "$(dirname "$0")/lib.sh"

a=$lt_tmp/a.img
lt_data 5000 one >"$lt_tmp/one"
lt_data 2000 two >"$lt_tmp/two"    # two blocks
lt_mkfs "$a" 4M -b 1024 -I 128 -N 64
{
	echo "mkdir d"
	echo "write $lt_tmp/one /d/one"
	echo "write $lt_tmp/two /d/two"
	echo "symlink /d/link one"
	echo "mkdir e"
} | lt_debugfs "$a"
# /, /d, /d/link, /d/one, /d/two, /e, /lost+found
npaths=7

cp "$a" "$lt_tmp/copy.img"
lt_run 0 "$ORLOV_LAYOUT" diff "$a" "$lt_tmp/copy.img"
echo "paths=$npaths same_inode=$npaths same_blocks=$npaths" >"$lt_tmp/want"
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "diff of identical images"
[ ! -s "$lt_tmp/err" ] || lt_fail "stderr on success: $(cat "$lt_tmp/err")"

# Move the second block of /d/two elsewhere: same paths, same inodes.
b=$lt_tmp/b.img
cp "$a" "$b"
line=$("$ORLOV_LAYOUT" dump "$a" /d/two)
echo "sif /d/two block[1] 3000" | lt_debugfs "$b"
lt_run 1 "$ORLOV_LAYOUT" diff "$a" "$b"
first=${line%%,*}             # "/d/two ino=N group=0 file blocks=X-Y"
first=${first%-*}             # "... blocks=X"
cat >"$lt_tmp/want" <<EOT
first difference: /d/two
expected: $line
actual:   $first,3000
paths=$npaths same_inode=$npaths same_blocks=$((npaths - 1))
EOT
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "diff after moving a block"
[ ! -s "$lt_tmp/err" ] || lt_fail "a difference is not an error: $(cat "$lt_tmp/err")"

# Limited to a subtree without the change: identical.
lt_run 0 "$ORLOV_LAYOUT" diff "$a" "$b" /e
echo "paths=1 same_inode=1 same_blocks=1" >"$lt_tmp/want"
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "diff /e"

# An extra file on the ACTUAL side; a missing one the other way round.
c=$lt_tmp/c.img
cp "$a" "$c"
echo "write $lt_tmp/one /d/extra" | lt_debugfs "$c"
extra=$("$ORLOV_LAYOUT" dump "$c" /d/extra)
lt_run 1 "$ORLOV_LAYOUT" diff "$a" "$c"
cat >"$lt_tmp/want" <<EOT
first difference: /d/extra
expected: missing
actual:   $extra
paths=$((npaths + 1)) same_inode=$npaths same_blocks=$npaths
EOT
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "diff with an extra path"
lt_run 1 "$ORLOV_LAYOUT" diff "$c" "$a" /d
cat >"$lt_tmp/want" <<EOT
first difference: /d/extra
expected: $extra
actual:   missing
paths=5 same_inode=4 same_blocks=4
EOT
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "diff /d with a missing path"

# A PATH only one image has: everything under it is missing on the other.
lt_run 1 "$ORLOV_LAYOUT" diff "$a" "$c" /d/extra
grep -q '^expected: missing$' "$lt_tmp/out" || lt_fail "PATH absent from EXPECTED"
tail -n 1 "$lt_tmp/out" | grep -qx 'paths=1 same_inode=0 same_blocks=0' ||
	lt_fail "summary for a PATH absent from EXPECTED: $(cat "$lt_tmp/out")"
lt_run 2 "$ORLOV_LAYOUT" diff "$a" "$c" /nowhere

# Same attribute block number, one value byte changed: a difference.
x=$lt_tmp/x.img
cp "$a" "$x"
echo "ea_set /d/one user.k abcd" | lt_debugfs "$x"
y=$lt_tmp/y.img
cp "$x" "$y"
xline=$("$ORLOV_LAYOUT" dump "$x" /d/one)
xblk=${xline##* xattr=}
xblk=${xblk%% *}
case $xblk in ''|*[!0-9]*) lt_fail "no xattr block in: $xline" ;; esac
# the value sits at the end of the block: change its last byte
printf 'e' | dd of="$y" bs=1 seek=$((xblk * 1024 + 1023)) conv=notrunc status=none
yline=$("$ORLOV_LAYOUT" dump "$y" /d/one)
[ "${yline% xcrc=*}" = "${xline% xcrc=*}" ] ||
	lt_fail "only the CRC should change: $xline / $yline"
lt_run 1 "$ORLOV_LAYOUT" diff "$x" "$y" /d/one
cat >"$lt_tmp/want" <<EOT
first difference: /d/one
expected: $xline
actual:   $yline
paths=1 same_inode=1 same_blocks=0
EOT
lt_same_text "$lt_tmp/want" "$lt_tmp/out" "diff of attribute block contents"

# Bad image: an error (2), not a difference (1).
head -c 65536 /dev/zero >"$lt_tmp/zero.img"
lt_run 2 "$ORLOV_LAYOUT" diff "$a" "$lt_tmp/zero.img"
grep -q "^orlov-layout: .* while opening image $lt_tmp/zero.img: zeros, no filesystem (--create SIZE makes one)\$" "$lt_tmp/err" ||
	lt_fail "error line: $(cat "$lt_tmp/err")"
lt_run 2 "$ORLOV_LAYOUT" diff "$a"
exit 0
