#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What image builders need: one step (--create, ext4 unless told),
# reproducible images (SOURCE_DATE_EPOCH), owners without root (--all-root,
# --uid-map, --gid-map, --root-owner) and device nodes from a table
# (--devtable).
. "$(dirname "$0")/lib.sh"

# libext2fs's fake clock would hide what SOURCE_DATE_EPOCH must do alone.
unset E2FSPROGS_FAKE_TIME
export SOURCE_DATE_EPOCH=1700000000
t_clamp=--clamp

# ---- ext4 unless told -------------------------------------------------------
# A plain --create makes what mkfs.ext4 makes, filled by the ext4 driver as
# the kernel mounts it (delayed allocation): the same image as asking.
t_sample_tree "$T_TMP/def"
pin="-U $T_UUID -E hash_seed=$T_UUID"
"$ORLOV_POPULATE" -q --create 16M --mkfs-options "$pin" "$T_TMP/def.img" \
	"$T_TMP/def" || t_fail "--create 16M"
t_fsck "$T_TMP/def.img"
mke2fs -q -F -t ext4 "$T_TMP/ref.img" 16M || t_fail "mke2fs -t ext4"
for i in def ref; do
	dumpe2fs -h "$T_TMP/$i.img" 2>/dev/null |
		sed -n 's/^\(Filesystem features\|Block size\|Inode size\|Inode count\):/&/p' >"$T_TMP/$i.sb"
done
grep -q ' extent .*flex_bg' "$T_TMP/def.sb" && cmp -s "$T_TMP/def.sb" "$T_TMP/ref.sb" ||
	{ diff "$T_TMP/ref.sb" "$T_TMP/def.sb" >&2; t_fail "--create 16M: not what mke2fs -t ext4 makes"; }
"$ORLOV_POPULATE" -q --create 16M --mkfs-options "$pin" --fs-type ext4 \
	--driver ext4 --delalloc "$T_TMP/asked.img" "$T_TMP/def" || t_fail "--fs-type ext4"
cmp -s "$T_TMP/def.img" "$T_TMP/asked.img" ||
	t_fail "--create 16M: not the image --fs-type ext4 --driver ext4 --delalloc makes"
echo "--create 16M: mke2fs -t ext4's filesystem, filled by the ext4 driver"

# ---- reproducible ----------------------------------------------------------
# Two copies of one tree made at different times: their ctimes differ
# (now, after the epoch), and so do the atimes once read.
t_sample_tree "$T_TMP/a"
sleep 1
cp -a "$T_TMP/a" "$T_TMP/b" || t_fail "cp -a"
touch -a -d '2031-01-01' "$T_TMP/b/etc/passwd" "$T_TMP/b/usr/bin/twelve"
[ "$(stat -c %Z "$T_TMP/a/etc/passwd")" != "$(stat -c %Z "$T_TMP/b/etc/passwd")" ] ||
	t_fail "the copies have the same ctime: the test would prove nothing"
for fs in ext2 ext3; do
	for t in a b; do
		"$ORLOV_POPULATE" -q --create 8M --fs-type $fs --block-size 1024 \
			"$T_TMP/$fs-$t.img" "$T_TMP/$t" || t_fail "--create $fs from $t"
		t_fsck "$T_TMP/$fs-$t.img"
	done
	cmp "$T_TMP/$fs-a.img" "$T_TMP/$fs-b.img" || t_fail "$fs: two runs differ"
	echo "$fs: two runs from copies made a second apart: cmp-identical"
done
img=$T_TMP/ext2-a.img
dumpe2fs -h "$img" 2>/dev/null >"$T_TMP/sb"
for f in "Filesystem created" "Last write time" "Last checked"; do
	grep -q "^$f: *Tue Nov 14 22:13:20 2023$" "$T_TMP/sb" ||
		{ grep "^$f" "$T_TMP/sb" >&2; t_fail "$f is not SOURCE_DATE_EPOCH"; }
done
uuid=$(sed -n 's/^Filesystem UUID: *//p' "$T_TMP/sb")
seed=$(sed -n 's/^Directory Hash Seed: *//p' "$T_TMP/sb")
[ -n "$uuid" ] && [ "$uuid" != "$seed" ] || t_fail "UUID $uuid, hash seed $seed"
# every time is at most the epoch: later ones clamped, earlier ones kept
for p in /etc/passwd /usr/bin/twelve /srv/fifo /usr/bin/slow /lost+found /; do
	debugfs -R "stat $p" "$img" 2>/dev/null | grep -E '^ *[acm]time:' >"$T_TMP/times"
	[ "$(wc -l <"$T_TMP/times")" = 3 ] || t_fail "$p: no times"
	if grep -Ev '0x6553f100(:00000000)? ' "$T_TMP/times"; then
		t_fail "$p: a time after SOURCE_DATE_EPOCH was kept"
	fi
done
SOURCE_DATE_EPOCH=1800000000 "$ORLOV_POPULATE" -q --create 8M --block-size 1024 \
	--mkfs-options "-I 256" "$T_TMP/late.img" "$T_TMP/a" || t_fail "a later epoch"
debugfs -R "stat /etc/passwd" "$T_TMP/late.img" 2>/dev/null |
	grep -q '^ *mtime: 0x6553f100:1d6f3454 ' || t_fail "an earlier time was not kept to the nanosecond"
# another epoch or --seed: another filesystem UUID
"$ORLOV_POPULATE" -q --create 8M --block-size 1024 --seed 1 "$T_TMP/s1.img" "$T_TMP/a" ||
	t_fail "--seed 1"
uuid1=$(dumpe2fs -h "$T_TMP/s1.img" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
uuid2=$(dumpe2fs -h "$T_TMP/late.img" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p')
[ "$uuid1" != "$uuid" ] && [ "$uuid2" != "$uuid" ] && [ "$uuid1" != "$uuid2" ] ||
	t_fail "UUIDs $uuid $uuid1 $uuid2"
# the user's own -U wins
"$ORLOV_POPULATE" -q --create 8M --mkfs-options "-U $T_UUID -b 2048" "$T_TMP/u.img" "$T_TMP/a" ||
	t_fail "--mkfs-options"
dumpe2fs -h "$T_TMP/u.img" 2>/dev/null | grep -q "^Filesystem UUID: *$T_UUID$" || t_fail "-U not kept"
dumpe2fs -h "$T_TMP/u.img" 2>/dev/null | grep -q "^Block size: *2048$" || t_fail "-b 2048 not passed"
# into an existing image: the superblock's write time too
t_mkimage "$T_TMP/e1.img" 8M -t ext2 -b 1024
cp "$T_TMP/e1.img" "$T_TMP/e2.img"
"$ORLOV_POPULATE" -q "$T_TMP/e1.img" "$T_TMP/a" || t_fail "existing a"
"$ORLOV_POPULATE" -q "$T_TMP/e2.img" "$T_TMP/b" || t_fail "existing b"
cmp "$T_TMP/e1.img" "$T_TMP/e2.img" || t_fail "existing image: two runs differ"
t_verify "$img" "$T_TMP/a"
t_verify "$img" "$T_TMP/b"
# Without SOURCE_DATE_EPOCH the same two runs differ (UUID, times): the
# cmp above can fail.
for t in a b; do
	env -u SOURCE_DATE_EPOCH "$ORLOV_POPULATE" -q --create 8M --block-size 1024 \
		"$T_TMP/n-$t.img" "$T_TMP/$t" || t_fail "no epoch $t"
done
cmp -s "$T_TMP/n-a.img" "$T_TMP/n-b.img" && t_fail "without SOURCE_DATE_EPOCH the images are identical"
echo "without SOURCE_DATE_EPOCH: the images differ, as they should"
rm -f "$T_TMP"/*.img

# ---- device table, owners --------------------------------------------------
src=$T_TMP/root
mkdir -p "$src/bin" "$src/dev" "$src/etc"
printf 'root:x:0:0::/root:/bin/sh\n' >"$src/etc/passwd"
printf '#!/bin/sh\n' >"$src/bin/sh"
chmod 755 "$src/bin/sh"
cat >"$T_TMP/table" <<'TABLE'
# name		type	mode	uid	gid	major	minor	start	inc	count
/dev		d	755	0	0	-	-	-	-	-
/dev/console	c	600	0	5	5	1	-	-	-
/dev/tty	c	666	0	5	4	0	0	1	4
/dev/hda	b	640	0	6	3	0	1	1	3
/dev/pts	d	755	0	0	-	-	-	-	-
/dev/initctl	p	600	0	0	-	-	-	-	-
/var		d	755	0	0	-	-	-	-	-
/var/run	d	755	0	0	-	-	-	-	-
/bin/sh		f	4755	0	0	-	-	-	-	-
TABLE
img=$T_TMP/dev.img
"$ORLOV_POPULATE" -v --create 64M --fs-type ext2 --block-size 1024 --all-root \
	--devtable "$T_TMP/table" "$img" "$src" >"$T_TMP/out" ||
	t_fail "--devtable"
t_fsck "$img"
sed '$d' "$T_TMP/out" >"$T_TMP/got"
cat >"$T_TMP/want" <<'WANT'
/bin 12289 6
/bin/sh 12290 6
/dev 8193 4
/dev/console 8194 4
/dev/hda1 8195 4
/dev/hda2 8196 4
/dev/hda3 8197 4
/dev/initctl 8198 4
/dev/pts 8199 4
/dev/tty0 8200 4
/dev/tty1 8201 4
/dev/tty2 8202 4
/dev/tty3 8203 4
/etc 4097 2
/etc/passwd 4098 2
/var 4099 2
/var/run 4100 2
WANT
diff "$T_TMP/want" "$T_TMP/got" || t_fail "device table: inode numbers"
# The same tree made of plain entries (empty files for the nodes) gets
# the same inodes: the table's entries are created in the sorted order.
eq=$T_TMP/eq
cp -a "$src" "$eq"
mkdir -p "$eq/dev/pts" "$eq/var/run"
for n in console hda1 hda2 hda3 initctl tty0 tty1 tty2 tty3; do : >"$eq/dev/$n"; done
"$ORLOV_POPULATE" -v --create 64M --fs-type ext2 --block-size 1024 \
	"$T_TMP/eq.img" "$eq" >"$T_TMP/out" ||
	t_fail "the plain tree"
sed '$d' "$T_TMP/out" | diff "$T_TMP/want" - || t_fail "the plain tree has other inode numbers"
# what the nodes are
node() {	# PATH TYPE MODE UID GID [MAJOR:MINOR]
	debugfs -R "stat $1" "$img" 2>/dev/null >"$T_TMP/stat"
	grep -q "Type: $2 *Mode: *$3 " "$T_TMP/stat" &&
		grep -q "^User: *$4 *Group: *$5 " "$T_TMP/stat" ||
		{ head -3 "$T_TMP/stat" >&2; t_fail "$1: want $2 $3 $4:$5"; }
	if [ -n "${6:-}" ]; then
		grep -q "^Device major/minor number: $6 " "$T_TMP/stat" ||
			{ grep Device "$T_TMP/stat" >&2; t_fail "$1: device $6"; }
	fi
}
node /dev/console "character special" 0600 0 5 05:01
node /dev/tty0 "character special" 0666 0 5 04:00
node /dev/tty3 "character special" 0666 0 5 04:03
node /dev/hda1 "block special" 0640 0 6 03:00
node /dev/hda3 "block special" 0640 0 6 03:02
node /dev/initctl FIFO 0600 0 0
node /dev/pts directory 0755 0 0
node /bin/sh regular 04755 0 0
node /etc/passwd regular 0644 0 0
echo "device table: 17 entries, 12 of them from the table, as a root build would make them"

# --uid-map, --gid-map, --root-owner; verify with the same maps
u=$(id -u) g=$(id -g)
"$ORLOV_POPULATE" -q --create 8M --block-size 1024 --uid-map "$u:1000" \
	--gid-map "$g:2000" --root-owner 1234:5678 "$T_TMP/map.img" "$src" ||
	t_fail "--uid-map"
t_fsck "$T_TMP/map.img"
img=$T_TMP/map.img
node /etc/passwd regular 0644 1000 2000
node /bin/sh regular 0755 1000 2000
node / directory 0755 1234 5678
"$ORLOV_LAYOUT" verify --clamp --uid-map "$u:1000" --gid-map "$g:2000" "$img" "$src" >/dev/null ||
	t_fail "verify with the maps"
"$ORLOV_LAYOUT" verify --clamp "$img" "$src" >"$T_TMP/v" && t_fail "verify without the maps found nothing"
grep -q "^mismatch: /etc/passwd: uid (expected $u, got 1000)$" "$T_TMP/v" ||
	{ cat "$T_TMP/v" >&2; t_fail "verify without the maps"; }
echo "owners: mapped, and verify agrees only with the same maps"

# --create over an image that exists: the new one is built under another
# name beside it and renamed over it at the end, so a run that stops
# leaves the old image; the new one keeps the old one's mode.
d=$T_TMP/swap
mkdir "$d"
"$ORLOV_POPULATE" -q --create 8M "$d/img" "$src" || t_fail "--create"
chmod 0640 "$d/img"
cp "$d/img" "$T_TMP/before.img"
ORLOV_FAULT=kill:5 "$ORLOV_HOOKS_POPULATE" -q --create 16M --block-size 1024 \
	"$d/img" "$src" 2>/dev/null
[ $? = 137 ] || t_fail "--create: not killed"
cmp -s "$d/img" "$T_TMP/before.img" || t_fail "--create, killed: the old image changed"
ls -A "$d" | grep -q '^\.img\.orlov-' || t_fail "--create: no new image beside the old"
rm -f "$d"/.img.orlov-*
"$ORLOV_POPULATE" -q --create 16M --block-size 1024 "$d/img" "$src" ||
	t_fail "--create over an image"
t_fsck "$d/img"
[ "$(ls -A "$d")" = img ] || t_fail "--create left $(ls -A "$d")"
[ "$(stat -c %a "$d/img")" = 640 ] || t_fail "--create: mode $(stat -c %a "$d/img")"
dumpe2fs -h "$d/img" 2>/dev/null | grep -q '^Block size: *1024$' ||
	t_fail "--create: not the new filesystem"
# --in-place: mke2fs writes the image itself, as before
ino=$(stat -c %i "$d/img")
"$ORLOV_POPULATE" -q --in-place --create 8M "$d/img" "$src" || t_fail "--in-place --create"
[ "$(stat -c %i "$d/img")" = "$ino" ] || t_fail "--in-place --create: another file"
echo "--create: built beside the image, renamed over it; killed, the old image is intact"

# Populating an ext2 image file: a copy renamed over it (a new inode),
# unless it has another hard link, which a rename would split: then in
# place, with a warning.
t_mkimage "$d/e2.img" 8M -t ext2
ino=$(stat -c %i "$d/e2.img")
"$ORLOV_POPULATE" -q "$d/e2.img" "$src" || t_fail "populating ext2"
[ "$(stat -c %i "$d/e2.img")" != "$ino" ] || t_fail "ext2: written in place"
[ "$(ls -A "$d" | grep -c orlov-)" = 0 ] || t_fail "ext2: a copy left"
t_mkimage "$d/e2.img" 8M -t ext2
ln "$d/e2.img" "$d/link.img"
"$ORLOV_POPULATE" -q "$d/e2.img" "$src" 2>"$T_TMP/err" || t_fail "ext2, two links"
grep -q "^orlov-populate: warning: $d/e2.img written in place, as it has more than one hard link: killed while it commits, it needs e2fsck -fy (--undo FILE makes the run undoable)$" "$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "ext2, two links: no warning"; }
[ "$(stat -c %i "$d/e2.img")" = "$(stat -c %i "$d/link.img")" ] || t_fail "ext2: links split"
t_fsck "$d/link.img"
# ext3 with a journal that takes the commit: in place
t_mkimage "$d/e3.img" 8M -t ext3
ino=$(stat -c %i "$d/e3.img")
"$ORLOV_POPULATE" -q "$d/e3.img" "$src" || t_fail "populating ext3"
[ "$(stat -c %i "$d/e3.img")" = "$ino" ] || t_fail "ext3: not through its journal"
t_fsck "$d/e3.img"
t_mkimage "$d/e3.img" 8M -t ext3
ln "$d/e3.img" "$d/e3link.img"
"$ORLOV_POPULATE" -q "$d/e3.img" "$src" 2>"$T_TMP/err" || t_fail "ext3, two links"
[ -s "$T_TMP/err" ] && t_fail "ext3, two links, through the journal: $(cat "$T_TMP/err")"
t_fsck "$d/e3link.img"
echo "commit: ext2 by a copy, ext3 through its journal, a hard-linked image in place with a warning"
