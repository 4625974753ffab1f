#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input: one com_err line (program, error, what, which path), a
# non-zero exit, and the image byte for byte as it was.
. "$(dirname "$0")/lib.sh"

src=$T_TMP/src
mkdir -p "$src/a"
printf 'hello\n' >"$src/a/f"

# expect NAME STATUS PATTERN IMAGE ARGS...: run, compare the message and
# that IMAGE did not change.
expect() {
	e_name=$1 e_want=$2 e_pattern=$3 e_img=$4
	shift 4
	rm -f "$T_TMP/before"
	[ -f "$e_img" ] && cp "$e_img" "$T_TMP/before"
	"$ORLOV_POPULATE" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	[ "$rc" = "$e_want" ] || { cat "$T_TMP/err" >&2; t_fail "$e_name: exit $rc, want $e_want"; }
	[ "$(wc -l <"$T_TMP/err")" -eq 1 ] || { cat "$T_TMP/err" >&2; t_fail "$e_name: not one line"; }
	grep -Eq "^orlov-populate: $e_pattern" "$T_TMP/err" ||
		{ od -c "$T_TMP/err" | head -5 >&2; t_fail "$e_name: message does not match /$e_pattern/"; }
	if [ -f "$e_img" ]; then
		cmp -s "$T_TMP/before" "$e_img" || t_fail "$e_name: image changed"
	fi
	echo "$e_name: ok: $(cat "$T_TMP/err")"
}

img=$T_TMP/img
t_mkimage "$img" 4M -t ext2 -b 1024 -N 64

expect usage 2 "Invalid usage \(expected IMAGE and SOURCE\)" "$img" "$img"
expect bad-policy 2 "Invalid usage \(--policy takes orlov or oldalloc\)" "$img" --policy x "$img" "$src"
expect bad-colour 2 "Invalid usage \(--block-colour takes" "$img" --block-colour 16 "$img" "$src"
expect relative-target 2 "Invalid usage \(--target must be an absolute" "$img" -t a "$img" "$src"
touch "$T_TMP/old.undo"
expect undo-exists 1 "File exists while checking undo file $T_TMP/old.undo" "$img" --undo "$T_TMP/old.undo" "$img" "$src"
expect undo-is-image 1 "Output file is the image or inside the source tree while checking undo file" "$img" --undo "$img" "$img" "$src"
expect bad-driver 2 "Invalid usage \(--driver takes ext2 or ext4\)" "$img" --driver ext3 "$img" "$src"
expect delalloc-ext2 2 "Invalid usage \(--delalloc is the ext4 driver's" "$img" --driver ext2 --delalloc "$img" "$src"
expect ext4-oldalloc 2 "Invalid usage \(--policy oldalloc is the ext2 driver's" "$img" --driver ext4 --policy oldalloc "$img" "$src"
expect ext4-random 2 "Invalid usage \(--topdir random is the ext2 driver's" "$img" --driver ext4 --topdir random "$img" "$src"
expect mbscan-word 2 "Invalid usage \(--mb-optimize-scan takes yes or no\)" "$img" --driver ext4 --kernel 6.8.5 --mb-optimize-scan 0 "$img" "$src"
expect mbscan-ext2 2 "Invalid usage \(--mb-optimize-scan is an ext4 mount option: give --driver ext4\)" "$img" --driver ext2 --mb-optimize-scan no "$img" "$src"
expect kernel-old 2 "Invalid usage \(--kernel 5.10: give 6.1 \(6.1.192\), 6.1.N, .* or 6.12-arm64\); try --help$" "$img" --kernel 5.10 "$img" "$src"
expect kernel-new 2 "Invalid usage \(--kernel 6.13: give 6.1 " "$img" --kernel 6.13 "$img" "$src"
expect no-image 1 "No such image file \(give --create SIZE to make one\) while opening $T_TMP/nope" \
	"$T_TMP/nope" "$T_TMP/nope" "$src"
[ ! -e "$T_TMP/nope" ] || t_fail "no-image: the file was created"

# Common mistakes get a hint: the option named, the arguments swapped, an
# archive or a file as SOURCE, -t taken for mke2fs's filesystem type.
expect unknown-long 2 "Invalid usage \(unknown option --frobnicate\); try --help" "$img" --frobnicate "$img" "$src"
expect unknown-short 2 "Invalid usage \(unknown option -x\); try --help" "$img" -x "$img" "$src"
expect missing-arg 2 "Invalid usage \(--policy needs an argument\); try --help" "$img" "$img" "$src" --policy
expect t-ext2 2 "Invalid usage \(-t ext2: -t is --target, a directory in IMAGE; the filesystem type is IMAGE's own \(or --fs-type with --create\)\)" \
	"$img" -t ext2 "$img" "$src"
expect swapped 1 "SOURCE holds a filesystem image and IMAGE is a directory: arguments swapped\? \(IMAGE comes first\) while reading $img" \
	"$img" "$src" "$img"
# An archive that cannot be read: what libarchive says, and the member.
if "$ORLOV_POPULATE" --help=all | grep -q "archive SOURCE"; then
	expect not-an-archive 1 "Cannot read the archive while reading archive $src/a/f \\(Unrecognized archive format\\)" \
		"$img" "$img" "$src/a/f"
	(cd "$T_TMP" && tar cf src.tar src) || t_fail "tar"
	head -c 2000 "$T_TMP/src.tar" >"$T_TMP/cut.tar"
	expect truncated-archive 1 "Cannot read the archive while reading archive $T_TMP/cut.tar member src/a/f \\(Truncated input file.*\\)" \
		"$img" "$img" "$T_TMP/cut.tar"
	python3 - "$T_TMP/dotdot.tar" "$T_TMP/badlink.tar" <<'PY' || t_fail "python tarfile"
import io, sys, tarfile
for path, (name, kind, link) in zip(sys.argv[1:], [("a/../../x", tarfile.REGTYPE, ""), ("b", tarfile.LNKTYPE, "nowhere")]):
    t = tarfile.open(path, "w", format=tarfile.PAX_FORMAT)
    i = tarfile.TarInfo(name); i.type = kind; i.linkname = link
    t.addfile(i); t.close()
PY
	expect archive-dotdot 1 "Archive member name leaves the tree \\(\\.\\. or the root as a file\\) while reading archive $T_TMP/dotdot.tar member a/\\.\\./\\.\\./x" \
		"$img" "$img" "$T_TMP/dotdot.tar"
	expect archive-badlink 1 "Archive hard link to a name not in the archive before it, or to a directory while reading archive $T_TMP/badlink.tar member b" \
		"$img" "$img" "$T_TMP/badlink.tar"
fi

# --create and the options that go with it.
expect create-opts-alone 2 "Invalid usage \(--fs-type, --block-size, --inodes and --mkfs-options go with --create SIZE\)" \
	"$img" --block-size 1024 "$img" "$src"
expect create-fstype 2 "Invalid usage \(--fs-type takes ext2, ext3 or ext4, not xfs\)" \
	"$img" --create 4M --fs-type xfs "$img" "$src"
expect create-ext4-ext2 2 "Invalid usage \(--fs-type ext4 makes an image only the ext4 driver writes: give --driver ext4 or none\)" \
	"$img" --create 4M --fs-type ext4 --driver ext2 "$img" "$src"
expect delalloc-oldalloc 2 "Invalid usage \(--delalloc is the ext4 driver's: it has no oldalloc, no random top-level directories\)" \
	"$img" --delalloc --policy oldalloc "$img" "$src"
expect create-undo 2 "Invalid usage \(--create makes a new filesystem: nothing for --undo to give back\)" \
	"$img" --create 4M --undo "$T_TMP/u" "$img" "$src"
# mke2fs's own message at the end of our one line
"$ORLOV_POPULATE" --create 4M --mkfs-options "-O no_such_feature" "$T_TMP/tiny.img" "$src" 2>"$T_TMP/err"
[ $? = 1 ] || t_fail "mkfs-fails: exit status"
[ "$(wc -l <"$T_TMP/err")" = 1 ] || { cat "$T_TMP/err" >&2; t_fail "mkfs-fails: not one line"; }
grep -qx "orlov-populate: mke2fs failed while making a filesystem with mke2fs in $T_TMP/tiny.img: .*no_such_feature.*" "$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "mkfs-fails: message"; }
echo "mkfs-fails: ok: $(tail -n 1 "$T_TMP/err")"
expect bad-map 2 "Invalid usage \(bad ID map 1:2:x: give FROM:TO or FROM:TO:COUNT, comma-separated\)" \
	"$img" --uid-map 1:2:x "$img" "$src"
expect root-and-map 2 "Invalid usage \(--all-root leaves nothing for --uid-map or --gid-map to map\)" \
	"$img" --all-root --gid-map 1:2 "$img" "$src"
expect bad-owner 2 "Invalid usage \(--root-owner takes UID:GID \(numbers\)\)" \
	"$img" --root-owner root "$img" "$src"
(export SOURCE_DATE_EPOCH=yesterday
 expect bad-epoch 2 "Invalid usage \(SOURCE_DATE_EPOCH takes seconds since 1970" "$img" "$img" "$src") || exit 1

# Device tables: the line at fault, checked before anything is written.
dt=$T_TMP/table
printf '/dev d 755 0 0 - - - - -\n/dev/null c\n' >"$dt"
expect devtable-syntax 1 "Malformed device table line \(NAME TYPE MODE UID GID MAJOR MINOR START INC COUNT, those after MODE optional, TYPE one of d f c b p\) while reading device table $dt line 2" \
	"$img" --devtable "$dt" "$img" "$src"
printf '/a/f c 600 0 0 1 3 - - -\n' >"$dt"
expect devtable-type 1 "Device table entry has another type than the source's while applying device table line 1 to /a/f in $img" \
	"$img" --devtable "$dt" "$img" "$src"
printf '# a comment\n\n/dev/null c 666 0 0 1 3 - - -\n' >"$dt"
expect devtable-no-parent 1 "Device table entry needs a file or directory that is neither in the source nor a d line while applying device table line 3 to /dev in $img" \
	"$img" --devtable "$dt" "$img" "$src"
printf '/a/g f 600 0 0 - - - - -\n' >"$dt"
expect devtable-no-file 1 "Device table entry needs a file or directory that is neither in the source nor a d line while applying device table line 1 to /a/g in $img" \
	"$img" --devtable "$dt" "$img" "$src"
expect devtable-missing 1 "No such file or directory while reading device table $T_TMP/none" \
	"$img" --devtable "$T_TMP/none" "$img" "$src"
expect no-source 1 "No such file or directory while opening source $T_TMP/nosrc" \
	"$img" "$img" "$T_TMP/nosrc"
expect missing-target 1 "No such directory in the image .* while looking up target directory /no/where" \
	"$img" -t /no/where "$img" "$src"
debugfs -w -R "write $src/a/f /file" "$img" >/dev/null 2>&1
expect target-not-dir 1 "Not a directory while looking up target directory /file" \
	"$img" -t /file "$img" "$src"

# Names already in the target.
t_mkimage "$img" 4M -t ext2 -b 1024 -N 64
"$ORLOV_POPULATE" -q "$img" "$src" || t_fail "first populate"
expect exists 1 "Name already exists in the target directory while checking $src/a" \
	"$img" "$img" "$src"
t_fsck "$img"

# Does not fit: inodes, then blocks; checked before anything is written.
mkdir -p "$T_TMP/many"
i=0
while [ $i -lt 80 ]; do : >"$T_TMP/many/f$i"; i=$((i + 1)); done
t_mkimage "$img" 4M -t ext2 -b 1024 -N 64
expect no-inodes 1 "Not enough free inodes in the image for the source tree while checking $T_TMP/many" \
	"$img" "$img" "$T_TMP/many"
mkdir -p "$T_TMP/bigsrc"
head -c 6000000 /dev/zero >"$T_TMP/bigsrc/big"
expect no-blocks 1 "Not enough free blocks in the image for the source tree while checking $T_TMP/bigsrc" \
	"$img" "$img" "$T_TMP/bigsrc"

# More subdirectories than the ext2 driver's 32000 links allow.
mkdir -p "$T_TMP/links/d"
(cd "$T_TMP/links/d" && seq -w 0 31998 | sed 's/^/s/' | xargs mkdir) || t_fail "mkdir"
t_mkimage "$T_TMP/links.img" 64M -t ext2 -b 1024 -N 40000
expect too-many-links 1 "Too many links while creating directory $T_TMP/links/d/s31998" \
	"$T_TMP/links.img" "$T_TMP/links.img" "$T_TMP/links"

# A symlink target longer than a block cannot be stored by ext2.
mkdir -p "$T_TMP/longlink"
ln -s "$(head -c 1500 /dev/zero | tr '\0' 'x')" "$T_TMP/longlink/l"
expect long-symlink 1 "Symbolic link target too long for the block size while checking $T_TMP/longlink/l" \
	"$img" "$img" "$T_TMP/longlink"

# Features the ext2 driver cannot write.
t_mkimage "$T_TMP/ext4.img" 8M -t ext2 -O extent
expect extents 1 "Filesystem feature not supported while checking filesystem $T_TMP/ext4.img \\(feature extent\\)" \
	"$T_TMP/ext4.img" --driver ext2 "$T_TMP/ext4.img" "$src"
t_mkimage "$T_TMP/ext4.img" 8M -t ext2 -O huge_file,dir_nlink
expect ro-compat 1 "Filesystem feature not supported while checking filesystem $T_TMP/ext4.img \\(feature huge_file\\)" \
	"$T_TMP/ext4.img" --driver ext2 "$T_TMP/ext4.img" "$src"
t_mkimage "$T_TMP/bs.img" 8M -t ext2 -b 1024 -O ^filetype
"$ORLOV_POPULATE" -q "$T_TMP/bs.img" "$src" || t_fail "no filetype feature refused"
t_fsck "$T_TMP/bs.img"

# Attributes the kernel would refuse with the image's default mount
# options: user.* without user_xattr, ACLs without acl.
if setfattr -n user.k -v v "$src/a/f" 2>/dev/null; then
	t_mkimage "$T_TMP/nox.img" 4M -t ext2 -b 1024 -N 64
	tune2fs -o ^user_xattr "$T_TMP/nox.img" >/dev/null
	expect no-user-xattr 1 "user\.\* attributes need user_xattr in the image's default mount options \(tune2fs -o user_xattr\) while checking extended attributes of $src/a/f" \
		"$T_TMP/nox.img" "$T_TMP/nox.img" "$src"
	setfattr -x user.k "$src/a/f"
	if setfacl -m u:1234:r "$src/a/f" 2>/dev/null; then
		t_mkimage "$T_TMP/noacl.img" 4M -t ext2 -b 1024 -N 64
		tune2fs -o ^acl "$T_TMP/noacl.img" >/dev/null
		expect no-acl 1 "POSIX ACLs need acl in the image's default mount options \(tune2fs -o acl\) while checking extended attributes of $src/a/f" \
			"$T_TMP/noacl.img" "$T_TMP/noacl.img" "$src"
		setfacl -b "$src/a/f"
	fi
fi

# A mounted filesystem, read-write or read-only: libext2fs's mount check
# can be told to pretend (no mount on this host).
(export EXT2FS_PRETEND_RW_MOUNT=1
 expect mounted-rw 1 "Filesystem is mounted while checking whether mounted $img" \
	"$img" "$img" "$src") || exit 1
(export EXT2FS_PRETEND_RO_MOUNT=1
 expect mounted-ro 1 "Filesystem is mounted while checking whether mounted $img" \
	"$img" "$img" "$src") || exit 1

# ext3 whose journal needs recovery, and a filesystem marked not clean.
t_mkimage "$T_TMP/rec.img" 8M -t ext3 -b 1024
debugfs -w -R "feature needs_recovery" "$T_TMP/rec.img" >/dev/null 2>&1
expect needs-recovery 1 "Journal needs recovery; run e2fsck first while checking filesystem $T_TMP/rec.img" \
	"$T_TMP/rec.img" "$T_TMP/rec.img" "$src"
t_mkimage "$T_TMP/dirty.img" 8M -t ext2 -b 1024
debugfs -w -R "ssv state 0" "$T_TMP/dirty.img" >/dev/null 2>&1
expect not-clean 1 "Filesystem is not clean; run e2fsck first while checking filesystem $T_TMP/dirty.img" \
	"$T_TMP/dirty.img" "$T_TMP/dirty.img" "$src"
ls -A "$T_TMP" | grep -q '^\.dirty\.img\.orlov-' && t_fail "not-clean: the copy was left"
expect atomic-not-clean 1 "Filesystem is not clean; run e2fsck first while checking filesystem $T_TMP/dirty.img" \
	"$T_TMP/dirty.img" --atomic "$T_TMP/dirty.img" "$src"
ls -A "$T_TMP" | grep -q '^\.dirty\.img\.orlov-' && t_fail "atomic-not-clean: the copy was left"
expect atomic-undo 2 "Invalid usage \(--atomic never changes IMAGE in place: no --undo needed\)" \
	"$T_TMP/dirty.img" --atomic --undo "$T_TMP/u" "$T_TMP/dirty.img" "$src"
expect atomic-in-place 2 "Invalid usage \(--atomic writes a copy, --in-place the image itself: give one\)" \
	"$T_TMP/dirty.img" --atomic --in-place "$T_TMP/dirty.img" "$src"
expect dry-in-place 2 "Invalid usage \(--dry-run writes nothing: not with --undo, --atomic or --in-place\)" \
	"$T_TMP/dirty.img" --dry-run --in-place "$T_TMP/dirty.img" "$src"

# Past the driver's s_maxbytes (16 GiB and a bit on 1 KiB blocks), holes
# or not: refused; exactly at it: accepted and e2fsck-clean.
mkdir -p "$T_TMP/huge" "$T_TMP/edge"
truncate -s 17G "$T_TMP/huge/sparse"
t_mkimage "$img" 4M -t ext2 -b 1024 -N 64
expect too-big 1 "File too large for this filesystem while checking $T_TMP/huge/sparse" \
	"$img" "$img" "$T_TMP/huge"
truncate -s 17247252480 "$T_TMP/edge/sparse"
"$ORLOV_POPULATE" -q "$img" "$T_TMP/edge" || t_fail "a file of exactly s_maxbytes"
t_fsck "$img"
rm -rf "$T_TMP/huge" "$T_TMP/edge"

# Damaged or unusual images are refused untouched: descriptor counts that
# disagree with the bitmaps, an image file cut short, an mmp image (whose
# refusal used to leave it marked as being checked).
t_mkimage "$T_TMP/counts.img" 8M -t ext2 -b 1024
debugfs -w -R "set_bg 0 free_blocks_count 100" "$T_TMP/counts.img" >/dev/null 2>&1
expect bad-counts 1 "Group free counts disagree with the bitmaps; run e2fsck first while loading allocator state from $T_TMP/counts.img" \
	"$T_TMP/counts.img" "$T_TMP/counts.img" "$src"
t_mkimage "$T_TMP/short.img" 8M -t ext2 -b 1024
truncate -s 7M "$T_TMP/short.img"
expect short-image 1 "Image is shorter than the filesystem it holds while checking filesystem $T_TMP/short.img" \
	"$T_TMP/short.img" "$T_TMP/short.img" "$src"
t_mkimage "$T_TMP/mmp.img" 8M -t ext2 -b 1024 -O mmp
expect mmp 1 "Filesystem feature not supported while checking filesystem $T_TMP/mmp.img \(feature mmp\)" \
	"$T_TMP/mmp.img" "$T_TMP/mmp.img" "$src"
# A RAID stride: the ext4 driver's mballoc aligns to it (not modelled),
# the ext2 driver ignores it.
t_mkimage "$T_TMP/stripe.img" 8M -t ext2 -b 1024 -E stride=16,stripe_width=32
expect raid-stripe 1 "RAID stride or stripe width set: .* while checking filesystem $T_TMP/stripe.img" \
	"$T_TMP/stripe.img" --driver ext4 "$T_TMP/stripe.img" "$src"
"$ORLOV_POPULATE" -q "$T_TMP/stripe.img" "$src" || t_fail "raid-stripe: --driver ext2 refused it"
t_fsck "$T_TMP/stripe.img"
rm -f "$T_TMP/stripe.img"
# Damage only e2fsck sees: a wrong link count.
t_mkimage "$T_TMP/damaged.img" 8M -t ext2 -b 1024
debugfs -w -R "sif /lost+found links_count 5" "$T_TMP/damaged.img" >/dev/null 2>&1
expect e2fsck-finds-errors 1 "e2fsck -fn finds errors in the filesystem; run e2fsck first while checking with e2fsck -fn $T_TMP/damaged.img" \
	"$T_TMP/damaged.img" "$T_TMP/damaged.img" "$src"
# A superblock libext2fs would trust: s_first_data_block 0 with 1 KiB blocks.
t_mkimage "$T_TMP/sb.img" 8M -t ext2 -b 1024
printf '\000' | dd of="$T_TMP/sb.img" bs=1 seek=$((1024 + 20)) conv=notrunc status=none
expect bad-superblock 1 "The ext2 superblock is corrupt while checking superblock of $T_TMP/sb.img" \
	"$T_TMP/sb.img" "$T_TMP/sb.img" "$src"
rm -f "$T_TMP/damaged.img" "$T_TMP/sb.img"
rm -f "$T_TMP/counts.img" "$T_TMP/short.img" "$T_TMP/mmp.img"

# One writer at a time: the image's flock is taken by someone else.
t_mkimage "$img" 4M -t ext2 -b 1024 -N 64
command -v flock >/dev/null || t_fail "flock(1) missing (util-linux)"
cp "$img" "$T_TMP/before"
flock "$img" "$ORLOV_POPULATE" "$img" "$src" >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
[ $rc = 1 ] || { cat "$T_TMP/err" >&2; t_fail "busy: exit $rc"; }
grep -qx "orlov-populate: Image is being written by another process while opening filesystem $img" "$T_TMP/err" ||
	{ cat "$T_TMP/err" >&2; t_fail "busy: message"; }
cmp -s "$T_TMP/before" "$img" || t_fail "busy: image changed"
echo "busy: ok: $(cat "$T_TMP/err")"

# --trace never truncates the image (named or through a link) nor writes
# into the source tree.
ln -sf "$img" "$T_TMP/img-link"
expect trace-is-image 1 "Output file is the image or inside the source tree while checking trace file $img" \
	"$img" --trace "$img" "$img" "$src"
expect trace-link-to-image 1 "Output file is the image or inside the source tree while checking trace file $T_TMP/img-link" \
	"$img" --trace "$T_TMP/img-link" "$img" "$src"
expect trace-in-source 1 "Output file is the image or inside the source tree while checking trace file $src/a/new.trace" \
	"$img" --trace "$src/a/new.trace" "$img" "$src"
[ ! -e "$src/a/new.trace" ] || t_fail "trace-in-source: the file was created"
"$ORLOV_POPULATE" -q --trace "$T_TMP/ok.trace" "$img" "$src" || t_fail "a trace beside the image"
[ -s "$T_TMP/ok.trace" ] || t_fail "the trace beside the image is empty"
t_fsck "$img"

# An unreadable source file, as an unprivileged user (root reads anything).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
   id nobody >/dev/null 2>&1; then
	u=$T_TMP/unread
	mkdir -p "$u/src/d"
	printf 'secret' >"$u/src/d/secret"
	chmod 000 "$u/src/d/secret"
	t_mkimage "$u/img" 4M -t ext2 -b 1024
	chmod 755 "$T_TMP" "$u"
	chmod 666 "$u/img"
	cp "$u/img" "$u/before"
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$ORLOV_POPULATE" "$u/img" "$u/src" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	[ $rc = 1 ] || t_fail "unreadable: exit $rc"
	grep -q "^orlov-populate: Permission denied while opening $u/src/d/secret$" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "unreadable: message"; }
	cmp -s "$u/before" "$u/img" || t_fail "unreadable: image changed"
	echo "unreadable: ok: $(cat "$T_TMP/err")"
else
	echo "unreadable: not checked (needs root, setpriv and user nobody)"
fi

exit 0
