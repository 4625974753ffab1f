#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The ext4 driver's group-descriptor and inode features on ext2/ext3
# images: uninit_bg (lazy init), dir_nlink, extra_isize, huge_file.
#  - refused with --driver ext2 (the default), the feature named, and
#    extra_isize with --driver ext4 where the superblock asks for more
#    than the 32 bytes new inodes get;
#  - with --driver ext4 the layout is the one without these features
#    (lazy init moves nothing: model/ext4/ialloc.h): the golden dumps of
#    t-golden.sh's ext4 cases, inode for inode and block for block, with
#    lazy_itable_init 0 and 1, with and without --delalloc; an ext3 image
#    laid out as the same image made without the features;
#  - each group's flags and bg_itable_unused as __ext4_new_inode and
#    mballoc leave them, recomputed here from dumpe2fs before and after;
#  - e2fsck -fn clean, contents read back equal.
# The kernel's own answer for these images: tests/kernel/cases.list (the
# cases marked ext4), t-crosscheck-debian.sh.
. "$(dirname "$0")/lib.sh"
command -v dumpe2fs >/dev/null 2>&1 || t_skip "dumpe2fs not found"

g=$t_here/golden
FEAT=uninit_bg,dir_nlink,extra_isize,huge_file
EXT=hash_seed=$T_SEED,root_owner=0:0

# t-golden.sh's tree for its ext4 cases
t_sample_tree "$T_TMP/src"
t_many_names "$T_TMP/src/many"
t_pin_times "$T_TMP/src"
src=$T_TMP/src

# ---- refused with the ext2 driver, each feature named ------------------------
refused() { # NAME WANT-FEATURE IMAGE ORLOV-POPULATE-OPTIONS...
	name=$1 want=$2 img=$3
	shift 3
	"$ORLOV_POPULATE" -q "$@" "$img" "$src" 2>"$T_TMP/err"
	rc=$?
	[ $rc = 1 ] || { cat "$T_TMP/err" >&2; t_fail "$name: exit $rc, want 1"; }
	grep -q "^orlov-populate: Filesystem feature not supported while checking filesystem $img (feature $want)\$" \
		"$T_TMP/err" || { cat "$T_TMP/err" >&2; t_fail "$name: message"; }
	echo "$name: refused ($want)"
}
for f in uninit_bg dir_nlink extra_isize huge_file; do
	t_mkimage "$T_TMP/r.img" 8M -t ext2 -b 1024 -I 256 -O $f
	cp "$T_TMP/r.img" "$T_TMP/r.before"
	refused "ext2-driver-$f" $f "$T_TMP/r.img" --driver ext2
	cmp -s "$T_TMP/r.img" "$T_TMP/r.before" || t_fail "$f: refused image changed"
	# without --driver: the image is ext4 to blkid and mount, so the
	# ext4 driver with delayed allocation, as mount gives it
	cp "$T_TMP/r.before" "$T_TMP/r.ext4"
	"$ORLOV_POPULATE" -q "$T_TMP/r.img" "$T_TMP/src" ||
		t_fail "default-driver-$f: refused"
	"$ORLOV_POPULATE" -q --driver ext4 --delalloc "$T_TMP/r.ext4" "$T_TMP/src" ||
		t_fail "default-driver-$f: --driver ext4 --delalloc refused"
	cmp -s "$T_TMP/r.img" "$T_TMP/r.ext4" ||
		t_fail "default-driver-$f: not --driver ext4 --delalloc's image"
	echo "default-driver-$f: ext4, delayed"
done
# all four: the first in bit order
t_mkimage "$T_TMP/r.img" 8M -t ext3 -b 1024 -I 256 -O $FEAT
refused ext2-driver-all huge_file "$T_TMP/r.img" --driver ext2
# extra_isize asking for 64 bytes in new inodes: not what is written here
t_mkimage "$T_TMP/r.img" 8M -t ext2 -b 1024 -I 256 -O $FEAT
debugfs -w -R "ssv want_extra_isize 64" "$T_TMP/r.img" >/dev/null 2>&1
refused ext4-want-extra-isize extra_isize "$T_TMP/r.img" --driver ext4
t_mkimage "$T_TMP/r.img" 8M -t ext2 -b 1024 -I 256 -O $FEAT
debugfs -w -R "ssv min_extra_isize 48" "$T_TMP/r.img" >/dev/null 2>&1
refused ext4-min-extra-isize extra_isize "$T_TMP/r.img" --driver ext4

# ---- the descriptors as the kernel leaves them ---------------------------------
# per group from dumpe2fs: G FLAGS FREE_BLOCKS FREE_INODES UNUSED MAX_USED,
# MAX_USED the highest inode in use, 1-based in the group (0: none)
groups() {
	dumpe2fs "$1" 2>/dev/null | awk -v ipg="$2" '
	function flush() { if (g != "") print g, (f == "" ? "-" : f), fb, fi, un, mu }
	/^Group [0-9]+:/ {
		flush()
		g = $2; sub(/:/, "", g); f = ""
		if (match($0, /\[.*\]/)) { f = substr($0, RSTART + 1, RLENGTH - 2); gsub(/, /, ",", f) }
		mu = 0
	}
	# dumpe2fs leaves out ", N unused inodes" when N is 0
	/free blocks, .* free inodes/ { fb = $1; fi = $4; un = /unused inodes/ ? $9 : 0 }
	/^  Free inodes:/ {
		# the last free range ending at the group end: used below it
		l = $0; sub(/^  Free inodes: */, "", l)
		n = split(l, r, /, /)
		first = g * ipg + 1; last = first + ipg - 1; mu = ipg
		if (n) {
			split(r[n], e, "-"); hi = e[2] == "" ? e[1] : e[2]; lo = e[1]
			if (hi + 0 == last) mu = lo - first
		}
	}
	END { flush() }'
}

# The rules of fs/ext4: a group where an inode was taken loses
# INODE_UNINIT (its inodes counted from 0 then) and BLOCK_UNINIT, its
# itable_unused goes down to cover the highest inode taken; a group where
# a block was taken loses BLOCK_UNINIT; ITABLE_ZEROED stays as it was.
check_groups() { # NAME BEFORE AFTER IPG
	awk -v name="$1" -v ipg="$4" '
	function has(s, w) { return index("," s ",", "," w ",") > 0 }
	NR == FNR { bf[$1] = $2; bb[$1] = $3; bi[$1] = $4; bu[$1] = $5; next }
	{
		g = $1; ti = $4 < bi[g]; tb = $3 < bb[g]
		used = has(bf[g], "INODE_UNINIT") ? 0 : ipg - bu[g]
		want_u = bu[g]
		if (ti && $6 > used) want_u = ipg - $6
		wi = has(bf[g], "INODE_UNINIT") && !ti
		wb = has(bf[g], "BLOCK_UNINIT") && !ti && !tb
		wz = has(bf[g], "ITABLE_ZEROED")
		if (has($2, "INODE_UNINIT") != wi || has($2, "BLOCK_UNINIT") != wb ||
		    has($2, "ITABLE_ZEROED") != wz || $5 != want_u) {
			printf "%s: group %s: flags %s unused %s, want INODE_UNINIT=%d BLOCK_UNINIT=%d ITABLE_ZEROED=%d unused %d (before: %s %s)\n",
				name, g, $2, $5, wi, wb, wz, want_u, bf[g], bu[g]
			bad = 1
		}
		if (ti || tb) touched++
		if (tb && !ti && has(bf[g], "BLOCK_UNINIT")) blockonly++
		if (has(bf[g], "INODE_UNINIT") && !ti) kept++
	}
	END {
		if (bad) exit 1
		if (!touched) { printf "%s: no group touched\n", name; exit 1 }
		print kept + 0, blockonly + 0
	}' "$2" "$3"
}

# NAME SIZE GOLDEN|- LAZY MKE2FS-OPTIONS -- ORLOV-POPULATE-OPTIONS
run_case() {
	name=$1 size=$2 golden=$3 lazy=$4 mk=
	shift 4
	while [ "$1" != "--" ]; do mk="$mk $1"; shift; done
	shift
	img=$T_TMP/$name.img
	# shellcheck disable=SC2086
	t_mkimage "$img" "$size" $mk -O $FEAT -E "$EXT,lazy_itable_init=$lazy"
	ipg=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Inodes per group: *//p')
	groups "$img" "$ipg" >"$T_TMP/$name.before"
	grep -q INODE_UNINIT "$T_TMP/$name.before" || t_fail "$name: mke2fs left no group uninitialised"
	"$ORLOV_POPULATE" -q "$@" "$img" "$src" || t_fail "$name: orlov-populate failed"
	t_fsck "$img"
	t_verify "$img" "$src" /
	groups "$img" "$ipg" >"$T_TMP/$name.after"
	kept=$(check_groups "$name" "$T_TMP/$name.before" "$T_TMP/$name.after" "$ipg") ||
		{ echo "$kept" >&2; t_fail "$name: group descriptors"; }
	case $kept in 0\ *) ;; *) kept_any=$((kept_any + 1)) ;; esac
	case $kept in *\ 0) ;; *) blockonly_any=$((blockonly_any + 1)) ;; esac
	"$ORLOV_LAYOUT" dump "$img" >"$T_TMP/$name.dump" || t_fail "$name: dump"
	if [ "$golden" = - ]; then
		# the same image without the features, the same run
		# shellcheck disable=SC2086
		t_mkimage "$T_TMP/plain.img" "$size" $mk
		"$ORLOV_POPULATE" -q "$@" "$T_TMP/plain.img" "$src" ||
			t_fail "$name: orlov-populate failed on the plain image"
		"$ORLOV_LAYOUT" dump "$T_TMP/plain.img" >"$T_TMP/plain.dump" || t_fail "$name: dump"
		golden=$T_TMP/plain.dump what="the same image without $FEAT"
	else
		what=tests/golden/$golden.dump
		golden=$g/$golden.dump
	fi
	diff -u "$golden" "$T_TMP/$name.dump" >&2 ||
		t_fail "$name: layout differs from $what"
	echo "$name: ok ($(grep -c . "$T_TMP/$name.dump") paths)"
}

kept_any=0 blockonly_any=0
for lazy in 0 1; do
	run_case 1k-ext4-lazy$lazy 8M 1k-ext4 $lazy \
		-t ext2 -b 1024 -g 1024 -N 512 -I 256 -- --driver ext4 --no-delalloc --cpus 2
	run_case 1k-ext4-16g-lazy$lazy 16M 1k-ext4-16g $lazy \
		-t ext2 -b 1024 -g 1024 -N 512 -I 128 -- --driver ext4 --no-delalloc --cpus 2 --block-colour 3
	run_case 1k-ext4-delalloc-lazy$lazy 8M 1k-ext4-delalloc $lazy \
		-t ext2 -b 1024 -g 1024 -N 512 -I 256 -- --driver ext4 --delalloc --cpus 2
	run_case 4k-ext3-lazy$lazy 64M - $lazy \
		-t ext3 -b 4096 -g 2048 -N 1024 -I 256 -- --driver ext4 --no-delalloc --cpus 2
	run_case 4k-ext3-delalloc-lazy$lazy 64M - $lazy \
		-t ext3 -b 4096 -g 2048 -N 1024 -I 256 -- --driver ext4 --delalloc --cpus 2
done
# a file across groups where no inode is taken: mballoc alone initialises
# their block bitmaps
mkdir "$T_TMP/big"
head -c 3000000 /dev/zero | tr '\0' 'd' >"$T_TMP/big/file"
t_pin_times "$T_TMP/big"
src=$T_TMP/big
for lazy in 0 1; do
	run_case 1k-big-lazy$lazy 8M - $lazy \
		-t ext3 -b 1024 -g 1024 -N 512 -I 256 -- --driver ext4 --no-delalloc --cpus 2
	run_case 1k-big-delalloc-lazy$lazy 8M - $lazy \
		-t ext2 -b 1024 -g 1024 -N 512 -I 256 -- --driver ext4 --delalloc --cpus 2
done
# some cases must leave groups uninitialised, or only half the rule is shown
[ $kept_any -gt 0 ] || t_fail "no case left a group INODE_UNINIT"
[ $blockonly_any -gt 0 ] || t_fail "no case took blocks alone in a BLOCK_UNINIT group"
exit 0
