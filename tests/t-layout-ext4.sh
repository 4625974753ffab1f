#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# orlov-layout on the ext4 images `mke2fs -t ext4` makes with Debian 12's
# /etc/mke2fs.conf and its common variants (-b 1024, -I 128, -O ^64bit,
# -O ^flex_bg, -G 4 and 64, -O ^metadata_csum), fresh and filled with
# mke2fs -d and debugfs: dump (goldens, inode numbers kept), the order of
# every extent-mapped inode's blocks against debugfs's, depth 1 and 2
# trees, holes, unwritten extents, inline data, 64-bit block numbers;
# stats with flex groups; verify against the source; diff; and damaged
# extent trees, one com_err line naming the path for every command.
set -eu
. "$(dirname "$0")/lib.sh"
command -v perl >/dev/null 2>&1 || t_skip "perl not found"

golden=$top_srcdir/tests/golden/layout-ext4
L=$ORLOV_LAYOUT

# Debian 12's /etc/mke2fs.conf, the part `mke2fs -t ext4` reads, so that
# the host's own cannot change an image.
export MKE2FS_CONFIG=$T_TMP/mke2fs.conf
cat >"$MKE2FS_CONFIG" <<'EOF'
[defaults]
	base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
	default_mntopts = acl,user_xattr
	enable_periodic_fsck = 0
	blocksize = 4096
	inode_size = 256
	inode_ratio = 16384

[fs_types]
	ext4 = {
		features = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}
	small = {
		blocksize = 1024
		inode_ratio = 4096
	}
	floppy = {
		blocksize = 1024
		inode_ratio = 8192
	}
	big = {
		inode_ratio = 32768
	}
	huge = {
		inode_ratio = 65536
	}
EOF

# t_golden NAME FILE: FILE equals golden NAME (ORLOV_REGEN_GOLDEN=1
# rewrites it; review the diff).
t_golden() {
	if [ "${ORLOV_REGEN_GOLDEN:-0}" = 1 ]; then
		mkdir -p "$golden" && cp "$2" "$golden/$1"
		return 0
	fi
	cmp -s "$golden/$1" "$2" ||
		{ diff -u "$golden/$1" "$2" >&2; t_fail "$1 differs"; }
}

# run STATUS CMD...: stdout to $T_TMP/out, stderr to $T_TMP/err
run() {
	local want=$1 rc=0
	shift
	"$@" >"$T_TMP/out" 2>"$T_TMP/err" || rc=$?
	[ "$rc" = "$want" ] ||
		{ cat "$T_TMP/out" "$T_TMP/err" >&2; t_fail "$* exited $rc, not $want"; }
}

# The tree: every file type, hard links, holes; a file of 12 data runs
# (a depth-1 tree: more extents than the inode's 4), one of 1400 single
# blocks (depth 2 with 1 and 4 KiB blocks: more leaves than 4), a
# 300-name directory of several blocks, all times whole seconds (mke2fs
# -d keeps no nanoseconds).
src=$T_TMP/src
t_sample_tree "$src"
mkdir -p "$src/ext4"
perl -e 'open(F, ">", $ARGV[0]) or die; for $i (0..11) { seek(F, $i * 8192, 0);
	print F "r" x 4096 } truncate(F, 12 * 8192 + 100)' "$src/ext4/runs"
perl -e 'open(F, ">", $ARGV[0]) or die; for $i (0..1399) { seek(F, $i * 8192, 0);
	print F "d" }' "$src/ext4/deep"
t_many_names "$src/ext4/names"
find "$src" -depth -exec touch -h -d '2023-11-14 22:13:20' {} +

# expand: "a-b,c" on stdin -> one block a line
expand() {
	tr ',' '\n' | awk -F- 'NF == 2 { for (i = $1; i <= $2; i++) print i; next }
		$1 != "" && $1 != "-" { print $1 }'
}

# xcheck IMAGE: every extent-mapped inode's dump list is debugfs's EXTENTS
# list in its order, tree blocks (ETBn) included, unwritten ([u]) alike.
xcheck() {
	local img=$1 n
	"$L" dump "$img" >"$T_TMP/x.dump" || t_fail "dump $img"
	awk '{ ino = $2; sub("ino=", "", ino); b = "-"; u = "-";
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^blocks=/) b = substr($i, 8)
			if ($i ~ /^unwritten=/) u = substr($i, 11) }
		if (!seen[ino]++) print ino, b, u }' "$T_TMP/x.dump" |
		sort -n >"$T_TMP/x.inos"
	awk '{ print "stat <" $1 ">" }' "$T_TMP/x.inos" |
		debugfs -f - "$img" 2>/dev/null | awk '
		function flush() { if (ino != "" && ext) print ino, (a == "" ? "-" : a), (u == "" ? "-" : u)
			ino = ""; ext = 0; a = ""; u = "" }
		/^debugfs: stat </ { flush(); ino = $3; gsub(/[<>]/, "", ino); next }
		/^EXTENTS:/ { ext = 1; next }
		ext && /^\(/ { n = split($0, it, /, */)
			for (k = 1; k <= n; k++) {
				if (it[k] == "") continue
				split(it[k], lr, "):"); r = lr[2]
				a = a (a == "" ? "" : ",") r
				if (lr[1] ~ /\[u\]/) u = u (u == "" ? "" : ",") r } }
		END { flush() }' >"$T_TMP/x.dfs"
	# one awk for all inodes: a process per inode is slow on a busy host
	n=$(awk '
		function ex(s,   k, m, it, r, out) {
			if (s == "-") return ""
			m = split(s, it, ",")
			for (k = 1; k <= m; k++) {
				if (split(it[k], r, "-") == 2)
					for (j = r[1] + 0; j <= r[2] + 0; j++) out = out j ","
				else out = out it[k] ","
			}
			return out
		}
		FNR == NR { b[$1] = ex($2); u[$1] = ex($3); next }
		!($1 in b) { print "inode " $1 " not dumped"; exit 1 }
		ex($2) != b[$1] { print "inode " $1 ": dump " b[$1] " debugfs " ex($2); exit 1 }
		ex($3) != u[$1] { print "inode " $1 " unwritten: dump " u[$1] " debugfs " ex($3); exit 1 }
		$2 != "-" { n++ }
		END { print n + 0 }' "$T_TMP/x.inos" "$T_TMP/x.dfs")
	case $n in *[!0-9]*) t_fail "$img: $n" ;; esac
	# every inode with blocks is extent-mapped on these images
	[ "$n" = "$(awk '$2 != "-"' "$T_TMP/x.inos" | wc -l)" ] ||
		t_fail "$img: $n extent-mapped inodes, not all with blocks"
}

# verify_ok IMAGE [-I128]: the image holds SOURCE; with 256-byte inodes
# only ctime's nanoseconds may differ (mke2fs -d drops them; a source
# ctime cannot be set).
verify_ok() {
	local rc=0
	"$L" verify "$1" "$src" >"$T_TMP/v.out" 2>&1 || rc=$?
	if [ "${2:-}" = -I128 ]; then
		[ $rc = 0 ] || { cat "$T_TMP/v.out" >&2; t_fail "verify $1"; }
		return 0
	fi
	[ $rc -le 1 ] || { cat "$T_TMP/v.out" >&2; t_fail "verify $1: $rc"; }
	if grep -v '^verified=' "$T_TMP/v.out" |
	   grep -v ': ctime (expected \([0-9]*\)\.[0-9]*, got \1\.000000000)$' |
	   grep -q .; then
		cat "$T_TMP/v.out" >&2
		t_fail "verify $1"
	fi
}

# The variants: name, size, mke2fs options
variants='4k 64M -b 4096
1k 64M -G 4
i128 64M -I 128
no64 64M -b 4096 -O ^64bit
noflex 64M -O ^flex_bg
g64 96M -G 64
nocsum 64M -O ^metadata_csum'

while read -r name size opts; do
	img=$T_TMP/$name.img
	# fresh, as mke2fs leaves it
	t_mkimage "$img" "$size" -t ext4 $opts
	t_fsck "$img"
	run 0 "$L" dump "$img"
	t_golden "$name-fresh.dump" "$T_TMP/out"
	# filled
	t_mkimage "$img" "$size" -t ext4 $opts -d "$src"
	t_fsck "$img"
	run 0 "$L" dump "$img"
	t_golden "$name.dump" "$T_TMP/out"
	run 0 "$L" stats "$img"
	t_golden "$name.stats" "$T_TMP/out"
	xcheck "$img"
	case $opts in *"-I 128"*) verify_ok "$img" -I128 ;; *) verify_ok "$img" ;; esac
done <<<"$variants"

# What the goldens must show, so that a regenerated one cannot hide it.
grep -q '^/ext4/deep .*blocks=[0-9]*,[0-9]*,' "$golden/1k.dump" ||
	t_fail "no tree blocks before /ext4/deep's data"
# depth 2: one index block, then 1400 / 84 -> 17 leaves, one per 84 blocks
n=$(awk '$1 == "/ext4/deep" { sub("blocks=", "", $5); print $5 }' "$golden/1k.dump" |
	expand | wc -l)
[ "$n" = $((1400 + 1 + 17)) ] || t_fail "/ext4/deep at 1k: $n blocks listed"
for v in 4k 1k g64; do
	grep -q ' flex=0$' "$golden/$v.stats" || t_fail "$v.stats: no flex="
	grep -q 'top_level_flex_groups=' "$golden/$v.stats" || t_fail "$v.stats"
done
grep -q '^flex=1 groups=4-7 ' "$golden/1k.stats" || t_fail "1k.stats: flex 1"
! grep -q flex "$golden/noflex.stats" || t_fail "noflex.stats has flex"

# debugfs: a fragmented file (depth 1, its leaf in a gap), unwritten
# extents, inline data.
img=$T_TMP/4k-debugfs.img
cp "$T_TMP/4k.img" "$img"
head -c 4096 /dev/zero | tr '\0' o >"$T_TMP/one"
head -c 163840 /dev/zero | tr '\0' f >"$T_TMP/forty"
{
	echo "mkdir fr"
	for i in $(seq 10 29); do echo "write $T_TMP/one fr/s$i"; done
	for i in $(seq 10 2 29); do echo "rm fr/s$i"; done
	echo "write $T_TMP/forty fr/big"
	echo "write $T_TMP/one fr/falloc"
	echo "fallocate fr/falloc 0 39"
	echo "sif fr/falloc size 163840"
} | debugfs -w -f - "$img" >/dev/null 2>&1
t_fsck "$img"
run 0 "$L" dump "$img"
t_golden 4k-debugfs.dump "$T_TMP/out"
grep -q '^/fr/falloc .* unwritten=[0-9]' "$T_TMP/out" || t_fail "no unwritten="
xcheck "$img"
run 0 "$L" dump "$img" /fr/big
[ "$(sed 's/.*blocks=//' "$T_TMP/out" | tr ',' '\n' | wc -l)" -gt 5 ] ||
	t_fail "/fr/big is not fragmented: $(cat "$T_TMP/out")"
# the unwritten blocks read as zeros, the written one as written;
# i_blocks counts the tree's leaf
mkdir -p "$T_TMP/fr"
cp "$T_TMP/one" "$T_TMP/fr/falloc"
truncate -s 163840 "$T_TMP/fr/falloc"	# unwritten blocks read as zeros
cp "$T_TMP/forty" "$T_TMP/fr/big"
for i in $(seq 11 2 29); do cp "$T_TMP/one" "$T_TMP/fr/s$i"; done
"$L" verify --no-xattrs "$img" "$T_TMP/fr" /fr >"$T_TMP/out" 2>&1 || true
grep -q '^verified=13 ' "$T_TMP/out" || t_fail "verify /fr: $(cat "$T_TMP/out")"
grep -v '^verified=' "$T_TMP/out" | grep -v ': [mc]time (' | grep -q . &&
	t_fail "verify /fr: $(cat "$T_TMP/out")"

# diff: an image and itself, and the two.
run 0 "$L" diff "$T_TMP/4k.img" "$T_TMP/4k.img"
n=$(wc -l <"$golden/4k.dump")
grep -qx "paths=$n same_inode=$n same_blocks=$n" "$T_TMP/out" ||
	t_fail "diff 4k 4k: $(cat "$T_TMP/out")"
run 1 "$L" diff "$T_TMP/4k.img" "$img"
grep -qx 'first difference: /fr' "$T_TMP/out" || t_fail "$(cat "$T_TMP/out")"
grep -qx 'expected: missing' "$T_TMP/out" || t_fail "$(cat "$T_TMP/out")"
grep -qx "paths=$((n + 13)) same_inode=$n same_blocks=$n" "$T_TMP/out" ||
	t_fail "$(cat "$T_TMP/out")"

# Inline data is shown: no blocks, its size; verify reads it, and its
# system.data is not an attribute.
img=$T_TMP/inline.img
t_mkimage "$img" 16M -t ext4 -O inline_data -d "$src/home"
t_fsck "$img"
run 0 "$L" dump "$img"
t_golden inline.dump "$T_TMP/out"
grep -q '^/a ino=[0-9]* group=0 dir blocks=- inline=60$' "$T_TMP/out" ||
	t_fail "inline dir: $(cat "$T_TMP/out")"
grep -q '^/Z ino=[0-9]* group=0 file blocks=- inline=1$' "$T_TMP/out" ||
	t_fail "inline file: $(cat "$T_TMP/out")"
src_save=$src
src=$src/home
verify_ok "$img"
src=$src_save

# Damaged extent trees: every command exits 2 with one line naming the
# path, the node and what is wrong; e2fsck finds each damage too.
# ino_at IMAGE PATH: the byte offset of PATH's inode
ino_at() {
	local out bs
	out=$(debugfs -R "imap \"$2\"" "$1" 2>&1)
	bs=$(dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Block size: *//p')
	printf '%s\n' "$out" | sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-fA-F]*\).*/\1 \2/p' |
		{ read -r b o; echo $((b * bs + o)); }
}
poke() { # poke FILE OFFSET HEX...
	local f=$1 at=$2 fmt='' b
	shift 2
	for b in "$@"; do fmt="$fmt\\x$b"; done
	printf "$fmt" | dd of="$f" bs=1 seek="$at" conv=notrunc status=none
}
le16() { printf '%02x %02x' $(($1 & 255)) $(($1 >> 8 & 255)); }
le32() { printf '%s %s' "$(le16 $(($1 & 65535)))" "$(le16 $(($1 >> 16)))"; }

# damaged IMAGE PATH PATTERN BASE [nofsck]: dump, diff (against BASE)
# and verify refuse IMAGE so; e2fsck -fn finds the damage too, unless
# nofsck: e2fsck 1.47.0 does not check a node's depth against its
# parent's, which ext4 does (__ext4_ext_check: "unexpected eh_depth").
damaged() {
	local img=$1 path=$2 pat=$3 base=$4 c
	if [ "${5:-}" != nofsck ] && e2fsck -fn "$img" >/dev/null 2>&1; then
		t_fail "e2fsck finds nothing wrong in $img ($pat)"
	fi
	for c in dump diff verify; do
		case $c in
		dump) run 2 "$L" dump "$img" ;;
		diff) run 2 "$L" diff "$base" "$img" ;;
		verify) run 2 "$L" verify "$img" "$src" ;;
		esac
		[ "$(wc -l <"$T_TMP/err")" = 1 ] || t_fail "$c: $(cat "$T_TMP/err")"
		grep -q "^orlov-layout: .* while reading extent tree of $path ($pat)\( in .*\)\?$" \
			"$T_TMP/err" || t_fail "$c: $(cat "$T_TMP/err"), not ($pat)"
	done
}

base=$T_TMP/nocsum.img
io=$(ino_at "$base" /ext4/deep)
list=$(awk '$1 == "/ext4/deep" { sub("blocks=", "", $5); print $5 }' "$golden/nocsum.dump")
idx=$(printf %s "$list" | expand | sed -n 1p)
leaf=$(printf %s "$list" | expand | sed -n 2p)
bs=1024
d=$T_TMP/damaged.img
cp "$base" "$d"; poke "$d" $((io + 40)) 00
damaged "$d" /ext4/deep 'root in the inode: bad magic 0xf300' "$base"
grep -q '^orlov-layout: Corrupt extent header while' "$T_TMP/err" || t_fail "$(cat "$T_TMP/err")"
cp "$base" "$d"; poke "$d" $((io + 40 + 6)) 06
damaged "$d" /ext4/deep 'root in the inode: depth 6, 5 at most' "$base"
cp "$base" "$d"; poke "$d" $((idx * bs)) 00
damaged "$d" /ext4/deep "block $idx: bad magic 0xf300" "$base"
cp "$base" "$d"; poke "$d" $((leaf * bs + 6)) 01
damaged "$d" /ext4/deep "block $leaf: depth 1 where 0 belongs" "$base" nofsck
cp "$base" "$d"; poke "$d" $((leaf * bs + 2)) ff
damaged "$d" /ext4/deep "block $leaf: 255 entries past the room for 84" "$base"
cp "$base" "$d"; poke "$d" $((idx * bs + 12 + 4)) $(le32 "$idx")
damaged "$d" /ext4/deep "block $idx: index 0 leads to block $idx again" "$base"
grep -q '^orlov-layout: Found cyclic loop in extent tree while' "$T_TMP/err" ||
	t_fail "$(cat "$T_TMP/err")"
cp "$base" "$d"; poke "$d" $((leaf * bs + 12 + 8)) ff ff ff ff
damaged "$d" /ext4/deep "block $leaf: extent 0 maps block 4294967295, outside the filesystem" "$base"
cp "$base" "$d"; poke "$d" $((leaf * bs + 24)) 00 00 00 00
damaged "$d" /ext4/deep "block $leaf: extent 1 (logical 0) out of order" "$base"
# with metadata_csum: a block whose checksum does not match
base=$T_TMP/1k.img
list=$(awk '$1 == "/ext4/deep" { sub("blocks=", "", $5); print $5 }' "$golden/1k.dump")
leaf=$(printf %s "$list" | expand | sed -n 2p)
cp "$base" "$d"; poke "$d" $((leaf * bs + 8)) 5a
damaged "$d" /ext4/deep "block $leaf: checksum does not match" "$base"
grep -q '^orlov-layout: Extent block checksum does not match' "$T_TMP/err" ||
	t_fail "$(cat "$T_TMP/err")"
# a directory's tree; the root directory's, which stats reads too
base=$T_TMP/nocsum.img
cp "$base" "$d"; poke "$d" $(($(ino_at "$base" /ext4/names) + 40 + 4)) 05
damaged "$d" /ext4/names 'root in the inode: room for 5 entries, 4 at most' "$base"
cp "$base" "$d"; poke "$d" $(($(ino_at "$base" /) + 40)) 00
run 2 "$L" stats "$d"
grep -qx 'orlov-layout: Corrupt extent header while reading directory /' "$T_TMP/err" ||
	t_fail "stats: $(cat "$T_TMP/err")"

# verify counts the tree's blocks in i_blocks: a wrong count is a mismatch
cp "$base" "$d"; poke "$d" $(($(ino_at "$base" /ext4/runs) + 28)) 02 00 00 00
n=$(awk '$1 == "/ext4/runs" { sub("blocks=", "", $5); print $5 }' "$golden/nocsum.dump" |
	expand | wc -l)
run 1 "$L" verify "$d" "$src"
grep -qx "mismatch: /ext4/runs: i_blocks (512-byte units, from the block map) (expected $((n * 2)), got 2)" \
	"$T_TMP/out" || t_fail "i_blocks: $(cat "$T_TMP/out")"

# 64-bit block numbers, printed in full: a file at 2^32 + 12345 of a
# 1 KiB-block filesystem just over 2^32 blocks (sparse, about 400 MiB on
# the host), placed with debugfs, the counts then made right by e2fsck.
img=$T_TMP/big.img
blk=$(((1 << 32) + 12345))
t_mkimage "$img" 4100G -t ext4 -b 1024 -N 2048 -O ^resize_inode,^has_journal \
	-E lazy_itable_init=1,nodiscard
debugfs -w -f - "$img" >/dev/null 2>&1 <<EOF
write /dev/null f
extent_open /f
set_bmap 0 $blk
set_bmap 1 $((blk + 1))
extent_close
setb $blk 2
sif /f size 2048
sif /f blocks 4
EOF
e2fsck -fy "$img" >/dev/null 2>&1 || true
t_fsck "$img"
run 0 "$L" dump "$img" /f
grep -qx "/f ino=12 group=[0-9]* file blocks=$blk-$((blk + 1))" "$T_TMP/out" ||
	t_fail "64-bit: $(cat "$T_TMP/out")"
rm -f "$img"
exit 0
