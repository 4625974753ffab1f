#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile and unusual input (issue 20, items 8-11 and 14): deep archive
# and device-table paths under a small stack and in linear memory; an
# archive's ACL mask and named ACL entries; owners beyond 32 bits and
# times beyond an inode's range; decimal numbers only; device tables of
# 100,000 devices and the short lines genext2fs and makedevs take.
. "$(dirname "$0")/lib.sh"

export SOURCE_DATE_EPOCH=1700000000
command -v python3 >/dev/null || t_skip "no python3"
archives=1
"$ORLOV_POPULATE" --help=all | grep -q "archive SOURCE" || archives=0
img=$T_TMP/img
empty=$T_TMP/empty
mkdir -p "$empty"

# expect NAME STATUS PATTERN CMD...: the exit status, and stderr matching
# PATTERN (an extended regular expression); a signal is never expected.
expect() {
	local name=$1 want=$2 pat=$3 rc
	shift 3
	"$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	[ $rc -lt 128 ] || { cat "$T_TMP/err" >&2; t_fail "$name: killed by a signal (exit $rc)"; }
	[ $rc -eq "$want" ] || { cat "$T_TMP/err" >&2; t_fail "$name: exit $rc, want $want"; }
	[ -z "$pat" ] || grep -Eq -e "$pat" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "$name: stderr does not match $pat"; }
	echo "$name: ok"
}

# debugfs FIELD of a path in an image
stat_of() {
	debugfs -R "stat $2" "$1" 2>/dev/null
}

# ---- 8: depth ----------------------------------------------------------------
if [ $archives = 1 ]; then
	python3 - "$T_TMP/deep.tar" <<'PY' || t_fail "python deep tar"
import io, sys, tarfile
t = tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT)
ti = tarfile.TarInfo('/'.join(['d'] * 20000) + '/f')
ti.size = 6
ti.mtime = 1700000000
t.addfile(ti, io.BytesIO(b'hello\n'))
t.close()
PY
	# 20,000 levels (a 51 KB archive) in 1 MiB of stack: the recursion
	# on the path used to crash
	t_mkimage "$img" 64M -t ext2 -N 30000
	expect deep-tar-small-stack 0 "" \
		sh -c 'ulimit -s 1024 && exec "$@"' sh "$ORLOV_POPULATE" -q "$img" "$T_TMP/deep.tar"
	t_fsck "$img"
	stat_of "$img" "/$(printf 'd/%.0s' $(seq 1 20))" | grep -q 'Type: directory' ||
		t_fail "deep-tar: no directory chain in the image"
	# memory linear in the input: every node held its whole path (495 MB)
	if [ -x /usr/bin/time ]; then
		t_mkimage "$img" 64M -t ext2 -N 30000
		/usr/bin/time -f %M -o "$T_TMP/rss" "$ORLOV_POPULATE" -q --dry-run \
			"$img" "$T_TMP/deep.tar" || t_fail "deep-tar: dry run"
		rss=$(tail -n 1 "$T_TMP/rss")
		[ "$rss" -lt 250000 ] || t_fail "deep-tar: max RSS $rss KB"
		echo "deep-tar: max RSS $rss KB"
	fi
fi

# one device-table line 100,000 levels deep: refused (its parents have
# no d line), not a crash in the reader's recursion
python3 -c "print('/' + '/'.join(['d'] * 100000) + ' d 755 0 0 - - - - -')" \
	>"$T_TMP/deep.dt" || t_fail "python deep table"
t_mkimage "$img" 16M -t ext2 -N 4096
expect deep-devtable-line 1 "needs a file or directory that is neither in the source nor a d line" \
	sh -c 'ulimit -s 1024 && exec "$@"' sh "$ORLOV_POPULATE" -q --devtable "$T_TMP/deep.dt" "$img" "$empty"
# a chain of 2,000 d lines, all made by the table: created without
# recursion (256 KiB of stack)
python3 -c "
for i in range(1, 2001):
    print('/' + '/'.join(['d'] * i) + ' d 700 0 0 - - - - -')" >"$T_TMP/chain.dt" ||
	t_fail "python chain table"
expect deep-devtable-chain 0 "" \
	sh -c 'ulimit -s 256 && exec "$@"' sh "$ORLOV_POPULATE" -q --devtable "$T_TMP/chain.dt" "$img" "$empty"
t_fsck "$img"

# ---- 14: device tables -----------------------------------------------------
# lines cut short after the mode, the owners or the device numbers, as
# genext2fs and makedevs take them (and a comment after the fields)
printf '/dev d 755 0 0\n/dev/console c 600 0 0 5 1\n/dev/pts d 755\n/dev/null c 666 0 0 1 3 - - - # the null device\n' \
	>"$T_TMP/short.dt"
t_mkimage "$img" 16M -t ext2 -N 4096
expect devtable-short-lines 0 "" "$ORLOV_POPULATE" -q --devtable "$T_TMP/short.dt" "$img" "$empty"
t_fsck "$img"
stat_of "$img" /dev/console >"$T_TMP/st"
grep -q 'Type: character special *Mode:  0600' "$T_TMP/st" &&
	grep -q 'Device major/minor number: 05:01' "$T_TMP/st" ||
	{ cat "$T_TMP/st" >&2; t_fail "devtable-short-lines: /dev/console"; }
stat_of "$img" /dev/pts | grep -q 'Type: directory *Mode:  0755' ||
	t_fail "devtable-short-lines: /dev/pts"
stat_of "$img" /dev/null | grep -q 'Device major/minor number: 01:03' ||
	t_fail "devtable-short-lines: /dev/null"
printf '/dev/null c\n' >"$T_TMP/bad.dt"
expect devtable-too-short 1 "Malformed device table line .* line 1" \
	"$ORLOV_POPULATE" -q --devtable "$T_TMP/bad.dt" "$img" "$empty"

# a counted series of 100,000 devices: linear (it took 18.6 s)
printf '/dev d 755 0 0 - - - - -\n/dev/tty c 666 0 0 4 0 0 1 100000\n' >"$T_TMP/series.dt"
t_mkimage "$img" 48M -t ext2 -N 110000
start=$(date +%s)
expect devtable-series 0 "" timeout 20 "$ORLOV_POPULATE" -q --dry-run \
	--devtable "$T_TMP/series.dt" "$img" "$empty"
secs=$(( $(date +%s) - start ))
[ $secs -le 10 ] || t_fail "devtable-series: $secs s for 100,000 devices"
echo "devtable-series: 100,000 devices in $secs s"

# ---- 11: decimal only ------------------------------------------------------
mkdir -p "$T_TMP/s1"
echo x >"$T_TMP/s1/f"
t_mkimage "$img" 4M -t ext2
# (base 0 read 01700000000 as 1977 and 0100 as 64)
expect decimal-epoch-and-map 0 "" env SOURCE_DATE_EPOCH=01700000000 \
	"$ORLOV_POPULATE" -q --uid-map "0$(id -u):0100" "$img" "$T_TMP/s1"
stat_of "$img" /f >"$T_TMP/st"
grep -q 'mtime: 0x6553f100' "$T_TMP/st" || { cat "$T_TMP/st" >&2; t_fail "SOURCE_DATE_EPOCH=01700000000 is not 1700000000"; }
grep -q 'User:   100' "$T_TMP/st" || { cat "$T_TMP/st" >&2; t_fail "--uid-map N:0100 is not uid 100"; }
expect hex-seed 2 "--seed takes a number" "$ORLOV_POPULATE" --seed 0x10 "$img" "$T_TMP/s1"
expect signed-inodes 2 "--inodes takes a number" "$ORLOV_POPULATE" --create 4M --inodes +64 "$T_TMP/new.img" "$T_TMP/s1"

# ---- 10: times and the epoch -----------------------------------------------
# 2100 on 128-byte inodes read as 1963; before 1901 wrapped too: clamped
# to the inode's range as the kernel does
mkdir -p "$T_TMP/times"
for f in future past far; do : >"$T_TMP/times/$f"; done
touch -d @4102444800 "$T_TMP/times/future"
touch -d @-3000000000 "$T_TMP/times/past" 2>/dev/null || touch -d @-2147483648 "$T_TMP/times/past"
touch -d @20000000000 "$T_TMP/times/far" 2>/dev/null || touch -d @4102444800 "$T_TMP/times/far"
for isz in 128 256; do
	t_mkimage "$img" 4M -t ext2 -I $isz
	expect "times-$isz" 0 "" env -u SOURCE_DATE_EPOCH "$ORLOV_POPULATE" -q "$img" "$T_TMP/times"
	t_fsck "$img"
	f=$(stat_of "$img" /future | grep 'mtime:')
	p=$(stat_of "$img" /past | grep 'mtime:')
	if [ $isz = 128 ]; then
		echo "$f" | grep -q 'mtime: 0x7fffffff' || t_fail "128-byte inode: 2100 stored as $f"
		echo "$p" | grep -q 'mtime: 0x80000000' || t_fail "128-byte inode: 1874 stored as $p"
	else
		echo "$f" | grep -q 'mtime: 0xf4865700:00000001' || t_fail "256-byte inode: 2100 stored as $f"
	fi
	# verify expects what the inode can hold
	env -u SOURCE_DATE_EPOCH "$ORLOV_LAYOUT" verify "$img" "$T_TMP/times" >"$T_TMP/verify.out" 2>&1 ||
		{ cat "$T_TMP/verify.out" >&2; t_fail "times-$isz: verify"; }
done
# an epoch 128-byte inodes cannot hold (files would read as 1928):
# refused, the image untouched; 256-byte inodes hold it
t_mkimage "$img" 4M -t ext2 -I 128
cp "$img" "$T_TMP/before.img"
expect epoch-beyond-2038 1 "SOURCE_DATE_EPOCH is beyond the times the image's inodes hold .* while checking SOURCE_DATE_EPOCH against $img" \
	env SOURCE_DATE_EPOCH=3000000000 "$ORLOV_POPULATE" -q "$img" "$T_TMP/s1"
cmp "$img" "$T_TMP/before.img" || t_fail "epoch-beyond-2038: image changed"
t_mkimage "$img" 4M -t ext2 -I 256
expect epoch-256 0 "" env SOURCE_DATE_EPOCH=3000000000 "$ORLOV_POPULATE" -q "$img" "$T_TMP/s1"

[ $archives = 1 ] || { echo "archives: skipped (no libarchive)"; exit 0; }

# an archive's times outside the range: clamped the same way
python3 - "$T_TMP/times.tar" <<'PY' || t_fail "python times tar"
import io, sys, tarfile
t = tarfile.open(sys.argv[1], 'w', format=tarfile.PAX_FORMAT)
for name, mt in (('future', 4102444800), ('past', -3000000000), ('far', 20000000000)):
    ti = tarfile.TarInfo(name)
    ti.mtime = mt
    t.addfile(ti, io.BytesIO(b''))
t.close()
PY
t_mkimage "$img" 4M -t ext2 -I 256
expect times-tar 0 "" env -u SOURCE_DATE_EPOCH "$ORLOV_POPULATE" -q "$img" "$T_TMP/times.tar"
stat_of "$img" /far | grep -q 'mtime: 0x7fffffff:00000003' || t_fail "times-tar: far future not clamped to 2446"
stat_of "$img" /past | grep -q 'mtime: 0x80000000:00000000' || t_fail "times-tar: 1874 not clamped to 1901"

# owners beyond 32 bits: refused, naming the member (4294967296 was root)
python3 - "$T_TMP/uid.tar" "$T_TMP/gid.tar" <<'PY' || t_fail "python uid tar"
import io, sys, tarfile
for path, uid, gid in ((sys.argv[1], 4294967296, 0), (sys.argv[2], 0, 4294967297)):
    t = tarfile.open(path, 'w', format=tarfile.PAX_FORMAT)
    ok = tarfile.TarInfo('ok')
    t.addfile(ok, io.BytesIO(b''))
    ti = tarfile.TarInfo('big')
    ti.uid, ti.gid = uid, gid
    t.addfile(ti, io.BytesIO(b''))
    t.close()
PY
t_mkimage "$img" 4M -t ext2
for k in uid gid; do
	expect "archive-$k-2^32" 1 "Archive member owner or group out of range \(0 to 4294967295\) while reading archive $T_TMP/$k.tar member big" \
		"$ORLOV_POPULATE" -q "$img" "$T_TMP/$k.tar"
done

# ---- 9: archive ACLs -------------------------------------------------------
# the mode's group bits are the mask (libarchive reports the group
# entry's); named entries keep their qualifier, names resolved on this
# host as tar does
python3 - "$T_TMP/acl.tar" "$T_TMP/acl-bad.tar" <<'PY' || t_fail "python acl tar"
import io, sys, tarfile
def one(path, acl):
    t = tarfile.open(path, 'w', format=tarfile.PAX_FORMAT)
    ti = tarfile.TarInfo('f')
    ti.mode = 0o664
    ti.mtime = 1700000000
    ti.pax_headers = {'SCHILY.acl.access': acl}
    t.addfile(ti, io.BytesIO(b''))
    t.close()
one(sys.argv[1], 'user::rw-\nuser:1234:rw-\nuser:root:r--\ngroup::r--\n'
                 'group:root:r--\nmask::rw-\nother::r--\n')
one(sys.argv[2], 'user::rw-\nuser:no-such-user-orlov:rw-\ngroup::r--\n'
                 'mask::rw-\nother::r--\n')
PY
t_mkimage "$img" 4M -t ext2 -I 256
expect acl-mask 0 "" "$ORLOV_POPULATE" -q "$img" "$T_TMP/acl.tar"
t_fsck "$img"
stat_of "$img" /f | grep -q 'Mode:  0664' || t_fail "acl-mask: group bits are not the mask"
# (user root r--, user 1234 rw-; group root r--: not 0xffffffff)
debugfs -R 'ea_get /f system.posix_acl_access' "$img" >"$T_TMP/acl.out" 2>/dev/null
grep -q '02 00 04 00 00 00 00 00 02 00 06 00 d2 04 00 00 ' "$T_TMP/acl.out" &&
	grep -q '08 00 04 00 00 00 00 00 ' "$T_TMP/acl.out" &&
	! grep -q 'ff ff ff ff' "$T_TMP/acl.out" ||
	{ cat "$T_TMP/acl.out" >&2; t_fail "acl-mask: qualifiers"; }
expect acl-unknown-name 1 "Archive ACL names a user or group this host does not know while reading archive $T_TMP/acl-bad.tar member f" \
	"$ORLOV_POPULATE" -q "$img" "$T_TMP/acl-bad.tar"

# GNU tar --acls of a file with setfacl's named entries: the image equals
# the one made from the file itself
mkdir -p "$T_TMP/acl"
: >"$T_TMP/acl/f"
if command -v setfacl >/dev/null && command -v tar >/dev/null &&
   setfacl -m u:1000:rw,g:100:r "$T_TMP/acl/f" 2>/dev/null; then
	t_pin_times "$T_TMP/acl"
	(cd "$T_TMP/acl" && tar --acls --format=posix -cf "$T_TMP/gnu-acl.tar" f) || t_fail "tar --acls"
	t_mkimage "$T_TMP/base.img" 4M -t ext2 -I 256
	cp "$T_TMP/base.img" "$T_TMP/dir.img"
	cp "$T_TMP/base.img" "$T_TMP/tar.img"
	"$ORLOV_POPULATE" -q "$T_TMP/dir.img" "$T_TMP/acl" || t_fail "acl: populate from the directory"
	"$ORLOV_POPULATE" -q "$T_TMP/tar.img" "$T_TMP/gnu-acl.tar" || t_fail "acl: populate from tar --acls"
	cmp "$T_TMP/dir.img" "$T_TMP/tar.img" ||
		{ debugfs -R 'ea_list /f' "$T_TMP/tar.img" >&2; t_fail "acl: tar --acls gives another image than the directory"; }
	echo "acl: tar --acls of setfacl -m u:1000:rw,g:100:r gives the directory's image"
else
	echo "acl: setfacl round trip skipped (no setfacl, tar or ACL support here)"
fi
exit 0
