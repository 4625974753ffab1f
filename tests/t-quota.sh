#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# quota: an image with the quota feature gets each owner's entry in the
# hidden quota files, in the order the kernel makes them (the first
# chown to an id), and the usage the kernel keeps (e2fsck -fn compares
# it with what it counts), with and without delayed allocation, and in a
# second run into an image that has usage already, and where the files
# grow by new blocks; with the project feature, a third quota file, every
# new inode of project 0, or of its PROJINHERIT parent's.  Refused, in
# one line and with the image unchanged: the ext2 driver (it cannot write
# the feature), a damaged quota file, a run that leaves an owner with
# nothing (its entry deleted by ext4), and a hard link across projects
# into a PROJINHERIT directory.
export SOURCE_DATE_EPOCH=1700000000
. "$(dirname "$0")/lib.sh"

src=$T_TMP/src
mkdir -p "$src/a/b" "$src/c" || t_fail "mkdir"
i=1
while [ $i -le 6 ]; do
	head -c $((i * 5000)) /dev/zero | tr '\0' x >"$src/a/f$i"
	printf '%s' "$i" >"$src/a/b/g$i"
	printf '%s' "$i" >"$src/c/h$i"
	i=$((i + 1))
done
ln -s "/a/target/longer/than/the/sixty/bytes/that/i_block/holds/in/place" \
	"$src/c/slow" || t_fail "ln"
t_pin_times "$src"
# owners from a device table (the rest root's, --all-root): anyone can
# run the test
cat >"$T_TMP/table" <<'TABLE'
/a		d	755	1000	100
/a/f1		f	644	1000	100
/a/f2		f	644	1000	100
/a/f3		f	600	2000	50
/a/b		d	750	1001	100
/a/b/g1		f	644	1001	50
/a/b/g2		f	644	1002	100
/c		d	755	0	200
/c/h1		f	644	2000	200
TABLE
img=$T_TMP/img

# lq TYPE: "ID SPACE INODES" for each entry of the quota file, in its order
lq() {
	debugfs -R "lq $1" "$img" 2>/dev/null | awk 'NR > 1 { print $1, $2, $5 }'
}

for da in --delalloc --no-delalloc; do
	t_mkimage "$img" 64M -t ext4 -b 4096 -O quota
	"$ORLOV_POPULATE" -q $da --all-root --devtable "$T_TMP/table" "$img" "$src" ||
		t_fail "$da: refused"
	t_fsck "$img"
	[ "$(lq user | awk '{ printf "%s ", $1 }')" = "0 1000 1001 1002 2000 " ] ||
		t_fail "$da: user entries $(lq user | tr '\n' ' ')"
	[ "$(lq group | awk '{ printf "%s ", $1 }')" = "0 100 50 200 " ] ||
		t_fail "$da: group entries $(lq group | tr '\n' ' ')"
	echo "$da: quota entries in chown order, e2fsck clean"
done

# a second run, into an image with usage: old owners' entries updated, a
# new owner's added after them
mkdir -p "$T_TMP/more/d" && printf 'more' >"$T_TMP/more/d/m" || t_fail "more"
cat >"$T_TMP/table2" <<'TABLE'
/d		d	755	1000	100
/d/m		f	644	1003	101
TABLE
debugfs -w -R "mkdir /more" "$img" >/dev/null 2>&1 || t_fail "mkdir /more"
e2fsck -fy "$img" >/dev/null 2>&1	# debugfs charged /more to nobody
t_fsck "$img"
"$ORLOV_POPULATE" -q -t /more --all-root --devtable "$T_TMP/table2" "$img" "$T_TMP/more" ||
	t_fail "second run refused"
t_fsck "$img"
[ "$(lq user | awk '{ printf "%s ", $1 }')" = "0 1000 1001 1002 2000 1003 " ] ||
	t_fail "second run: user entries $(lq user | tr '\n' ' ')"
echo "second run: usage added to the image's, e2fsck clean"

# refused before anything is written, in one line naming the feature
refused() { # WHAT WANT-LINE ARGS...
	what=$1 want=$2
	shift 2
	cp "$img" "$T_TMP/before.img"
	"$ORLOV_POPULATE" -q "$@" "$img" "$src" 2>"$T_TMP/err" &&
		t_fail "$what: accepted"
	[ "$(cat "$T_TMP/err")" = "$want" ] || t_fail "$what: $(cat "$T_TMP/err")"
	cmp -s "$img" "$T_TMP/before.img" || t_fail "$what: the image changed"
	echo "$what: refused"
}
t_mkimage "$img" 64M -t ext3 -b 4096 -O quota
refused "--driver ext2" \
	"orlov-populate: Filesystem feature not supported while checking filesystem $img (feature quota)" \
	--driver ext2 --all-root --devtable "$T_TMP/table"
"$ORLOV_POPULATE" -q --all-root --devtable "$T_TMP/table" "$img" "$src" ||
	t_fail "ext3 with quota under the ext4 driver refused"
t_fsck "$img"
# a directory merged into, chowned away from an owner that had only it:
# ext4 deletes that owner's entry, which is not modelled
t_mkimage "$img" 64M -t ext4 -b 4096 -O quota
debugfs -w -R "mkdir /a" "$img" >/dev/null 2>&1 &&
	debugfs -w -R "sif /a uid 4242" "$img" >/dev/null 2>&1 || t_fail "/a"
e2fsck -fy "$img" >/dev/null 2>&1
t_fsck "$img"
refused "an owner left with nothing" \
	"orlov-populate: An owner would be left with no inode (ext4 then deletes its quota entry: not modelled) while charging user 4242 in $img" \
	--merge --all-root --devtable "$T_TMP/table"
# a quota file whose header is gone (e2fsck's run skipped): refused
t_mkimage "$img" 64M -t ext4 -b 4096 -O quota
debugfs -w -R "zap_block -f <3> 0" "$img" >/dev/null 2>&1 || t_fail "zap"
refused "a damaged quota file" \
	"orlov-populate: The image's quota file (a hidden quota inode) is damaged or not of the vfsv1 format while reading the quota files of $img" \
	--no-fsck --all-root --devtable "$T_TMP/table"

# project quota: every new inode of project 0 (__ext4_new_inode's
# EXT4_DEF_PROJID, the parent without PROJINHERIT) and charged to it, so
# project 0's usage is every owner's together; the project quota file is
# an ordinary inode (mke2fs's first free, 12), charged to nobody
# sum TYPE: "SPACE INODES" of all the entries of TYPE's quota file
sum() {
	lq "$1" | awk '{ s += $2; i += $3 } END { print s, i }'
}
for da in --delalloc --no-delalloc; do
	t_mkimage "$img" 64M -t ext4 -b 4096 -I 256 -O quota,project
	"$ORLOV_POPULATE" -q $da --all-root --devtable "$T_TMP/table" "$img" "$src" ||
		t_fail "project, $da: refused"
	t_fsck "$img"
	[ "$(lq project | awk '{ printf "%s ", $1 }')" = "0 " ] ||
		t_fail "project, $da: entries $(lq project | tr '\n' ' ')"
	[ "$(sum project)" = "$(sum user)" ] && [ "$(sum user)" = "$(sum group)" ] ||
		t_fail "project, $da: usage $(sum project), users' $(sum user)"
	for p in /a /a/f3 /a/b/g2 /c/slow; do
		debugfs -R "stat $p" "$img" 2>/dev/null | grep -q 'Project: *0 ' ||
			t_fail "project, $da: $p's project id"
	done
	echo "project, $da: project 0 charged with $(sum project), e2fsck clean"
done
# a directory merged into that has project 7 (no PROJINHERIT) keeps it:
# its new blocks are charged to project 7, the new entries to project 0
debugfs -w -R "mkdir /more" "$img" >/dev/null 2>&1 &&
	debugfs -w -R "sif /more projid 7" "$img" >/dev/null 2>&1 || t_fail "/more"
e2fsck -fy "$img" >/dev/null 2>&1
t_fsck "$img"
i=1
while [ $i -le 200 ]; do
	: >"$T_TMP/more/name-long-enough-to-fill-a-block-$i"
	i=$((i + 1))
done
before=$(lq project | awk '$1 == 7 { print $2 }')
"$ORLOV_POPULATE" -q -t /more --all-root "$img" "$T_TMP/more" ||
	t_fail "project 7: refused"
t_fsck "$img"
[ "$(lq project | awk '{ printf "%s ", $1 }')" = "0 7 " ] ||
	t_fail "project 7: entries $(lq project | tr '\n' ' ')"
debugfs -R "stat /more/d" "$img" 2>/dev/null | grep -q 'Project: *0 ' ||
	t_fail "project 7: /more/d's project id"
after=$(lq project | awk '$1 == 7 { print $2 }')
[ "$after" -gt "$before" ] || t_fail "project 7: /more's usage $before, then $after"
echo "project 7: /more's usage $before, then $after, e2fsck clean"
# chattr +P and project $2 on directory $1 of $img (debugfs), its usage
# then counted into the quota files by e2fsck, which must leave it clean
plus_p() {
	debugfs -w -R "sif $1 flags 0x20080000" "$img" >/dev/null 2>&1 &&
		debugfs -w -R "sif $1 projid $2" "$img" >/dev/null 2>&1 ||
		t_fail "$1 +P"
	e2fsck -fy "$img" >/dev/null 2>&1
	t_fsck "$img"
}
# PROJINHERIT (chattr +P; debugfs here) on the target, of project 5:
# every new inode gets project 5 and is charged to it, new directories
# take the flag, files and symlinks do not (EXT4_REG_FLMASK,
# EXT4_OTHER_FLMASK)
for da in --delalloc --no-delalloc; do
	t_mkimage "$img" 64M -t ext4 -b 4096 -I 256 -O quota,project
	debugfs -w -R "mkdir /p" "$img" >/dev/null 2>&1 || t_fail "/p"
	plus_p /p 5
	"$ORLOV_POPULATE" -q $da -t /p --all-root --devtable "$T_TMP/table" \
		"$img" "$src" || t_fail "PROJINHERIT, $da: refused"
	t_fsck "$img"
	[ "$(lq project | awk '{ printf "%s ", $1 }')" = "0 5 " ] ||
		t_fail "PROJINHERIT, $da: entries $(lq project | tr '\n' ' ')"
	for p in /p/a:0x20080000 /p/a/b:0x20080000 /p/c:0x20080000 \
		/p/a/f3:0x80000 /p/c/slow:0x80000 /p/a/b/g2:0x80000; do
		debugfs -R "stat ${p%:*}" "$img" 2>/dev/null >"$T_TMP/stat"
		grep -q "Flags: ${p#*:}\$" "$T_TMP/stat" &&
			grep -q 'Project: *5 ' "$T_TMP/stat" ||
			t_fail "PROJINHERIT, $da: ${p%:*}: $(grep -E 'Flags|Project' "$T_TMP/stat" | tr '\n' ' ')"
	done
	echo "PROJINHERIT, $da: project 5 charged with $(lq project | awk '$1 == 5 { print $2, $3 }'), e2fsck clean"
done
# a hard link into a PROJINHERIT directory of another project (its
# inode made in a directory merged into, without the flag): ext4_link
# refuses it (EXDEV), and so is it here, the image unchanged
mkdir -p "$T_TMP/hl/m" "$T_TMP/hl/n" && printf 'x' >"$T_TMP/hl/m/f" &&
	ln "$T_TMP/hl/m/f" "$T_TMP/hl/n/f" || t_fail "hl"
t_mkimage "$img" 64M -t ext4 -b 4096 -I 256 -O quota,project
debugfs -w -R "mkdir /m" "$img" >/dev/null 2>&1 || t_fail "/m"
plus_p / 3
cp "$img" "$T_TMP/before.img"
"$ORLOV_POPULATE" -q --merge --all-root "$img" "$T_TMP/hl" 2>"$T_TMP/err" &&
	t_fail "a link across projects: accepted"
[ "$(cat "$T_TMP/err")" = "orlov-populate: A hard link into a PROJINHERIT directory of another project (ext4_link refuses it: EXDEV) while linking $T_TMP/hl/n/f" ] ||
	t_fail "a link across projects: $(cat "$T_TMP/err")"
cmp -s "$img" "$T_TMP/before.img" || t_fail "a link across projects: the image changed"
echo "a link across projects: refused"

# 1 KiB blocks: the trees grow past the files' six blocks, each new
# block mapped at the chown that needs it (from the locality group's
# preallocation, between the data of the files before and after it
# without delalloc: the user file's extents then need a tree block)
printf '/c/h2\t\tf\t644\t70000\t70000\n' >>"$T_TMP/table"
for da in --delalloc --no-delalloc; do
	t_mkimage "$img" 64M -t ext4 -b 1024 -O quota
	"$ORLOV_POPULATE" -q $da --all-root --devtable "$T_TMP/table" \
		"$img" "$src" || t_fail "1 KiB, $da: refused"
	t_fsck "$img"
	debugfs -R "stat <3>" "$img" 2>/dev/null | grep -q "Size: 10240\$" ||
		t_fail "1 KiB, $da: user quota file not grown to 10 quota blocks"
	# under delalloc no data block is taken between them: one extent
	ext=$(debugfs -R "stat <3>" "$img" 2>/dev/null | sed -n '/EXTENTS/,$p' | tr '\n' ' ')
	case $da:$ext in
	--delalloc:*"(6-9):"*|--no-delalloc:*ETB0*) ;;
	*) t_fail "1 KiB, $da: the user quota file's extents: $ext" ;;
	esac
	[ "$(lq user | awk '{ printf "%s ", $1 }')" = "0 1000 1001 1002 2000 70000 " ] ||
		t_fail "1 KiB, $da: user entries $(lq user | tr '\n' ' ')"
	echo "1 KiB blocks, $da: the quota files grown, e2fsck clean"
done
