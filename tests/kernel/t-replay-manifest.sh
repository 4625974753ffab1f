#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Host test: `replay manifest` walk order, escaping, types, holes, hard
# links, attributes; then `replay run` on the host recreates the tree (same
# manifest), inherited ACLs the source lacks removed.
set -eu
. "$(dirname "$0")/lib.sh"

replay=$(kt_replay)
tmp=$(kt_tmpdir)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src
mkdir "$src"
cd "$src"

U=$(id -u); G=$(id -g)
root=false
[ "$U" = 0 ] && root=true

mkdir -p a/b B _x .hid
echo hello >a/b/f              # 6 bytes
ln a/b/f B/hard                # hard link across dirs, B sorts first
printf x >"$(printf '\303\251')"   # é: UTF-8, sorts after z in C
printf yy >'Z z'
printf 'p%%c' >'p%c'
printf t >$'tab\tnl\nx'
ln -s a/b/f fast
long=$(printf 'L%.0s' $(seq 1 80))
ln -s "$long" slow
mkfifo a/fifo
: >empty
truncate -s 1048576 sparse
printf 'data' | dd of=sparse bs=4096 seek=10 conv=notrunc 2>/dev/null
truncate -s 100000 hole-only
chmod 0755 a a/b B _x .hid
chmod 0640 a/b/f
chmod 4755 'Z z'
chmod 0600 "$(printf '\303\251')" 'p%c' $'tab\tnl\nx' empty sparse hole-only
chmod 0644 a/fifo
dev=false
if $root; then
	mknod a/cdev c 1 3 && mknod a/bdev b 7 0 && dev=true
	chmod 0620 a/cdev a/bdev || true
	chown 12:34 a
	chown -h 5:6 slow
fi

# does this filesystem report holes?
probe=$("$replay" manifest "$src" | grep ' sparse ' | awk '{print $7}')
case "$probe" in
40960+[0-9]*) sparse_ext=$probe; hole_ext=- ;;
*) sparse_ext=0+1048576; hole_ext=0+100000 ;;
esac

A_UG="$U $G"; SLOW_UG="$U $G"
$root && { A_UG="12 34"; SLOW_UG="5 6"; }

{
	echo "d 0755 $U $G .hid"
	echo "d 0755 $U $G B"
	echo "f 0640 $U $G 6 B/hard 0+6"
	echo "f 4755 $U $G 2 Z%20z 0+2"
	echo "d 0755 $U $G _x"
	echo "d 0755 $A_UG a"
	echo "d 0755 $U $G a/b"
	echo "h a/b/f B/hard"
	$dev && echo "b 0620 $U $G 7 0 a/bdev"
	$dev && echo "c 0620 $U $G 1 3 a/cdev"
	echo "p 0644 $U $G a/fifo"
	echo "f 0600 $U $G 0 empty -"
	echo "l $U $G fast a/b/f"
	echo "f 0600 $U $G 100000 hole-only $hole_ext"
	echo "f 0600 $U $G 3 p%25c 0+3"
	echo "l $SLOW_UG slow $long"
	echo "f 0600 $U $G 1048576 sparse $sparse_ext"
	echo "f 0600 $U $G 1 tab%09nl%0Ax 0+1"
	echo "f 0600 $U $G 1 %C3%A9 0+1"
} >"$tmp/expected"

"$replay" manifest "$src" >"$tmp/got"
if ! diff -u "$tmp/expected" "$tmp/got"; then
	echo "FAIL: manifest differs from golden"
	exit 1
fi

# round_trip MANIFEST SRC DST WHAT: replay on the host, the manifest of DST
# must be MANIFEST
round_trip() {
	mkdir "$3"
	"$replay" run --colour 0 "$1" "$2" "$3"
	"$replay" manifest "$3" >"$1.again"
	if ! diff -u "$1" "$1.again"; then
		echo "FAIL: replay run did not recreate the $4"
		exit 1
	fi
}

round_trip "$tmp/got" "$src" "$tmp/dst" tree
cmp "$src/sparse" "$tmp/dst/sparse"
cmp "$src/a/b/f" "$tmp/dst/B/hard"
# Extended attributes: x lines in ext2's table order (index, name length,
# name), and a round trip that keeps exactly the source's attributes: a
# file with its inherited ACL removed (setfacl -b) loses the one the replay
# inherits, another keeps it.
src2=$tmp/src2
mkdir "$src2"
: >"$src2/x"
if setfattr -n user.zz -v 0x01 "$src2/x" 2>/dev/null &&
   setfattr -n user.a "$src2/x" && setfattr -n user.bb -v 0x0203 "$src2/x"; then
	printf 'x user.a -\nx user.bb 0203\nx user.zz 01\n' >"$tmp/xexp"
	"$replay" manifest "$src2" | grep '^x ' >"$tmp/xgot"
	if ! diff -u "$tmp/xexp" "$tmp/xgot"; then
		echo "FAIL: attribute lines differ from golden"
		exit 1
	fi
	acl=false
	mkdir "$src2/d"
	if setfacl -d -m u:1234:rwx "$src2/d" 2>/dev/null; then
		acl=true
		echo 1 >"$src2/d/keeps"
		echo 2 >"$src2/d/stripped"
		setfacl -b "$src2/d/stripped"
		mkdir "$src2/d/sub"
	fi
	"$replay" manifest "$src2" >"$tmp/m2"
	round_trip "$tmp/m2" "$src2" "$tmp/dst2" attributes
	if $acl && getfattr -n system.posix_acl_access "$tmp/dst2/d/stripped" >/dev/null 2>&1; then
		echo "FAIL: the inherited ACL of d/stripped was kept"
		exit 1
	fi
	if $acl && ! getfattr -n system.posix_acl_access "$tmp/dst2/d/keeps" >/dev/null 2>&1; then
		echo "FAIL: d/keeps lost its ACL"
		exit 1
	fi
	$acl || echo "# no POSIX ACLs on $tmp: inheritance not checked"
else
	echo "# no user xattrs on $tmp: attribute lines not checked"
fi
echo "PASS: replay manifest golden + round trip"
