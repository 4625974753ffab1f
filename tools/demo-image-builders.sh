#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The demonstrations issue 25 closes with (not part of make check): each
# step says what it does, then what it checked.
#
#  1. a GPT disk image (sfdisk) with two partitions, each made and filled
#     in one orlov-populate run (--create, --partition 1 and 2): e2fsck -fn
#     clean on each (IMAGE?offset=), and the partition table (the primary
#     GPT before partition 1, the backup at the end) and the other
#     partition byte-identical before and after each run (cmp of those
#     byte ranges); orlov-layout verify --partition on both;
#  2. the labelled filesystem of partition 1 (--file-contexts) checked
#     path by path against matchpathcon -f's lookups (selinux-utils; no
#     SELinux needed on the host), and partition 2's --fs-config owners,
#     modes and capabilities through verify;
#  3. a three-layer OCI build against its reference tree (tests/t-layers.sh:
#     the layered image and the reference tree's are the same, orlov-layout
#     verify and e2fsck -fn clean).
#
# Usage: tools/demo-image-builders.sh [BUILDDIR]   (default: _build)
# Needs: sfdisk (fdisk), e2fsprogs, matchpathcon (selinux-utils), a build
# with libselinux.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/_build}
P=${ORLOV_POPULATE:-$build/src/orlov-populate}
L=${ORLOV_LAYOUT:-$build/src/orlov-layout}
export LC_ALL=C TZ=UTC SOURCE_DATE_EPOCH=1700000000
export MKE2FS_CONFIG="$top/images/mke2fs.conf"
for c in sfdisk e2fsck debugfs matchpathcon cmp; do
	command -v $c >/dev/null 2>&1 || { echo "demo: $c not found" >&2; exit 2; }
done
[ -x "$P" ] && [ -x "$L" ] || { echo "demo: no $P or $L (build first)" >&2; exit 2; }
# the tests' helpers (t_context, t_label) and scratch directory
ORLOV_POPULATE=$P ORLOV_LAYOUT=$L top_srcdir=$top
. "$top/tests/lib.sh"
W=$T_TMP
fails=0
say() { printf '\n== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
ok() { printf 'OK    %s\n' "$*"; }
bad() { printf 'FAIL  %s\n' "$*"; fails=$((fails + 1)); }
MiB=1048576

# --- the trees -----------------------------------------------------------
root=$W/rootfs
mkdir -p "$root/etc/default" "$root/usr/bin" "$root/usr/lib/demo" \
	"$root/var/log" "$root/home/user" "$root/srv"
printf 'root:x:0:0::/root:/bin/sh\n' >"$root/etc/passwd"
printf 'demo\n' >"$root/etc/hostname"
printf 'X=1\n' >"$root/etc/default/demo"
i=0
while [ $i -lt 40 ]; do
	seq 1 $((i * 50)) >"$root/usr/lib/demo/lib$i.so"
	printf 'log %s\n' $i >"$root/var/log/l$i"
	i=$((i + 1))
done
seq 1 20000 >"$root/usr/bin/tool"
ln -s tool "$root/usr/bin/tool-link"
printf 'hi\n' >"$root/home/user/notes"
mkfifo "$root/srv/fifo"
fc=$W/file_contexts
cat >"$fc" <<'EOF'
/.*				system_u:object_r:default_t:s0
/			-d	system_u:object_r:root_t:s0
/etc(/.*)?			system_u:object_r:etc_t:s0
/usr/bin(/.*)?			system_u:object_r:bin_t:s0
/usr/bin/[a-z-]+	-l	system_u:object_r:bin_link_t:s0
/usr/lib(/.*)?			system_u:object_r:lib_t:s0
/var/log(/.*)?		--	system_u:object_r:var_log_t:s0
/home(/.*)?			system_u:object_r:home_t:s0
/srv/.*			-p	system_u:object_r:fifo_t:s0
/home/user/notes		<<none>>
EOF
data=$W/vendor
mkdir -p "$data/bin" "$data/etc"
printf 'ELF?' >"$data/bin/daemon"
printf 'x' >"$data/bin/helper"
printf 'k=v\n' >"$data/etc/daemon.rc"
fsc=$W/fs_config
cat >"$fsc" <<'EOF'
/ 0 0 0755
bin 0 2000 0751
bin/daemon 1000 1000 0750 capabilities=0x3000
bin/helper 0 2000 0755
etc 0 0 0755
etc/daemon.rc 0 0 0644
EOF
find "$root" "$data" -exec touch -h -d '2023-11-14 22:13:20' {} +

# --- 1. a GPT disk, two partitions, one run each ---------------------------
say "1. GPT disk image: two partitions over a byte pattern"
disk=$W/disk.img
yes orlov-demo | head -c $((64 * MiB)) >"$disk"
printf '%s\n' 'label: gpt' 'label-id: 6F726C6F-0000-4000-8000-0000000000AA' \
	'size=32MiB, type=L, name=root' 'type=L, name=vendor' |
	run sfdisk -q "$disk"
run sfdisk -d "$disk"
# each partition's start and length in bytes, from sfdisk's dump
part() {
	sfdisk -d "$disk" | sed -n "s/^.*img$1 : start= *\([0-9]*\), size= *\([0-9]*\),.*/\1 \2/p"
}
set -- $(part 1); o1=$(($1 * 512)); l1=$(($2 * 512))
set -- $(part 2); o2=$(($1 * 512)); l2=$(($2 * 512))
size=$(stat -c %s "$disk")
gpt2=$((size - 33 * 512))	# the backup entries and header: the last 33 sectors
echo "partition 1: bytes $o1 + $l1; partition 2: bytes $o2 + $l2; backup GPT from $gpt2"

# same BEFORE AFTER OFF LEN WHAT: those bytes unchanged
same() {
	if cmp -s -i "$3:$3" -n "$4" "$1" "$2"; then
		ok "$5 byte-identical (cmp of bytes $3 to $(($3 + $4)))"
	else
		bad "$5 changed"
	fi
}
fill() {	# N WHAT OPTIONS... SOURCE
	n=$1 what=$2
	shift 2
	cp "$disk" "$W/before.img"
	say "$what"
	run "$P" --partition "$n" "$disk" "$@" || bad "orlov-populate partition $n"
	same "$W/before.img" "$disk" 0 "$o1" "the primary GPT (LBA 0 to partition 1)"
	same "$W/before.img" "$disk" "$gpt2" $((size - gpt2)) "the backup GPT"
	if [ "$n" = 1 ]; then
		same "$W/before.img" "$disk" "$o2" "$l2" "partition 2"
	else
		same "$W/before.img" "$disk" "$o1" "$l1" "partition 1"
	fi
	for o in $o1 $o2; do
		[ "$n" = 1 ] && [ "$o" = "$o2" ] && continue	# not made yet
		if e2fsck -fn "$disk?offset=$o" >"$W/fsck.out" 2>&1; then
			ok "e2fsck -fn $disk?offset=$o: clean"
		else
			cat "$W/fsck.out"
			bad "e2fsck -fn at offset $o"
		fi
	done
}
fill 1 "partition 1: ext2 over the whole partition, labelled (root too: --root-attrs), owned by root" \
	-q --create auto --all-root --root-attrs --file-contexts "$fc" "$root"
fill 2 "partition 2: ext4 of 16 MiB, Android fs_config owners and capabilities" \
	-q --create 16M --fs-type ext4 --root-attrs --fs-config "$fsc" "$data"

say "verify each partition against its tree"
if run "$L" verify --partition 1 --clamp --all-root --root-attrs --file-contexts "$fc" \
	"$disk" "$root"; then ok "partition 1 equals rootfs/"; else bad "verify 1"; fi
if run "$L" verify --partition 2 --clamp --root-attrs --fs-config "$fsc" \
	"$disk" "$data"; then ok "partition 2 equals vendor/"; else bad "verify 2"; fi

# --- 2. labels, path by path, against matchpathcon ---------------------------
say "2. partition 1's security.selinux of every path against matchpathcon -f"
n=0 same_n=0
(cd "$root" && find . -printf '%y %p\n') | sort -k2 >"$W/paths"
while read -r y p; do
	case $p in .) p=/ ;; *) p=/${p#./} ;; esac
	t_ctype "$y"
	m=$t_m
	want=$(t_context "$fc" $m "$p")
	got=$(t_label "$disk?offset=$o1" "$p")
	n=$((n + 1))
	if [ "$got" = "$want" ]; then
		same_n=$((same_n + 1))
	else
		bad "$p ($m): image '$got', matchpathcon '$want'"
	fi
	case $p in /|/etc/passwd|/usr/bin/tool-link|/srv/fifo|/home/user/notes|/var/log/l7)
		printf '  %-20s %-9s %s\n' "$p" "$m" "${got:-(no label)}" ;;
	esac
done <"$W/paths"
[ $same_n = $n ] && ok "$same_n of $n paths carry the label matchpathcon gives"

say "partition 2's fs_config entries as debugfs reads them"
for p in /bin /bin/daemon /bin/helper /etc/daemon.rc; do
	debugfs -R "stat $p" "$disk?offset=$o2" 2>/dev/null |
		awk -v p="$p" '/Mode:/ { for (i = 1; i <= NF; i++) if ($i == "Mode:") m = $(i + 1) }
			/^User:/ { printf "  %-16s mode %s uid %s gid %s\n", p, m, $2, $4 }'
done
cap=$(debugfs -R "ea_get -x /bin/daemon security.capability" "$disk?offset=$o2" 2>/dev/null |
      sed -n 's/^security\.capability (20) = //p' | tr -d ' ')
echo "  /bin/daemon security.capability = $cap"
[ "$cap" = 0100000200300000000000000000000000000000 ] &&
	ok "capabilities=0x3000 stored as VFS_CAP_REVISION_2, effective" ||
	bad "capability bytes $cap"

# --- 3. OCI layers ----------------------------------------------------------
# tests/t-layers.sh builds three layer tarballs (whiteouts, an opaque
# directory, file <-> directory, hard links, symlinks), extracts them in
# order into a reference tree with a small python script, and checks the
# layered image against it: the same layout dump, orlov-layout verify, cmp.
say "3. a three-layer OCI build against its reference tree (tests/t-layers.sh)"
if out=$(top_srcdir=$top ORLOV_POPULATE=$P ORLOV_LAYOUT=$L sh "$top/tests/t-layers.sh" 2>&1); then
	printf '%s\n' "$out" | grep -E "three layers|verify of the layered|as directories"
	ok "three layers equal the reference tree: the same image, verify clean, e2fsck -fn clean"
else
	printf '%s\n' "$out" | tail -n 5
	bad "three-layer build (tests/t-layers.sh)"
fi

say "summary"
if [ $fails = 0 ]; then echo "all checks passed"; else echo "$fails checks FAILED"; fi
[ $fails = 0 ]
