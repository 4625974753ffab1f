#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# orlov-mkfs (man/orlov-mkfs.8) run as image pipelines run mkfs.ext4 -d:
# the build tree's links (mkfs/) first on PATH, the command lines Yocto,
# Buildroot and systemd-repart pass, each beside the installed mke2fs -d
# on the same arguments.  Each image must have mke2fs's superblock,
# e2fsck -fn and orlov-layout verify clean, orlov-populate's layout (which
# is not mke2fs -d's); mkfs.ext4 through PATH must make what orlov-mkfs
# -t ext4 makes; mistakes must exit as mke2fs exits and leave no image
# that looks finished.
. "$(dirname "$0")/lib.sh"

unset E2FSPROGS_FAKE_TIME	# orlov-mkfs must give mke2fs the epoch itself
export SOURCE_DATE_EPOCH=1700000000
t_clamp=--clamp
b=${top_builddir:-$PWD}
MKFS=$b/src/orlov-mkfs
LINKS=$b/mkfs
[ -x "$MKFS" ] || t_fail "no $MKFS"
for n in mkfs.ext2 mkfs.ext3 mkfs.ext4 mke2fs; do
	[ -x "$LINKS/$n" ] || t_fail "no $LINKS/$n"
done
# the installed ones, before PATH is switched
real=$(dirname "$(command -v mke2fs)")
[ -x "$real/mkfs.ext4" ] && [ -x "$real/mkfs.ext2" ] ||
	t_skip "no mkfs.ext4 / mkfs.ext2 next to $real/mke2fs"
ours() { (PATH=$LINKS:$PATH; export PATH; "$@"); }
# the installed mke2fs made reproducible as a pipeline makes it (its
# clock fixed; 1.47.0 reads no SOURCE_DATE_EPOCH)
theirs() { (export E2FSPROGS_FAKE_TIME=$SOURCE_DATE_EPOCH; "$@"); }

# A rootfs-like tree: every file type, hard links, a sparse file, and
# several top-level directories (where Orlov spreads, mke2fs -d does not).
root=$T_TMP/rootfs
t_sample_tree "$root"
for d in bin sbin lib usr/share var/lib root boot; do
	mkdir -p "$root/$d"
	for i in 1 2 3 4 5 6; do
		head -c $((i * 2500)) /dev/zero | tr '\0' "$i" >"$root/$d/f$i"
	done
done
t_pin_times "$root"

# sb IMAGE: dumpe2fs -h less what legitimately differs from mke2fs -d's:
# the superblock's checksum (over the fields below), the kilobytes
# written in its lifetime, the journal's sequence (the copy commits
# through the journal: one transaction more than mke2fs -d's none) and
# the free blocks (a sparse file's data is copied as the source's host
# filesystem maps it, 4 KiB pages, as a copy by the kernel writes it;
# mke2fs -d keeps holes at its own block size).
sb() {
	dumpe2fs -h "$1" 2>/dev/null |
		grep -Ev '^(Checksum|Lifetime writes|Journal sequence|Free blocks):' ||
		t_fail "dumpe2fs -h $1"
}
field() { dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^$2: *//p"; }

# same_sb WHAT OURS THEIRS [FIELD...]: the superblocks equal but for the
# fields named (a UUID or hash seed the command line leaves to chance).
same_sb() {
	local what=$1 a=$2 c=$3 mask='^$'
	shift 3
	for f in "$@"; do
		mask="$mask|^$f:"
	done
	sb "$a" | grep -Ev "$mask" >"$T_TMP/sb.ours"
	sb "$c" | grep -Ev "$mask" >"$T_TMP/sb.mke2fs"
	diff "$T_TMP/sb.mke2fs" "$T_TMP/sb.ours" >&2 ||
		t_fail "$what: superblock is not mke2fs -d's"
	grep -q '^Inode count:' "$T_TMP/sb.ours" || t_fail "$what: no superblock"
}

# checked WHAT IMAGE MKE2FS-IMAGE SOURCE: e2fsck and verify clean, and a
# layout that is not mke2fs -d's.
checked() {
	t_fsck "$2"
	t_verify "$2" "$4"
	"$ORLOV_LAYOUT" diff "$3" "$2" >"$T_TMP/diff.out" 2>&1
	[ $? = 1 ] || { cat "$T_TMP/diff.out" >&2; t_fail "$1: mke2fs -d's layout"; }
}

# as_populate WHAT IMAGE SIZE-FILE EXT MKE2FS-ARGS...: the image is what
# the installed mke2fs (the same arguments, -E EXT and the image's UUID and
# hash seed, no -d) and orlov-populate IMAGE ROOT make: the engine with
# its defaults.  (mke2fs 1.47.0 keeps the last -E only.)
as_populate() {
	local what=$1 img=$2 pre=$3 ext=$4 u s
	shift 4
	u=$(field "$img" 'Filesystem UUID')
	s=$(field "$img" 'Directory Hash Seed')
	rm -f "$T_TMP/pop.img"
	[ "$pre" = - ] || cp "$pre" "$T_TMP/pop.img"
	"$@" -U "$u" -E "${ext:+$ext,}hash_seed=$s" >/dev/null 2>&1 ||
		t_fail "$what: mke2fs $*"
	"$ORLOV_POPULATE" -q "$T_TMP/pop.img" "$root" || t_fail "$what: orlov-populate"
	"$ORLOV_LAYOUT" diff "$T_TMP/pop.img" "$img" >"$T_TMP/diff.out" 2>&1 ||
		{ cat "$T_TMP/diff.out" >&2; t_fail "$what: not orlov-populate's layout"; }
}

# ---- Yocto: IMAGE_CMD:ext4 on a file dd made to the rootfs size --------
yocto() {
	dd if=/dev/zero of="$1" seek=131072 count=0 bs=1024 2>/dev/null
	chmod 640 "$1"
}
yocto "$T_TMP/y.img"
cp "$T_TMP/y.img" "$T_TMP/y-pre.img"
yocto "$T_TMP/y-mke2fs.img"
# the switch as contrib/yocto's class makes it: its IMAGE_CMD:ext4 prepend
# run as shell before the image class's command, ORLOV_MKFS_DIR this
# build's links
class=$top_srcdir/contrib/yocto/classes/orlov-mkfs.bbclass
prepend=$(sed -n 's/^IMAGE_CMD:ext4:prepend = "\(.*\)"$/\1/p' "$class")
[ -n "$prepend" ] || t_fail "yocto: no IMAGE_CMD:ext4 prepend in $class"
(ORLOV_MKFS_DIR=$LINKS
 eval "$(printf '%s' "$prepend" | sed 's/\${ORLOV_MKFS_DIR}/$ORLOV_MKFS_DIR/g')"
 [ "$(command -v mkfs.ext4)" = "$LINKS/mkfs.ext4" ] || exit 3
 mkfs.ext4 -F -i 4096 "$T_TMP/y.img" -d "$root") >"$T_TMP/out" 2>&1 ||
	{ cat "$T_TMP/out" >&2; t_fail "yocto: the class's prepend, then mkfs.ext4 -F -i 4096 IMG -d ROOT"; }
grep -q '^Copying files into the device: done$' "$T_TMP/out" ||
	t_fail "yocto: no 'Copying files' line as mke2fs -d prints"
theirs "$real/mkfs.ext4" -F -i 4096 "$T_TMP/y-mke2fs.img" -d "$root" >/dev/null 2>&1 ||
	t_fail "yocto: the installed mkfs.ext4 -d"
# no -U, no hash_seed: mke2fs draws both at random, in each run
same_sb yocto "$T_TMP/y.img" "$T_TMP/y-mke2fs.img" 'Filesystem UUID' 'Directory Hash Seed'
checked yocto "$T_TMP/y.img" "$T_TMP/y-mke2fs.img" "$root"
as_populate yocto "$T_TMP/y.img" "$T_TMP/y-pre.img" "" \
	"$real/mkfs.ext4" -F -i 4096 "$T_TMP/pop.img"
[ "$(stat -c %a:%s "$T_TMP/y.img")" = 640:134217728 ] ||
	t_fail "yocto: the image's mode or size changed: $(stat -c %a:%s "$T_TMP/y.img")"
echo "yocto: mkfs.ext4 -F -i 4096 IMG -d ROOT: mke2fs's superblock, orlov-populate's layout"

# ---- Buildroot: fs/ext2/ext2.mk's command, literally --------------------
br() {
	rm -f "$2"
	"$1" -d "$root" -r 1 -N 1200 -m 5 -L "rootfs" -I 256 -O ^64bit "$2" "24M"
}
# ext2.mk runs $(HOST_DIR)/sbin/mkfs.ext4 by path: contrib/buildroot's
# post-build script links it to orlov-mkfs; mke2fs stays host-e2fsprogs'
host=$T_TMP/host
mkdir -p "$host/sbin"
cp "$real/mke2fs" "$host/sbin/mke2fs" && ln "$host/sbin/mke2fs" "$host/sbin/mkfs.ext4" ||
	t_fail "buildroot: a HOST_DIR"
HOST_DIR=$host ORLOV_MKFS=$MKFS sh "$top_srcdir/contrib/buildroot/post-build.sh" ||
	t_fail "buildroot: contrib/buildroot/post-build.sh"
[ "$(readlink "$host/sbin/mkfs.ext4")" = "$MKFS" ] || t_fail "buildroot: mkfs.ext4 not linked"
(PATH=$host/bin:$host/sbin:$PATH; export PATH; br "$host/sbin/mkfs.ext4" "$T_TMP/br.img") \
	>"$T_TMP/out" 2>&1 || { cat "$T_TMP/out" >&2; t_fail "buildroot: mkfs.ext4"; }
theirs br "$real/mkfs.ext4" "$T_TMP/br-mke2fs.img" >/dev/null 2>&1 || t_fail "buildroot: installed mkfs.ext4"
same_sb buildroot "$T_TMP/br.img" "$T_TMP/br-mke2fs.img" 'Filesystem UUID' 'Directory Hash Seed'
[ "$(field "$T_TMP/br.img" 'Filesystem volume name')" = rootfs ] || t_fail "buildroot: label"
[ "$(field "$T_TMP/br.img" 'Inode count')" = 1200 ] || t_fail "buildroot: -N 1200"
field "$T_TMP/br.img" 'Filesystem features' | grep -qw 64bit && t_fail "buildroot: -O ^64bit"
checked buildroot "$T_TMP/br.img" "$T_TMP/br-mke2fs.img" "$root"
as_populate buildroot "$T_TMP/br.img" - "" \
	"$real/mkfs.ext4" -r 1 -N 1200 -m 5 -L rootfs -I 256 -O ^64bit "$T_TMP/pop.img" 24M
echo "buildroot: mkfs.ext4 -d ROOT -r 1 -N 1200 -m 5 -L rootfs -I 256 -O ^64bit IMG 24M: as above"

# ---- systemd-repart (offline, as mkosi runs it): make_filesystem's args --
rp() {
	truncate -s 64M "$2"
	"$1" -L root -U $T_UUID -I 256 -m 0 -E nodiscard,lazy_itable_init=1 \
		-b 4096 -T default "$2" -d "$root" -q
}
rm -f "$T_TMP"/*.img
ours rp mkfs.ext4 "$T_TMP/rp.img" || t_fail "repart: mkfs.ext4"
theirs rp "$real/mkfs.ext4" "$T_TMP/rp-mke2fs.img" || t_fail "repart: installed mkfs.ext4"
# -U given: the UUID compared too; the hash seed is still mke2fs's draw
same_sb repart "$T_TMP/rp.img" "$T_TMP/rp-mke2fs.img" 'Directory Hash Seed'
checked repart "$T_TMP/rp.img" "$T_TMP/rp-mke2fs.img" "$root"
truncate -s 64M "$T_TMP/rp-pre.img"
as_populate repart "$T_TMP/rp.img" "$T_TMP/rp-pre.img" \
	nodiscard,lazy_itable_init=1 "$real/mkfs.ext4" \
	-L root -I 256 -m 0 -b 4096 -T default \
	-q "$T_TMP/pop.img"
echo "repart: mkfs.ext4 -L root -U UUID -I 256 -m 0 -E nodiscard,lazy_itable_init=1 -b 4096 -T default IMG -d ROOT -q: as above"

# ---- ext2, 1 KiB blocks: top-level directories over the groups ----------
ours mkfs.ext2 -q -b 1024 -d "$root" "$T_TMP/e2.img" 32M >/dev/null 2>&1 || t_fail "ext2: mkfs.ext2"
theirs "$real/mkfs.ext2" -q -b 1024 -d "$root" "$T_TMP/e2-mke2fs.img" 32M >/dev/null 2>&1 || t_fail "ext2: installed"
same_sb ext2 "$T_TMP/e2.img" "$T_TMP/e2-mke2fs.img" 'Filesystem UUID' 'Directory Hash Seed'
checked ext2 "$T_TMP/e2.img" "$T_TMP/e2-mke2fs.img" "$root"
as_populate ext2 "$T_TMP/e2.img" - "" "$real/mkfs.ext2" -q -b 1024 "$T_TMP/pop.img" 32M
tl() { "$ORLOV_LAYOUT" stats "$1" | sed -n 's/.* top_level_groups=\([0-9]*\).*/\1/p'; }
[ "$(tl "$T_TMP/e2-mke2fs.img")" = 1 ] && [ "$(tl "$T_TMP/e2.img")" -gt 2 ] ||
	t_fail "ext2: top-level directories in $(tl "$T_TMP/e2.img") groups (mke2fs -d: $(tl "$T_TMP/e2-mke2fs.img"))"
echo "ext2: mkfs.ext2 -b 1024 -d ROOT IMG 32M: top-level directories in $(tl "$T_TMP/e2.img") groups, mke2fs -d's in 1"
rm -f "$T_TMP"/*.img

# ---- the PATH switch: mkfs.ext4 -d is orlov-mkfs -t ext4 -d --------------
pin="-U $T_UUID -E hash_seed=$T_SEED"
# shellcheck disable=SC2086
ours mkfs.ext4 -q $pin -d "$root" "$T_TMP/p.img" 16M || t_fail "PATH: mkfs.ext4"
# shellcheck disable=SC2086
"$MKFS" -q -t ext4 $pin -d "$root" "$T_TMP/o.img" 16M || t_fail "orlov-mkfs -t ext4"
cmp "$T_TMP/p.img" "$T_TMP/o.img" || t_fail "PATH's mkfs.ext4 -d and orlov-mkfs -t ext4 -d differ"
# shellcheck disable=SC2086
theirs "$real/mkfs.ext4" -q $pin -d "$root" "$T_TMP/m.img" 16M >/dev/null 2>&1 || t_fail "installed mkfs.ext4"
cmp -s "$T_TMP/p.img" "$T_TMP/m.img" && t_fail "PATH's mkfs.ext4 -d made mke2fs -d's image"
checked PATH "$T_TMP/p.img" "$T_TMP/m.img" "$root"
[ "$(field "$T_TMP/p.img" 'Filesystem created')" = "Tue Nov 14 22:13:20 2023" ] ||
	t_fail "SOURCE_DATE_EPOCH is not mke2fs's creation time"
[ "$(field "$T_TMP/p.img" 'Last write time')" = "Tue Nov 14 22:13:20 2023" ] ||
	t_fail "SOURCE_DATE_EPOCH is not the last write time"
echo "PATH: mkfs.ext4 -d and orlov-mkfs -t ext4 -d: cmp-identical, not mke2fs -d's"

# without -d: mke2fs itself, byte for byte
# shellcheck disable=SC2086
(export E2FSPROGS_FAKE_TIME=1700000000; ours mkfs.ext4 -q $pin "$T_TMP/n.img" 8M) >/dev/null ||
	t_fail "no -d"
# shellcheck disable=SC2086
(export E2FSPROGS_FAKE_TIME=1700000000; "$real/mkfs.ext4" -q $pin "$T_TMP/n2.img" 8M) >/dev/null ||
	t_fail "installed, no -d"
cmp "$T_TMP/n.img" "$T_TMP/n2.img" || t_fail "without -d: not mke2fs's image"

# our options through ORLOV_MKFS_OPTIONS, split as a shell splits them
(export ORLOV_MKFS_OPTIONS="--kernel 6.12 --trace '$T_TMP/a trace'"
 ours mkfs.ext4 -q -d "$root" "$T_TMP/t.img" 16M) || t_fail "ORLOV_MKFS_OPTIONS"
[ -s "$T_TMP/a trace" ] || t_fail "ORLOV_MKFS_OPTIONS: --trace wrote nothing"
(export ORLOV_MKFS_OPTIONS="--kernel 9.9"
 ours mkfs.ext4 -q -d "$root" "$T_TMP/k.img" 16M) 2>"$T_TMP/err" &&
	t_fail "ORLOV_MKFS_OPTIONS --kernel 9.9 taken"
grep -q 'ORLOV_MKFS_OPTIONS' "$T_TMP/err" || t_fail "ORLOV_MKFS_OPTIONS not named: $(cat "$T_TMP/err")"
[ -e "$T_TMP/k.img" ] && t_fail "a refused ORLOV_MKFS_OPTIONS left an image"
echo "ORLOV_MKFS_OPTIONS: --trace reached the engine; --kernel 9.9 refused, nothing written"

# ---- mistakes: exit as mke2fs exits, no image that looks finished --------
# a bad option: mke2fs's own message and status
ours mkfs.ext4 -Z "$T_TMP/x.img" >"$T_TMP/o1" 2>&1
s1=$?
mkfs.ext4 -Z "$T_TMP/x.img" >"$T_TMP/o2" 2>&1	# by name: the usage names it so
s2=$?
[ $s1 = $s2 ] && [ $s1 != 0 ] && cmp -s "$T_TMP/o1" "$T_TMP/o2" ||
	t_fail "bad option: status $s1 (mke2fs $s2), $(cat "$T_TMP/o1")"
# a missing root: exit 1 naming it; a new image never appears, an old
# one stays as it was
ours mkfs.ext4 -q -d "$T_TMP/none" "$T_TMP/x.img" 8M 2>"$T_TMP/err"
s1=$?
"$real/mkfs.ext4" -q -d "$T_TMP/none" "$T_TMP/x2.img" 8M >/dev/null 2>&1
s2=$?
[ $s1 = 1 ] && [ $s2 = 1 ] || t_fail "missing root: status $s1 (mke2fs $s2)"
grep -q "$T_TMP/none" "$T_TMP/err" || t_fail "missing root not named: $(cat "$T_TMP/err")"
[ -e "$T_TMP/x.img" ] && t_fail "missing root: an image was left"
cp "$T_TMP/o.img" "$T_TMP/keep.img"
ours mkfs.ext4 -q -F -d "$T_TMP/none" "$T_TMP/keep.img" 2>/dev/null && t_fail "missing root taken"
cmp -s "$T_TMP/o.img" "$T_TMP/keep.img" || t_fail "missing root: the old image changed"
# too small for the tree: exit 1 (mke2fs -d's), refused before the
# image is written
mkdir "$T_TMP/big"
head -c 3000000 /dev/urandom >"$T_TMP/big/blob"
ours mkfs.ext4 -q -d "$T_TMP/big" "$T_TMP/x.img" 2M 2>"$T_TMP/err"
s1=$?
"$real/mkfs.ext4" -q -d "$T_TMP/big" "$T_TMP/x2.img" 2M >/dev/null 2>&1
s2=$?
[ $s1 = 1 ] && [ $s2 = 1 ] || t_fail "too small: status $s1 (mke2fs $s2)"
grep -q 'x.img has' "$T_TMP/err" && ! grep -q '\.orlov-' "$T_TMP/err" ||
	t_fail "too small: the message names no image, or the temporary one: $(cat "$T_TMP/err")"
[ -e "$T_TMP/x.img" ] && t_fail "too small: an image was left"
yocto "$T_TMP/x.img"
cp "$T_TMP/x.img" "$T_TMP/x-pre.img"
ours mkfs.ext4 -q -F -d "$T_TMP/big" "$T_TMP/x.img" 2048 2>/dev/null && t_fail "too small (pre-sized) taken"
cmp -s "$T_TMP/x.img" "$T_TMP/x-pre.img" || t_fail "too small: the pre-sized file changed"
ls -a "$T_TMP" | grep -q '\.orlov-' && t_fail "a temporary file was left: $(ls -a "$T_TMP")"
echo "mistakes: bad option, missing root and too small exit as mke2fs does; nothing left"

# mke2fs's own refusal of a new image: its words and status, naming the
# image (not the file it was made in), with its "Creating regular file"
rm -f "$T_TMP/x.img" "$T_TMP/x2.img"
(cd "$T_TMP" && ours mkfs.ext4 -b 1024 -d rootfs x.img 10) >"$T_TMP/o1" 2>"$T_TMP/e1"
s1=$?
(cd "$T_TMP" && theirs "$real/mkfs.ext4" -b 1024 -d rootfs x2.img 10) >"$T_TMP/o2" 2>"$T_TMP/e2"
s2=$?
sed 's/x2\.img/x.img/g' "$T_TMP/o2" | diff - "$T_TMP/o1" >&2 &&
	sed 's/x2\.img/x.img/g' "$T_TMP/e2" | diff - "$T_TMP/e1" >&2 &&
	[ $s1 = $s2 ] && [ $s1 != 0 ] ||
	t_fail "mke2fs's refusal: status $s1 (mke2fs $s2), not mke2fs's words: $(cat "$T_TMP/o1" "$T_TMP/e1")"
[ -e "$T_TMP/x.img" ] && t_fail "mke2fs's refusal: an image was left"
echo "mke2fs's refusal: its words and status (exit $s1), naming x.img"

# in place (a filesystem at -E offset=, as in a partition; a file with
# another link, as a device): made where it is; a copy that fails there
# clears the primary superblock, so nothing takes it for a finished one
truncate -s 20M "$T_TMP/off.img"
ours mkfs.ext4 -q -E offset=1048576 -d "$root" "$T_TMP/off.img" 16M ||
	t_fail "in place: -E offset=1048576"
"$ORLOV_LAYOUT" verify --clamp --offset 1048576 "$T_TMP/off.img" "$root" >"$T_TMP/v.out" 2>&1 ||
	{ cat "$T_TMP/v.out" >&2; t_fail "in place: -E offset=: verify"; }
[ "$(stat -c %s "$T_TMP/off.img")" = 20971520 ] || t_fail "in place: -E offset=: the file's size changed"
truncate -s 8M "$T_TMP/dev.img" && ln "$T_TMP/dev.img" "$T_TMP/dev-link"
ours mkfs.ext4 -q -d "$root" "$T_TMP/dev.img" || t_fail "in place: a file with two links"
[ "$(stat -c %i "$T_TMP/dev.img")" = "$(stat -c %i "$T_TMP/dev-link")" ] ||
	t_fail "in place: the linked file was replaced, not written"
t_fsck "$T_TMP/dev.img"
t_verify "$T_TMP/dev.img" "$root"
ours mkfs.ext4 -q -d "$T_TMP/big" "$T_TMP/dev.img" 2M 2>"$T_TMP/err" &&
	t_fail "in place: too small taken"
grep -q 'primary superblock cleared' "$T_TMP/err" || t_fail "in place: no word of the cleared superblock: $(cat "$T_TMP/err")"
dumpe2fs -h "$T_TMP/dev.img" >/dev/null 2>&1 && t_fail "in place: an unfinished filesystem still has its superblock"
echo "in place: -E offset= and a linked file filled where they are; a failure there clears the superblock"

# at a terminal, without -F, an existing filesystem is asked about as
# mke2fs asks; no keeps it whole, yes makes the new one
if command -v script >/dev/null && script -qec true /dev/null >/dev/null 2>&1; then
	cp "$T_TMP/o.img" "$T_TMP/ask.img"
	echo n | script -qec "PATH='$LINKS':\$PATH mkfs.ext4 -d '$root' '$T_TMP/ask.img'" /dev/null >"$T_TMP/tty" 2>&1
	s1=$?
	grep -q 'contains a ext4 file system' "$T_TMP/tty" && grep -q 'Proceed anyway' "$T_TMP/tty" ||
		t_fail "at a terminal: no question about the filesystem: $(cat "$T_TMP/tty")"
	[ $s1 != 0 ] || t_fail "at a terminal: answered no, exit 0"
	cmp -s "$T_TMP/o.img" "$T_TMP/ask.img" || t_fail "at a terminal: answered no, the image changed"
	echo y | script -qec "PATH='$LINKS':\$PATH mkfs.ext4 -d '$root' '$T_TMP/ask.img'" /dev/null >"$T_TMP/tty" 2>&1 ||
		t_fail "at a terminal: answered yes: $(cat "$T_TMP/tty")"
	t_fsck "$T_TMP/ask.img"
	t_verify "$T_TMP/ask.img" "$root"
	echo "at a terminal: mke2fs's question; no keeps the image (exit $s1), yes fills it"
else
	echo "at a terminal: skipped (no script(1) to give a terminal)"
fi

# ---- -d with an archive (mke2fs 1.47.1's tarball) ------------------------
if "$ORLOV_POPULATE" --help=all | grep -q 'archives'; then
	tar -C "$root" -cf "$T_TMP/root.tar" . || t_fail "tar"
	ours mkfs.ext4 -q -d "$T_TMP/root.tar" "$T_TMP/tar.img" 16M || t_fail "-d root.tar"
	t_fsck "$T_TMP/tar.img"
	t_verify "$T_TMP/tar.img" "$T_TMP/root.tar"
	echo "tarball: mkfs.ext4 -d root.tar IMG 16M: verify clean"
fi
exit 0
