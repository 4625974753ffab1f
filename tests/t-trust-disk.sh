#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --create in a disk image must not lose what the disk holds (issue 37,
# items 1-5 and 7): a refused run leaves the partition's old filesystem
# byte for byte (the check pass runs on a scratch image, which reaches the
# partition only at the commit); refused, the disk unchanged: an MBR
# extended partition, a partition holding another filesystem (FAT) without
# --force, a partition over the partition table, one overlapping another,
# one past the end of the disk (never grown).  Every case runs and every
# failure is listed, then the test fails.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
command -v sfdisk >/dev/null 2>&1 || t_skip "sfdisk not found (fdisk)"
P=$ORLOV_POPULATE
MiB=1048576
bad=0
t_bad() { echo "$t_name: FAIL: $*" >&2; bad=$((bad + 1)); }

mkdir -p "$T_TMP/s1/etc" "$T_TMP/s2/data" "$T_TMP/long" "$T_TMP/big" "$T_TMP/huge"
seq 1 30000 >"$T_TMP/s1/etc/f"
echo two >"$T_TMP/s2/data/y"
echo x >"$T_TMP/long/f"
head -c $((3 * MiB)) /dev/urandom >"$T_TMP/big/f"
truncate -s 17G "$T_TMP/huge/f"	# past ext2's 16 GiB at 1 KiB blocks
for d in s1 s2 long big huge; do t_pin_times "$T_TMP/$d"; done
# a name of 256 bytes, which only an archive can give (the host's own
# names stop at 255)
tar -cf "$T_TMP/long.tar" -C "$T_TMP/long" --transform "s/^f\$/$(printf '%0256d' 0)/" f ||
	t_fail "tar of a long name"

# disk FILE: 40 MiB of a pattern (a stray write shows)
disk() {
	yes orlov-trust-disk | head -c $((40 * MiB)) >"$1"
}
byte() { printf "\\$(printf %03o "$1")"; }
le32() { byte $(($1 & 255)); byte $(($1 >> 8 & 255)); byte $(($1 >> 16 & 255)); byte $(($1 >> 24 & 255)); }
# mbr FILE [TYPE START SIZE]...: an MBR written by hand (sfdisk refuses
# what these cases need) on 40 MiB of zeros
mbr() {
	f=$1 n=0
	shift
	rm -f "$f"
	truncate -s $((40 * MiB)) "$f"
	while [ $# -ge 3 ]; do
		{ byte 0; byte 0; byte 0; byte 0; byte "$1"; byte 0; byte 0; byte 0
		  le32 "$2"; le32 "$3"; } |
			dd of="$f" bs=1 seek=$((446 + 16 * n)) conv=notrunc status=none
		n=$((n + 1))
		shift 3
	done
	{ byte 85; byte 170; } | dd of="$f" bs=1 seek=510 conv=notrunc status=none
}
# refused WHAT DISK PATTERN ARGS...: exit 1, one line with PATTERN, the disk
# byte for byte as before and of the same size
refused() {
	what=$1 d=$2 pat=$3
	shift 3
	cp "$d" "$T_TMP/before.img"
	if "$P" "$@" >/dev/null 2>"$T_TMP/err"; then
		t_bad "$what: accepted"
		return
	fi
	grep -q -- "$pat" "$T_TMP/err" || t_bad "$what: $(cat "$T_TMP/err")"
	[ "$(wc -l <"$T_TMP/err")" -eq 1 ] || t_bad "$what: more than one line: $(cat "$T_TMP/err")"
	cmp -s "$d" "$T_TMP/before.img" || t_bad "$what: the disk changed"
	[ "$(stat -c %s "$d")" = "$(stat -c %s "$T_TMP/before.img")" ] ||
		t_bad "$what: the disk's size changed"
	[ -z "$(ls -A "$TMPDIR")" ] || t_bad "$what: a scratch image left in TMPDIR"
}
export SOURCE_DATE_EPOCH=1700000000
t_clamp=--clamp	# (lib.sh's t_verify, for the epoch)
export TMPDIR=$T_TMP/tmp
mkdir "$TMPDIR"

# --- 1: a refused source leaves the partition's old filesystem as it was
g=$T_TMP/gpt.img
disk "$g"
printf '%s\n' 'label: gpt' 'label-id: 6F726C6F-0000-4000-8000-0000000000BB' \
	'size=16MiB, type=L, name=root' 'type=L, name=data' |
	sfdisk -q "$g" || t_fail "sfdisk gpt"
"$P" -q --create auto --partition root "$g" "$T_TMP/s1" ||
	t_fail "--create in partition root"
( t_fsck "$g?offset=$MiB" ) || t_bad "t_fsck $g?offset=$MiB"
refused "1: a name of 256 bytes (--create auto --partition)" "$g" "too long" \
	--create auto --partition 1 "$g" "$T_TMP/long.tar"
refused "1: a name of 256 bytes (--create auto --offset)" "$g" "too long" \
	--create auto --offset $MiB "$g" "$T_TMP/long.tar"
refused "1: a tree that does not fit (--create 2M --partition)" "$g" "" \
	--create 2M --partition 1 "$g" "$T_TMP/big"
"$P" -q --create 8M --fs-type ext3 --partition data "$g" "$T_TMP/s2" ||
	t_fail "--create in partition data"
refused "1: a file too large (--create --fs-type ext2 --block-size 1024 in partition 2)" "$g" "too large" \
	--create 8M --fs-type ext2 --block-size 1024 --partition data "$g" "$T_TMP/huge"
( t_fsck "$g?offset=$MiB" ) || t_bad "t_fsck $g?offset=$MiB"
( t_verify --partition 1 "$g" "$T_TMP/s1" ) || t_bad "t_verify --partition 1 $g $T_TMP/s1"
# made in a scratch image, the partition gets what a whole image file
# of its size gets (the holes zeros), nothing outside it changes (the
# UUID given: the one drawn from the tree's digest covers the options)
sum=$({ head -c $MiB "$g"; tail -c +$((17 * MiB + 1)) "$g"; } | md5sum)
"$P" -q --uuid $T_UUID --create auto --fs-type ext4 --partition 1 "$g" "$T_TMP/s2" ||
	t_bad "1: --create ext4 over the old filesystem"
[ "$({ head -c $MiB "$g"; tail -c +$((17 * MiB + 1)) "$g"; } | md5sum)" = "$sum" ] ||
	t_bad "1: bytes outside partition 1 changed"
( t_fsck "$g?offset=$MiB" ) || t_bad "t_fsck $g?offset=$MiB"
( t_verify --partition 1 "$g" "$T_TMP/s2" ) || t_bad "t_verify --partition 1 $g $T_TMP/s2"
"$P" -q --uuid $T_UUID --create 16M --fs-type ext4 "$T_TMP/whole.img" "$T_TMP/s2" ||
	t_fail "--create of a whole image"
dd if="$g" of="$T_TMP/cut.img" bs=$MiB skip=1 count=16 status=none
cmp -s "$T_TMP/cut.img" "$T_TMP/whole.img" ||
	t_bad "1: the partition is not what a whole image of its size is"

# --- 1, the final copy: the old bytes of all it overwrites wait in a
# rollback file next to the disk (.DISK.orlov-rb-INODE), synced, before
# the first write.  Killed (ORLOV_FAULT=fillkill:N, before the copy's
# write N), the next run puts them back first: the disk byte for byte as
# before, the old filesystem clean; orlov-layout refuses until then.  A
# write failing (filleio:N) puts them back at once.  No room for the file:
# refused, the disk unchanged.
cp "$g" "$T_TMP/k0.img"
k=$T_TMP/k.img
rbs() { ls -A "$T_TMP" | grep -c '^\.k\.img\.orlov-rb-'; }
n=1 killed=0
while [ $n -le 400 ]; do
	cp "$T_TMP/k0.img" "$k"
	ORLOV_FAULT=fillkill:$n "$ORLOV_HOOKS_POPULATE" -q --create auto --partition 1 "$k" \
		"$T_TMP/s1" >/dev/null 2>"$T_TMP/err"
	rc=$?
	[ $rc = 0 ] && break		# past the copy's last write
	killed=$((killed + 1))
	[ $rc = 137 ] || { t_bad "1: fillkill:$n: exit $rc: $(cat "$T_TMP/err")"; break; }
	rm -f "$TMPDIR"/orlov-partition-*	# the killed run's scratch image
	[ "$(rbs)" = 1 ] || t_bad "1: fillkill:$n: no rollback file"
	if "$ORLOV_LAYOUT" dump --partition 1 "$k" >/dev/null 2>"$T_TMP/err"; then
		t_bad "1: fillkill:$n: orlov-layout read a half-written partition"
	else
		grep -q "rollback file.*run orlov-populate" "$T_TMP/err" ||
			t_bad "1: fillkill:$n: orlov-layout: $(cat "$T_TMP/err")"
	fi
	# the next run that opens the disk, refused, puts the old bytes back
	"$P" --create 2M --partition 1 "$k" "$T_TMP/big" >/dev/null 2>"$T_TMP/err" &&
		t_bad "1: fillkill:$n: the next run fit 3 MiB in 2 MiB"
	grep -q "put back the old bytes" "$T_TMP/err" ||
		t_bad "1: fillkill:$n: no notice: $(cat "$T_TMP/err")"
	cmp -s "$k" "$T_TMP/k0.img" || t_bad "1: fillkill:$n: the disk not put back"
	[ "$(rbs)" = 0 ] || t_bad "1: fillkill:$n: the rollback file stays"
	[ $n -lt 4 ] && { ( t_fsck "$k?offset=$MiB" ) || t_bad "1: fillkill:$n: t_fsck"; }
	[ $n -lt 4 ] && { ( t_verify --partition 1 "$k" "$T_TMP/s2" ) || t_bad "1: fillkill:$n: t_verify"; }
	n=$((n * 2 - n / 2 + 1))
done
[ $killed -ge 3 ] || t_bad "1: only $killed kill points in the copy"
( t_verify --partition 1 "$k" "$T_TMP/s1" ) || t_bad "1: the copy after the kill points"
for n in 1 2 5; do
	cp "$T_TMP/k0.img" "$k"
	ORLOV_FAULT=filleio:$n "$ORLOV_HOOKS_POPULATE" -q --create auto --partition 1 "$k" \
		"$T_TMP/s1" >/dev/null 2>"$T_TMP/err" && t_bad "1: filleio:$n: accepted"
	grep -q "Input/output error while writing the new filesystem into its partition" "$T_TMP/err" ||
		t_bad "1: filleio:$n: $(cat "$T_TMP/err")"
	cmp -s "$k" "$T_TMP/k0.img" || t_bad "1: filleio:$n: the disk changed"
	[ "$(rbs)" = 0 ] || t_bad "1: filleio:$n: the rollback file stays"
done
if ${CC:-cc} -shared -fPIC -o "$T_TMP/fullfs.so" "$top_srcdir/tests/fullfs.c" \
	-ldl 2>/dev/null &&
   LD_PRELOAD=$T_TMP/fullfs.so "$P" --version >/dev/null 2>&1; then
	cp "$T_TMP/k0.img" "$k"
	FULLFS_MATCH=.k.img.orlov-rb- FULLFS_FREE=0 LD_PRELOAD=$T_TMP/fullfs.so \
		"$P" --create auto --partition 1 "$k" "$T_TMP/s1" >/dev/null 2>"$T_TMP/err" &&
		t_bad "1: no room for the rollback file: accepted"
	grep -q "rollback file.*unchanged" "$T_TMP/err" &&
		[ "$(wc -l <"$T_TMP/err")" -eq 1 ] ||
		t_bad "1: no room for the rollback file: $(cat "$T_TMP/err")"
	cmp -s "$k" "$T_TMP/k0.img" || t_bad "1: no room: the disk changed"
	[ "$(rbs)" = 0 ] || t_bad "1: no room: the rollback file stays"
else
	echo "$t_name: tests/fullfs.c not built: the full host case skipped" >&2
fi
# at an offset past the end of a smaller file, which the copy grows: put
# back to its size too
yes orlov-trust-disk | head -c $((2 * MiB)) >"$T_TMP/k0.img"
for n in 2 5; do
	cp "$T_TMP/k0.img" "$k"
	ORLOV_FAULT=fillkill:$n "$ORLOV_HOOKS_POPULATE" -q --create 8M --offset $MiB "$k" \
		"$T_TMP/s1" >/dev/null 2>&1
	rc=$?
	rm -f "$TMPDIR"/orlov-partition-*
	[ $rc = 137 ] || t_bad "1: --offset fillkill:$n: exit $rc"
	"$P" --create 2M --offset $MiB "$k" "$T_TMP/big" >/dev/null 2>"$T_TMP/err" &&
		t_bad "1: --offset fillkill:$n: the next run fit 3 MiB in 2 MiB"
	grep -q "put back the old bytes" "$T_TMP/err" ||
		t_bad "1: --offset fillkill:$n: no notice: $(cat "$T_TMP/err")"
	cmp -s "$k" "$T_TMP/k0.img" || t_bad "1: --offset fillkill:$n: the file not put back"
	[ "$(rbs)" = 0 ] || t_bad "1: --offset fillkill:$n: the rollback file stays"
done
rm -f "$k" "$T_TMP/k0.img"

# --- 2: an MBR extended partition (and a logical one in it, accepted)
e=$T_TMP/ext.img
disk "$e"
printf '%s\n' 'label: dos' 'label-id: 0x6f726c70' \
	'ext.img1 : start=2048, size=16384, type=83' \
	'ext.img2 : start=18432, size=40960, type=5' \
	'ext.img5 : start=20480, size=8192, type=83' \
	'ext.img6 : start=30720, size=8192, type=83' |
	sfdisk -q "$e" || t_fail "sfdisk extended"
refused "2: --create in an extended partition" "$e" "extended partition" \
	--create auto --partition 2 "$e" "$T_TMP/s2"
for t in f 85; do
	cp "$e" "$T_TMP/ext$t.img"
	sfdisk -q --part-type "$T_TMP/ext$t.img" 2 $t 2>/dev/null ||
		t_fail "sfdisk type $t"
	refused "2: --create in an extended partition of type 0x$t" "$T_TMP/ext$t.img" \
		"extended partition" --create 4M --partition 2 "$T_TMP/ext$t.img" "$T_TMP/s2"
done
sum=$({ head -c $((20480 * 512)) "$e"; tail -c +$((28672 * 512 + 1)) "$e"; } | md5sum)
"$P" -q --create auto --partition 5 "$e" "$T_TMP/s2" || t_bad "2: --create in logical partition 5"
[ "$({ head -c $((20480 * 512)) "$e"; tail -c +$((28672 * 512 + 1)) "$e"; } | md5sum)" = "$sum" ] ||
	t_bad "2: bytes outside partition 5 changed"
sfdisk -d "$e" | grep -q 'ext.img6 : start= *30720' || t_bad "2: logical partition 6 lost"

# --- 3: a partition holding another filesystem: --force only
if command -v mkfs.vfat >/dev/null 2>&1; then
	f=$T_TMP/fat.img
	cp "$g" "$f"
	mkfs.vfat -n OLDFAT --offset=2048 "$f" 16384 >/dev/null 2>&1 ||
		t_fail "mkfs.vfat in partition 1"
	refused "3: --create over FAT in a partition" "$f" "holds another filesystem.*(vfat)" \
		--create auto --partition 1 "$f" "$T_TMP/s2"
	refused "3: --create over FAT at an offset" "$f" "holds another filesystem.*(vfat)" \
		--create 8M --offset $MiB "$f" "$T_TMP/s2"
	refused "3: --dry-run --create over FAT in a partition" "$f" "holds another filesystem.*(vfat)" \
		--dry-run --create auto --partition 1 "$f" "$T_TMP/s2"
	"$P" -q --force --create auto --partition 1 "$f" "$T_TMP/s2" ||
		t_bad "3: --force --create over FAT refused"
	( t_fsck "$f?offset=$MiB" ) || t_bad "fsck $f"
else
	echo "$t_name: mkfs.vfat not found (dosfstools): FAT case skipped" >&2
fi

# --- 4: an MBR partition at LBA 0, over the partition table
m=$T_TMP/lba0.img
mbr "$m" 131 0 16384
refused "4: a partition at LBA 0" "$m" "partition table" \
	--create auto --partition 1 "$m" "$T_TMP/s2"

# --- 5: overlapping MBR partitions; partition 1's filesystem kept
m=$T_TMP/overlap.img
mbr "$m" 131 2048 16384 131 12288 16384
mke2fs -q -F -I 256 -E offset=$MiB "$m" 8M || t_fail "mke2fs in partition 1"
refused "5: --create in partition 2, overlapping partition 1" "$m" "overlaps another partition" \
	--create auto --partition 2 "$m" "$T_TMP/s2"
refused "5: --create in partition 1, overlapping partition 2" "$m" "overlaps another partition" \
	--create 4M --partition 1 "$m" "$T_TMP/s2"
( t_fsck "$m?offset=$MiB" ) || t_bad "t_fsck $m?offset=$MiB"

# --- 7: a partition past the end of the disk: refused, never grown
m=$T_TMP/past.img
mbr "$m" 131 2048 163840
refused "7: --create auto in a partition past the end" "$m" "past the end of the disk" \
	--create auto --partition 1 "$m" "$T_TMP/s2"
refused "7: --create 4M in a partition past the end" "$m" "past the end of the disk" \
	--create 4M --partition 1 "$m" "$T_TMP/s2"

[ $bad -eq 0 ] || t_fail "$bad of the checks above"
exit 0
