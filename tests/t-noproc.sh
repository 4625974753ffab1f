#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Without /proc (a chroot or a container): no mount table, so a warning
# instead of the mounted check, as mke2fs gives; attributes of symlinks
# and FIFOs read by path from the source root instead of /proc/self/fd.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || t_skip "needs root for a mount namespace without /proc"
# the sanitizers' runtime itself stops without /proc
grep -q __asan_init "$ORLOV_POPULATE" && t_skip "a sanitizer build needs /proc itself"
command -v unshare >/dev/null || t_skip "no unshare (util-linux)"
unshare -m true 2>/dev/null || t_skip "unshare -m not allowed here"
src=$T_TMP/src
mkdir -p "$src/d"
printf 'data\n' >"$src/d/f"
ln -s f "$src/d/l"
mkfifo "$src/d/p"
setfattr -h -n trusted.t -v symlink "$src/d/l" 2>/dev/null &&
	setfattr -n trusted.t -v fifo "$src/d/p" 2>/dev/null ||
	t_skip "no trusted.* attributes on this filesystem"
t_mkimage "$T_TMP/img" 8M -t ext2 -b 1024
cp "$T_TMP/img" "$T_TMP/ref.img"
"$ORLOV_POPULATE" -q "$T_TMP/ref.img" "$src" || t_fail "with /proc"
unshare -m sh -c 'umount -l /proc && ! test -e /proc/self && exec "$@"' sh \
	"$ORLOV_POPULATE" -q "$T_TMP/img" "$src" 2>"$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "without /proc"; }
grep -qx "orlov-populate: warning: no /proc/mounts or /etc/mtab: could not check whether $T_TMP/img is mounted" "$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "the warning"; }
t_fsck "$T_TMP/img"
cmp "$T_TMP/ref.img" "$T_TMP/img" || t_fail "the image differs from the one made with /proc"
debugfs -R "ea_get /d/l trusted.t" "$T_TMP/img" 2>/dev/null | grep -q symlink || t_fail "symlink attribute"
# orlov-layout verify too, attributes of the symlink and the FIFO included
unshare -m sh -c 'umount -l /proc && ! test -e /proc/self && exec "$@"' sh \
	"$ORLOV_LAYOUT" verify $t_clamp "$T_TMP/img" "$src" >"$T_TMP/out" 2>&1 ||
	{ cat "$T_TMP/out" >&2; t_fail "verify without /proc"; }
setfattr -h -n trusted.t -v changed "$src/d/l"
unshare -m sh -c 'umount -l /proc && exec "$@"' sh \
	"$ORLOV_LAYOUT" verify $t_clamp "$T_TMP/img" "$src" >"$T_TMP/out" 2>&1 &&
	t_fail "verify without /proc missed a changed attribute"
grep -q "^mismatch: /d/l: xattr trusted.t" "$T_TMP/out" || { cat "$T_TMP/out" >&2; t_fail "the mismatch"; }
echo "without /proc: a warning, the same image (attributes of a symlink and a FIFO included), and verify reads them"
