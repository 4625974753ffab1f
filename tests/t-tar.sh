#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# An archive as SOURCE (libarchive): the layout, and the image byte for
# byte, equal to the same tree given as a directory; compressed, from
# standard input, with devices a user without root cannot make.
. "$(dirname "$0")/lib.sh"

"$ORLOV_POPULATE" --help=all | grep -q "archive SOURCE" || t_skip "built --without-libarchive"
command -v tar >/dev/null || t_skip "no tar"
command -v python3 >/dev/null || t_skip "no python3"
export SOURCE_DATE_EPOCH=1700000000
t_clamp=--clamp

src=$T_TMP/src
t_sample_tree "$src"
if setfattr -n user.color -v blue "$src/etc/passwd" 2>/dev/null &&
   setfacl -m u:1234:rx "$src/usr/bin" 2>/dev/null &&
   setfacl -d -m g:99:r "$src/usr/bin" 2>/dev/null; then
	echo "with a user attribute, an access ACL and a default ACL"
fi
t_pin_times "$src"
# GNU tar: holes kept (--sparse), attributes and ACLs in pax headers
(cd "$src" && tar --sparse --xattrs --xattrs-include='*' --acls --format=posix \
	-cf "$T_TMP/src.tar" .) || t_fail "tar"
gzip -c "$T_TMP/src.tar" >"$T_TMP/src.tgz"
xz -c "$T_TMP/src.tar" >"$T_TMP/src.txz" 2>/dev/null || cp "$T_TMP/src.tgz" "$T_TMP/src.txz"

for geo in "-b 1024 -N 256" "-b 4096 -I 256"; do
	t_mkimage "$T_TMP/base.img" 16M -t ext2 $geo
	for s in dir tar tgz stdin; do
		cp "$T_TMP/base.img" "$T_TMP/$s.img"
		case $s in
		dir) "$ORLOV_POPULATE" -q "$T_TMP/$s.img" "$src" ;;
		tar) "$ORLOV_POPULATE" -q "$T_TMP/$s.img" "$T_TMP/src.tar" ;;
		tgz) "$ORLOV_POPULATE" -q "$T_TMP/$s.img" "$T_TMP/src.tgz" ;;
		stdin) "$ORLOV_POPULATE" -q "$T_TMP/$s.img" - <"$T_TMP/src.txz" ;;
		esac || t_fail "$geo: populate from $s"
		t_fsck "$T_TMP/$s.img"
	done
	t_verify "$T_TMP/tar.img" "$src"
	for s in tar tgz stdin; do
		"$ORLOV_LAYOUT" diff "$T_TMP/dir.img" "$T_TMP/$s.img" >"$T_TMP/diff" ||
			{ cat "$T_TMP/diff" >&2; t_fail "$geo: $s layout differs from the directory's"; }
		cmp "$T_TMP/dir.img" "$T_TMP/$s.img" || t_fail "$geo: $s image differs from the directory's"
	done
	echo "$geo: tar, tar.gz and xz on stdin give the directory's image: $(cat "$T_TMP/diff")"
done

# The same for the ext4 driver (hash-tree directories, attributes in the
# inode) from a tree with a large directory.
mkdir -p "$T_TMP/big/d"
(cd "$T_TMP/big/d" && seq 1 600 | sed 's/^/name-with-some-length-/' | xargs touch)
t_pin_times "$T_TMP/big"
(cd "$T_TMP/big" && tar --format=posix -cf "$T_TMP/big.tar" .) || t_fail "tar big"
t_mkimage "$T_TMP/base.img" 16M -t ext2 -b 1024 -I 256
cp "$T_TMP/base.img" "$T_TMP/bd.img"
cp "$T_TMP/base.img" "$T_TMP/bt.img"
"$ORLOV_POPULATE" -q --driver ext4 "$T_TMP/bd.img" "$T_TMP/big" || t_fail "ext4 dir"
"$ORLOV_POPULATE" -q --driver ext4 "$T_TMP/bt.img" "$T_TMP/big.tar" || t_fail "ext4 tar"
cmp "$T_TMP/bd.img" "$T_TMP/bt.img" || t_fail "--driver ext4: tar differs from the directory"
echo "--driver ext4, 600 names in one directory: identical"

# Devices, owners and a FIFO a user without root could not create, from
# an archive, in one command; later members replace earlier ones; hard
# links whichever name comes first.
python3 - "$T_TMP/dev.tar.gz" <<'PY' || t_fail "python tarfile"
import io, sys, tarfile
t = tarfile.open(sys.argv[1], "w:gz", format=tarfile.PAX_FORMAT)
def add(name, type, mode, uid=0, gid=0, data=b"", **kw):
    i = tarfile.TarInfo(name)
    i.type, i.mode, i.uid, i.gid, i.mtime = type, mode, uid, gid, 1600000000
    for k, v in kw.items(): setattr(i, k, v)
    i.size = len(data) if type == tarfile.REGTYPE else 0
    t.addfile(i, io.BytesIO(data) if data else None)
add("./dev", tarfile.DIRTYPE, 0o755)
add("./dev/console", tarfile.CHRTYPE, 0o600, 0, 5, devmajor=5, devminor=1)
add("./dev/sda", tarfile.BLKTYPE, 0o660, 0, 6, devmajor=8, devminor=0)
add("./dev/initctl", tarfile.FIFOTYPE, 0o600)
add("./etc/motd", tarfile.REGTYPE, 0o644, data=b"first\n")
add("./etc/motd", tarfile.REGTYPE, 0o640, 0, 4, data=b"second and last\n")
add("./etc/motd-link", tarfile.LNKTYPE, 0o640, 0, 4, linkname="etc/motd")
add("./bin/sh", tarfile.SYMTYPE, 0o777, linkname="busybox")
add("./bin/busybox", tarfile.REGTYPE, 0o4755, data=b"\x7fELF" + bytes(5000))
t.close()
PY
"$ORLOV_POPULATE" -v --create 64M --fs-type ext2 --block-size 1024 \
	"$T_TMP/dev.img" "$T_TMP/dev.tar.gz" \
	>"$T_TMP/out" || t_fail "populate from dev.tar.gz"
t_fsck "$T_TMP/dev.img"
sed '$d' "$T_TMP/out" >"$T_TMP/got"
cat >"$T_TMP/want" <<'WANT'
/bin 12289 6
/bin/busybox 12290 6
/bin/sh 12291 6
/dev 8193 4
/dev/console 8194 4
/dev/initctl 8195 4
/dev/sda 8196 4
/etc 4097 2
/etc/motd 4098 2
/etc/motd-link 4098 2
WANT
diff "$T_TMP/want" "$T_TMP/got" || t_fail "devices from an archive: inode numbers"
stat1() { debugfs -R "stat $1" "$T_TMP/dev.img" 2>/dev/null; }
stat1 /dev/console | grep -q "Type: character special *Mode: *0600 " || t_fail "console type"
stat1 /dev/console | grep -q "^User: *0 *Group: *5 " || t_fail "console owner"
stat1 /dev/console | grep -q "^Device major/minor number: 05:01 " || t_fail "console numbers"
stat1 /dev/sda | grep -q "^Device major/minor number: 08:00 " || t_fail "sda numbers"
stat1 /dev/initctl | grep -q "Type: FIFO" || t_fail "fifo"
stat1 /etc/motd | grep -q "Links: 2 " || t_fail "hard link count"
stat1 /etc/motd | grep -q "^User: *0 *Group: *4 " || t_fail "the later member's owner"
[ "$(debugfs -R "cat /etc/motd" "$T_TMP/dev.img" 2>/dev/null)" = "second and last" ] ||
	t_fail "the later member's data"
stat1 /bin/busybox | grep -q "Mode: *04755 " || t_fail "setuid"
echo "devices, FIFO, owners, a replaced member and a hard link from a .tar.gz, without root"
