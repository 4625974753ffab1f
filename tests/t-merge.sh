#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --merge: directories IMAGE has are filled, as cp -a fills them after
# mkdir's EEXIST; names that are not both directories are refused before
# anything is written; lost+found at the root is always reused.
. "$(dirname "$0")/lib.sh"

a=$T_TMP/a b=$T_TMP/b
mkdir -p "$a/etc" "$a/usr/bin" "$a/var/empty" "$b/etc/ssh" "$b/usr/bin" "$b/usr/lib" \
	"$b/var/empty" "$b/lost+found"
printf 'root\n' >"$a/etc/passwd"
printf 'ls\n' >"$a/usr/bin/ls"
printf 'hosts\n' >"$b/etc/hosts"
printf 'cfg\n' >"$b/etc/ssh/sshd_config"
printf 'cat\n' >"$b/usr/bin/cat"
printf 'libc\n' >"$b/usr/lib/libc.so"
printf 'found\n' >"$b/lost+found/x"
seq 1 300 | sed 's/^/a-long-enough-name-/' | (cd "$b/usr/bin" && xargs touch)
chmod 700 "$b/etc"
img=$T_TMP/img
for drv in ext2 ext4; do
	t_mkimage "$img" 16M -t ext2 -b 1024 -I 256
	"$ORLOV_POPULATE" -q --driver $drv "$img" "$a" || t_fail "$drv: first tree"
	cp "$img" "$T_TMP/before"
	# without --merge: refused, image untouched
	"$ORLOV_POPULATE" --driver $drv "$img" "$b" 2>"$T_TMP/err" && t_fail "$drv: merged without --merge"
	grep -qx "orlov-populate: Name already exists in the target directory while checking $b/etc" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "$drv: message"; }
	cmp -s "$T_TMP/before" "$img" || t_fail "$drv: refused run changed the image"
	# a dry run says what the merge takes
	"$ORLOV_POPULATE" --merge --driver $drv --dry-run --json "$img" "$b" >"$T_TMP/dry.json" ||
		t_fail "$drv: --merge --dry-run"
	"$ORLOV_POPULATE" -v --merge --driver $drv "$img" "$b" >"$T_TMP/out" || t_fail "$drv: --merge"
	t_fsck "$img"
	grep -q "^/lost+found/x 12 0$" "$T_TMP/out" || { head "$T_TMP/out" >&2; t_fail "$drv: lost+found not reused"; }
	# every path of both trees, with the contents of each
	"$ORLOV_LAYOUT" dump "$img" >"$T_TMP/dump"
	for p in /etc/passwd /etc/hosts /etc/ssh/sshd_config /usr/bin/ls /usr/bin/cat \
		 /usr/lib/libc.so /usr/bin/a-long-enough-name-300 /var/empty; do
		grep -q "^$p " "$T_TMP/dump" || t_fail "$drv: $p missing"
	done
	[ "$(debugfs -R "cat /etc/passwd" "$img" 2>/dev/null)" = root ] || t_fail "$drv: old file changed"
	[ "$(debugfs -R "cat /usr/bin/cat" "$img" 2>/dev/null)" = cat ] || t_fail "$drv: new file"
	# the source's mode, as cp -a gives it
	debugfs -R "stat /etc" "$img" 2>/dev/null | grep -q "Mode: *0700 " || t_fail "$drv: /etc mode"
	# links: /usr gained usr/lib
	debugfs -R "stat /usr" "$img" 2>/dev/null | grep -q "Links: 4 " || t_fail "$drv: /usr link count"
	# nothing added to /var/empty: its inode and block are as they were
	for f in "stat /var/empty" "dump_extents /var/empty"; do
		[ "$(debugfs -R "$f" "$T_TMP/before" 2>/dev/null)" = "$(debugfs -R "$f" "$img" 2>/dev/null)" ] ||
			t_fail "$drv: /var/empty was rewritten"
	done
	python3 - "$T_TMP/dry.json" "$T_TMP/before" "$img" <<'PY' || t_fail "$drv: --dry-run figures"
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
def free(img):
    out = subprocess.run(["dumpe2fs", "-h", img], capture_output=True, text=True).stdout
    v = {l.split(":")[0]: int(l.split(":")[1]) for l in out.splitlines() if l.startswith("Free ")}
    return v["Free inodes"], v["Free blocks"]
(i0, b0), (i1, b1) = free(sys.argv[2]), free(sys.argv[3])
sys.exit(0 if (i0 - i1, b0 - b1) == (d["inodes_used"], d["blocks_used"]) else 1)
PY
	echo "$drv: merged into /etc, /usr, /usr/bin (an htree with ext4), lost+found; --dry-run exact"
done

# A name that is a file in one and a directory in the other: refused.
mkdir -p "$T_TMP/c/etc/passwd"
"$ORLOV_POPULATE" --merge "$img" "$T_TMP/c" 2>"$T_TMP/err" && t_fail "file/directory clash merged"
grep -qx "orlov-populate: Name already exists in the target directory while checking $T_TMP/c/etc/passwd" "$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "clash message"; }
echo "a directory over a file: refused"

# --root-attrs: the target takes SOURCE's own mode, owners, times and
# attributes (cp -a SOURCE/. TARGET); --root-owner still has the last word.
r=$T_TMP/r
mkdir -p "$r/sub"
chmod 0750 "$r"
for drv in ext2 ext4; do
	t_mkimage "$img" 8M -t ext2 -b 1024 -I 256
	"$ORLOV_POPULATE" -q --driver $drv --root-attrs "$img" "$r" || t_fail "$drv: --root-attrs"
	t_fsck "$img"
	debugfs -R "stat /" "$img" 2>/dev/null | grep -q "Mode: *0750 " || t_fail "$drv: root mode"
	if setfattr -n user.origin -v tree "$r" 2>/dev/null; then
		t_mkimage "$img" 8M -t ext2 -b 1024 -I 256
		"$ORLOV_POPULATE" -q --driver $drv --root-attrs --root-owner 7:8 "$img" "$r" ||
			t_fail "$drv: --root-attrs with an attribute"
		t_fsck "$img"
		debugfs -R "ea_get / user.origin" "$img" 2>/dev/null | grep -q tree ||
			t_fail "$drv: root attribute"
		debugfs -R "stat /" "$img" 2>/dev/null | grep -q "^User: *7 *Group: *8 " ||
			t_fail "$drv: --root-owner after --root-attrs"
		# a target with attributes of its own: refused, untouched
		cp "$img" "$T_TMP/before"
		"$ORLOV_POPULATE" --driver $drv --merge --root-attrs "$img" "$r" 2>"$T_TMP/err" &&
			t_fail "$drv: attributes replaced"
		grep -q "The target directory has extended attributes already" "$T_TMP/err" ||
			{ cat "$T_TMP/err" >&2; t_fail "$drv: message"; }
		cmp -s "$T_TMP/before" "$img" || t_fail "$drv: refused run changed the image"
		setfattr -x user.origin "$r"
	fi
	echo "$drv: --root-attrs"
done
