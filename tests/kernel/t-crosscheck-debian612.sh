#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t-crosscheck-debian612.sh - --driver ext4 --kernel 6.12 against Debian
# 12's own 6.12 kernel package (kernel/debian-kernel.sh --line 6.12, the
# kernel of Debian 13), as t-crosscheck-debian.sh checks 6.1 against
# Debian's 6.1: qemu -smp 2, the replayer pinned to CPU 1 after every
# buddy was loaded, the tool with --cpus 2.  A different kernel, so its
# own boots; to stay cheap only the corpus cases where the 6.1 model and
# the 6.12 one part (the 6.1 model gives other blocks in each, other
# inodes in three): files large enough for inode preallocations (b1k-big),
# a nearly full image (b1k-fill), attributes and ACLs (b2k-tacl-named),
# an ext3 image with uninit_bg (u1k-big-ext3) and an ext4 image on a
# non-rotational disk (e1k-fill-ssd).  Mounted -t ext2 (-o nodelalloc for
# the ext4 image), then -t ext4 (delayed allocation), with ext4's
# tracepoints compared record for record in both.  Every case identical,
# but e1k-fill-ssd under -t ext4, measured (cases.list): a file written
# back in part while being written, to unwritten extents on this kernel
# (1 KiB blocks get dioread_nolock from 6.8 on), converted when the writes
# complete, an extent-tree block taken and freed again as the tool does,
# but in about half of the boots ext4's end_io worker converts part of
# them before the writeback maps the rest (a second tree block, 87.7 % of
# the blocks); the whole corpus was checked by hand the same way.
# The -t ext2 run also mounts, in the same boots: b1k-fill, u1k-big-ext3
# and e1k-fill-ssd -o mb_optimize_scan=0 against the tool's
# --mb-optimize-scan no (CASE-linear), and b1k-fill on a non-rotational
# disk against --rotational no (b1k-fill-ssd); the tool without the
# option places b1k-fill and e1k-fill-ssd otherwise.  Not against
# --kernel 6.12.74 (whose indirect-mapped files scan groups in turn):
# even mounted -o mb_optimize_scan=0 this kernel is not 6.12.74, which
# gives a trimmed goal back after a whole pass of CR_BEST_AVAIL_LEN where
# 6.12.77 keeps a locality group's 512 blocks (b1k-fill), and whose
# tracepoint prints the criterion past CR_ANY_FREE as 0x5.
# Options are passed on to crosscheck.sh (e.g. --only REGEX to widen).
# Exit: 0 pass, 1 fail (also when the package cannot be fetched),
# 77 skip (no QEMU, ORLOV_SKIP_KERNEL_TESTS=1, tool not built).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_require_qemu
t0=$(date +%s)
if ! kdir=$("$top_srcdir/kernel/debian-kernel.sh" --line 6.12); then
	echo "# cannot fetch Debian's 6.12 kernel: kernel/debian-kernel.sh --line 6.12 failed (see above)"
	exit 1
fi
echo "# Debian kernel: $(cat "$kdir/package" 2>/dev/null) ($kdir)"

only='^(b1k-big|b1k-fill|b2k-tacl-named|u1k-big-ext3|e1k-fill-ssd|e4k-quota|e1k-quota|e1k-quota-ext3|e4k-quota-prj|e1k-quota-prjinh|e4k-inline|e1k-inline|e1k-inline-merge|u1k-inline-ext3|e4k-inline-i1k|e4k-inline-xattr)$'
failed=0 skipped=0
for fs in ext2 ext4; do
	t1=$(date +%s)
	et=(--ext4-trace)
	[ $fs = ext2 ] && et=(--ext4-trace
		--variant '^(b1k-fill|u1k-big-ext3|e1k-fill-ssd)$:linear:mb_optimize_scan=0::--mb-optimize-scan no'
		--variant '^b1k-fill$:ssd::::no')
	echo "# --- crosscheck.sh --kernel debian --source 6.12 --cpus 2 --driver ext4 --fstype $fs ${et[*]} --only '$only' $*"
	"$kt_here/crosscheck.sh" --kernel debian --source 6.12 --cpus 2 \
		--driver ext4 --fstype "$fs" "${et[@]}" --only "$only" "$@"
	rc=$?
	echo "# --fstype $fs: rc=$rc in $(( $(date +%s) - t1 ))s"
	case $rc in
	0) ;;
	77) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
done
echo "# whole test: $(( $(date +%s) - t0 ))s"

[ "$failed" = 0 ] || { echo "# $failed of the two crosscheck runs failed"; exit 1; }
[ "$skipped" = 0 ] || exit 77
exit 0
