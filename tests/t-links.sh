#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Link limits as each driver has them: ext2 refuses a link or a mkdir at
# 32000 links (EXT2_LINK_MAX), ext4 at 65000 (EXT4_LINK_MAX), except a
# mkdir in an htree directory of an image with dir_nlink, whose count then
# stays at 1 ("many", ext4_inc_count).  Refusals are one com_err line and
# leave the image as it was; what is accepted is e2fsck-clean.
. "$(dirname "$0")/lib.sh"

# refused NAME PATTERN IMAGE ARGS...: exit 1, one line, image unchanged.
refused() {
	r_name=$1 r_pattern=$2 r_img=$3
	shift 3
	cp "$r_img" "$T_TMP/before"
	"$ORLOV_POPULATE" "$@" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	[ "$rc" = 1 ] || { cat "$T_TMP/err" >&2; t_fail "$r_name: exit $rc, want 1"; }
	[ "$(wc -l <"$T_TMP/err")" -eq 1 ] && grep -Eq "^orlov-populate: $r_pattern" "$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "$r_name: message does not match /$r_pattern/"; }
	cmp -s "$T_TMP/before" "$r_img" || t_fail "$r_name: image changed"
	echo "$r_name: ok: $(cat "$T_TMP/err")"
}

# links IMAGE PATH: the inode's link count as debugfs reads it.
links() {
	debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/.*Links: *\([0-9]*\).*/\1/p'
}

# subdirs DIR N: DIR with N subdirectories s00000...
subdirs() {
	mkdir -p "$1" && (cd "$1" && seq -w 0 $(($2 - 1)) | sed 's/^/s/' | xargs mkdir) ||
		t_fail "mkdir $1"
}

# 32000 subdirectories: one more than ext2 takes (t-errors.sh), well
# within ext4's.
subdirs "$T_TMP/d32/d" 31999
t_mkimage "$T_TMP/a.img" 64M -t ext2 -b 1024 -N 40000
"$ORLOV_POPULATE" -q --driver ext4 "$T_TMP/a.img" "$T_TMP/d32" || t_fail "ext4-32000: refused"
[ "$(links "$T_TMP/a.img" /d)" = 32001 ] || t_fail "ext4-32000: /d has $(links "$T_TMP/a.img" /d) links, want 32001"
t_fsck "$T_TMP/a.img"
echo "ext4-32000: ok"

# 64999 subdirectories: the last takes the parent to 65001 links.
subdirs "$T_TMP/d65/d" 64999
t_mkimage "$T_TMP/b.img" 128M -t ext2 -b 1024 -N 70000
refused ext4-mkdir "Too many links while creating directory $T_TMP/d65/d/s64998" \
	"$T_TMP/b.img" --driver ext4 "$T_TMP/b.img" "$T_TMP/d65"
# ... which dir_nlink allows in an htree directory: its count becomes 1.
t_mkimage "$T_TMP/c.img" 128M -t ext2 -b 1024 -N 70000 -O dir_nlink
"$ORLOV_POPULATE" -q --driver ext4 "$T_TMP/c.img" "$T_TMP/d65" || t_fail "dir_nlink: refused"
[ "$(links "$T_TMP/c.img" /d)" = 1 ] || t_fail "dir_nlink: /d has $(links "$T_TMP/c.img" /d) links, want 1"
t_fsck "$T_TMP/c.img"
echo "dir_nlink: ok"
# ... but not without an htree (no dir_index).
t_mkimage "$T_TMP/e.img" 128M -t ext2 -b 1024 -N 70000 -O dir_nlink,^dir_index
refused ext4-no-htree "Too many links while creating directory $T_TMP/d65/d/s64998" \
	"$T_TMP/e.img" --driver ext4 "$T_TMP/e.img" "$T_TMP/d65"
rm -rf "$T_TMP/d32" "$T_TMP/d65"

# Hard links: 65000 names of one file for ext4, 32000 for ext2.
mkdir -p "$T_TMP/h/d"
: >"$T_TMP/h/d/f"
(cd "$T_TMP/h/d" && perl -e 'link "f", sprintf("h%05d", $_) or die "$!\n" for 1..31999') ||
	t_fail "ln"
t_mkimage "$T_TMP/f.img" 32M -t ext2 -b 1024
"$ORLOV_POPULATE" -q "$T_TMP/f.img" "$T_TMP/h" || t_fail "ext2-32000-links: refused"
[ "$(links "$T_TMP/f.img" /d/f)" = 32000 ] || t_fail "ext2-32000-links: $(links "$T_TMP/f.img" /d/f) links"
echo "ext2-32000-links: ok"
(cd "$T_TMP/h/d" && perl -e 'link "f", sprintf("h%05d", $_) or die "$!\n" for 32000..64999') ||
	t_fail "ln"
t_mkimage "$T_TMP/f.img" 32M -t ext2 -b 1024
refused ext2-link "Too many links while linking $T_TMP/h/d/h32000" \
	"$T_TMP/f.img" "$T_TMP/f.img" "$T_TMP/h"
"$ORLOV_POPULATE" -q --driver ext4 "$T_TMP/f.img" "$T_TMP/h" || t_fail "ext4-65000-links: refused"
[ "$(links "$T_TMP/f.img" /d/f)" = 65000 ] || t_fail "ext4-65000-links: $(links "$T_TMP/f.img" /d/f) links"
t_fsck "$T_TMP/f.img"
echo "ext4-65000-links: ok"
# One name more than the host's own filesystem may take (ext4 or tmpfs
# stop at 65000 too): an archive says it, a hard-link header added.
tar -C "$T_TMP/h" --format=ustar -cf "$T_TMP/h.tar" d || t_fail "tar"
perl -e '
	open my $in, "<:raw", $ARGV[0] or die "$!\n";
	local $/;
	my $t = <$in>;
	my ($at) = grep { substr($t, $_, 9) eq "d/h00001\0" }
		   map { $_ * 512 } 0 .. length($t) / 512 - 1;
	defined $at or die "no d/h00001 in the archive\n";
	my $h = substr($t, $at, 512);
	substr($h, 0, 100) = pack("a100", "d/h65000");
	substr($h, 148, 8) = " " x 8;
	substr($h, 148, 8) = sprintf("%06o\0 ", unpack("%32C*", $h));
	substr($t, $at + 512, 0) = $h;
	binmode STDOUT;
	print $t;' "$T_TMP/h.tar" >"$T_TMP/h2.tar" || t_fail "the archive"
t_mkimage "$T_TMP/f.img" 32M -t ext2 -b 1024
refused ext4-link "Too many links while linking $T_TMP/h2.tar/d/h65000" \
	"$T_TMP/f.img" --driver ext4 "$T_TMP/f.img" "$T_TMP/h2.tar"
