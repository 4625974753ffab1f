#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t-patches-guest.sh - boot the kernel built with kernel/patches/series and
# check what the series adds:
#
#   ext2 topdir_hash,block_colour=0
#     - both options are shown in /proc/mounts;
#     - two copies of one image given the same mkdir/write sequence end up
#       with the same inode numbers and the same ext2 allocation trace
#       (tracefs events/ext2), and e2fsck -fn clean;
#     - every orlov-top record starts at (signed half-MD4 of the name, as
#       debugfs dx_hash computes it with the image's hash seed) % ngroups;
#     - for information: the same on two copies without the options (the
#       stock behaviour, random start) usually differs.
#   ext3 image mounted -t ext4 -o oldalloc vs -o orlov
#     - options shown in /proc/mounts (oldalloc) / accepted (orlov);
#     - top-level directories use fewer groups with oldalloc than with orlov;
#     - e2fsck -fn clean.
#
# Environment: see lib.sh (ORLOV_KERNEL to use a ready bzImage; otherwise
# kernel/build-kernel.sh --patched).  ORLOV_KEEP=DIR keeps the work files
# (images, traces) in DIR.
# Exit: 0 pass, 1 fail, 77 skip (no QEMU, no tracefs in the kernel).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_require_qemu
kernel=${ORLOV_KERNEL:-}
if [ -z "$kernel" ]; then
	kernel=$("$top_srcdir/kernel/build-kernel.sh" --patched) ||
		kt_die "patched kernel build failed"
fi
[ -f "$kernel" ] || kt_die "no kernel $kernel"

kt_workdir "${ORLOV_KEEP:-}" payload res

UUID=6f726c6f-762d-706f-7075-6c6174650006
fail=0
bad() { echo "FAIL: $*"; fail=1; }
okay() { echo "ok: $*"; }

# images: A B (ext2, topdir_hash), C D (ext2, stock), E F (ext3, oldalloc/orlov)
mke2fs -F -q -t ext2 -b 1024 -I 128 -U $UUID -E hash_seed=$UUID \
	"$work/A" 64M >/dev/null || kt_die "mke2fs ext2"
mke2fs -F -q -t ext3 -b 1024 -I 128 -U $UUID -E hash_seed=$UUID \
	"$work/E" 64M >/dev/null || kt_die "mke2fs ext3"
for i in B C D; do cp "$work/A" "$work/$i"; done
cp "$work/E" "$work/F"

cat >"$work/guest.sh" <<'EOF'
T=/sys/kernel/tracing
populate() { # a fixed sequence of top-level dirs, subdirs and files
	for d in d00 d01 d02 d03 d04 d05 d06 d07 d08 d09 d10 d11 d12 d13 d14 d15 home usr var; do
		mkdir /mnt/$d || return 1
	done
	for d in d00 d03 d07 usr; do
		mkdir /mnt/$d/sub && dd if=/dev/zero of=/mnt/$d/sub/f bs=1024 count=20 2>/dev/null ||
			return 1
		dd if=/dev/zero of=/mnt/$d/g bs=1024 count=3 2>/dev/null || return 1
	done
	sync
}
run() { # run DEV FSTYPE OPTS TAG
	[ -d $T/events/ext2 ] && { echo > $T/trace; }
	mount -t $2 -o $3 /dev/$1 /mnt || { echo "mount $1 -o $3 failed"; return 1; }
	grep " /mnt " /proc/mounts > /results/mounts.$4
	populate || { echo "populate $4 failed"; umount /mnt; return 1; }
	umount /mnt || return 1
	[ -d $T/events/ext2 ] && cat $T/trace > /results/trace.$4
	return 0
}
if [ -d $T/events/ext2 ]; then
	echo 1 > $T/events/ext2/enable || exit 20
	echo 4096 > $T/buffer_size_kb
	: > /results/have-tracing
fi
run vda ext2 topdir_hash,block_colour=0 A || exit 21
run vdb ext2 topdir_hash,block_colour=0 B || exit 22
run vdc ext2 defaults C || exit 23
run vdd ext2 defaults D || exit 24
run vde ext4 oldalloc E || exit 25
run vdf ext4 orlov F || exit 26
exit 0
EOF

"$kt_here/run-guest.sh" -k "$kernel" -p "$work/payload" -s "$work/guest.sh" \
	-d "$work/A" -d "$work/B" -d "$work/C" -d "$work/D" -d "$work/E" \
	-d "$work/F" -r "$work/res" -o "$work/guest.out" -l "$work/console.log" \
	-t 900 -b 180
grc=$?
[ $grc = 77 ] && exit 77
if [ $grc != 0 ]; then
	sed 's/^/# /' "$work/guest.out" | tail -n 20
	echo "FAIL: guest script rc=$grc"
	exit 1
fi

# inode numbers of the top-level entries: "ino name" lines
toplevel() {
	debugfs -R "ls -p /" "$1" 2>/dev/null |
		awk -F/ 'NF >= 6 && $6 != "" && $6 != "." && $6 != ".." && $6 != "lost+found" { print $2, $6 }'
}
sbval() { dumpe2fs -h "$1" 2>/dev/null | awk -F: -v k="$2" '$1 == k { print $2 + 0 }'; }
ipg=$(sbval "$work/A" "Inodes per group")
bpg=$(sbval "$work/A" "Blocks per group")
ngroups=$(( ($(sbval "$work/A" "Block count") - $(sbval "$work/A" "First block") + bpg - 1) / bpg ))
groups_used() { toplevel "$1" | awk -v ipg="$ipg" '{ g[int(($1 - 1) / ipg)] = 1 } END { print length(g) }'; }

for i in A B C D E F; do
	if e2fsck -fn "$work/$i" >"$work/fsck.$i" 2>&1; then
		okay "e2fsck -fn $i clean"
	else
		tail -n 5 "$work/fsck.$i" | sed 's/^/# /'
		bad "e2fsck -fn $i"
	fi
done

# /proc/mounts
grep -q 'topdir_hash' "$work/res/mounts.A" && grep -q 'block_colour=0' "$work/res/mounts.A" &&
	okay "/proc/mounts: $(cat "$work/res/mounts.A")" || bad "topdir_hash/block_colour not in /proc/mounts: $(cat "$work/res/mounts.A")"
grep -q 'oldalloc' "$work/res/mounts.E" &&
	okay "/proc/mounts: $(cat "$work/res/mounts.E")" || bad "oldalloc not in /proc/mounts: $(cat "$work/res/mounts.E")"
grep -q 'oldalloc' "$work/res/mounts.F" && bad "oldalloc shown for -o orlov"

# reproducibility with topdir_hash,block_colour=0
toplevel "$work/A" >"$work/top.A"; toplevel "$work/B" >"$work/top.B"
toplevel "$work/C" >"$work/top.C"; toplevel "$work/D" >"$work/top.D"
echo "# top-level inodes A (topdir_hash): $(awk '{ printf "%s=%s ", $2, $1 }' "$work/top.A")"
if [ -s "$work/top.A" ] && cmp -s "$work/top.A" "$work/top.B"; then
	okay "two runs with topdir_hash give identical top-level inode numbers"
else
	bad "topdir_hash runs differ: $(diff "$work/top.A" "$work/top.B" | tr '\n' ' ')"
fi
for i in A B C D; do
	debugfs -R "stat /d00/sub/f" "$work/$i" 2>/dev/null | sed -n '/^BLOCKS:/,$p' | tr -d '\n' >"$work/blocks.$i"
	echo >>"$work/blocks.$i"
done
if cmp -s "$work/blocks.A" "$work/blocks.B"; then
	okay "same data blocks for /d00/sub/f: $(cat "$work/blocks.A")"
else
	bad "data blocks differ: $(cat "$work/blocks.A") vs $(cat "$work/blocks.B")"
fi
if cmp -s "$work/top.C" "$work/top.D"; then
	echo "# info: stock runs happened to give the same top-level inodes"
else
	echo "# info: stock runs differ (random top-level start), as expected"
fi

# traces
norm=$kt_here/trace-normalize
if [ -f "$work/res/have-tracing" ]; then
	"$norm" "$work/res/trace.A" >"$work/trace.A"
	"$norm" "$work/res/trace.B" >"$work/trace.B"
	echo "# trace A: $(grep -c inode_alloc "$work/trace.A") inode, $(grep -c block_alloc "$work/trace.A") block records"
	if [ -s "$work/trace.A" ] && cmp -s "$work/trace.A" "$work/trace.B"; then
		okay "ext2 traces of the two topdir_hash runs are identical"
	else
		bad "ext2 traces differ or are empty"
	fi
	# every top-level search starts at the name's half-MD4 hash % ngroups
	# (orlov-top, and orlov-fallback reached from it, record that start)
	nchk=0 nbad=0
	while read -r name pgroup; do
		h=$(debugfs -R "dx_hash -h half_md4 -s $UUID $name" "$work/A" 2>/dev/null |
			sed -n 's/.* is \(0x[0-9a-f]*\) .*/\1/p')
		want=$(( h % ngroups ))
		nchk=$((nchk + 1))
		[ "$want" = "$pgroup" ] || { nbad=$((nbad + 1)); echo "# $name: pgroup=$pgroup, hash says $want"; }
	done < <(sed -n -E 's/^ext2_inode_alloc: dir=2 name=([^ ]*) mode=dir branch=orlov-(top|fallback) pgroup=([0-9]*) .*/\1 \3/p' "$work/trace.A")
	if [ $nchk -gt 0 ] && [ $nbad = 0 ]; then
		okay "$nchk top-level start groups = half-MD4(name) % $ngroups"
	else
		bad "orlov-top start groups: $nbad of $nchk wrong"
	fi
	# group in each inode record matches the inode number
	awk -v ipg="$ipg" '/^ext2_inode_alloc/ {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (int((v["ino"] - 1) / ipg) != v["group"]) { print "# bad group: " $0; bad = 1 }
	} END { exit bad }' "$work/trace.A" && okay "trace group fields match inode numbers" ||
		bad "trace group fields"
else
	echo "# no tracefs events/ext2 in the guest kernel: trace checks skipped"
	bad "tracepoints missing (is the kernel built with --patched and CONFIG_EVENT_TRACING?)"
fi

# oldalloc packs, orlov spreads
gE=$(groups_used "$work/E") gF=$(groups_used "$work/F")
echo "# ext3 top-level dirs: oldalloc uses $gE groups, orlov $gF groups (of $ngroups)"
if [ "$gE" -lt "$gF" ]; then
	okay "oldalloc packs top-level dirs into fewer groups than orlov"
else
	bad "oldalloc ($gE groups) does not pack compared to orlov ($gF)"
fi

exit $fail
