#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t-crosscheck-debian.sh - the crosscheck corpus against Debian 12's own
# kernel (kernel/debian-kernel.sh: ext2 and ext3 images go through its ext4
# driver, CONFIG_EXT4_USE_FOR_EXT2=y) on qemu -smp 2, the replayer pinned
# to CPU 1, the tool run with --cpus 2 --driver ext4.
#
# Mounted -t ext2 (no delayed allocation) the tool must be exact: every
# case identical, inode for inode and block for block.  Mounted -t ext4
# (delayed allocation, the tool with --delalloc; the guest's flusher on
# the writer's CPU, no periodic or background flush) too: the delayed data
# is written back at the final sync, and wherever it passes half the free
# space (ext4_nonda_switch waits for a writeback of every dirty file
# there; b1k-fill, b1k-small-tight, b1k-wide, b4k-fill, c1k-csum-wide and
# e1k-fill-ssd do that), as the tool's model does.  The guest replay, the
# tree read back in the guest, the tool's run and e2fsck -fn of both
# images must pass for every case.  A table of paths and the share of
# paths with the same inode and the same blocks ends the output.
#
# Both runs also compare ext4's own tracepoints, recorded in the guest,
# with the tool's --trace (crosscheck.sh --ext4-trace): where the layouts
# are identical the records must be too (doc/trace-format.md), under
# delayed allocation the writeback's requests as the kernel's
# ext4_writepages cuts them included.
#
# The -t ext2 run also mounts three cases of 16 groups or more once more
# with -o mb_optimize_scan=0 (CASE-linear, in the same boots), against the
# tool's --kernel 6.1.164: 6.1 before 6.1.165 scanned groups in turn for
# indirect-mapped files, which every file of these ext2 and ext3 images
# is (b1k-fill's layout differs between the two scans, on both sides).
# And b1k-fill once more on a non-rotational disk (queue/rotational 0
# before the mount) against --rotational no (b1k-fill-ssd: no group in
# turn before the lists, which 6.1.192 takes for indirect-mapped files).
#
# e4k-64bit-26t, a 26 TiB image (more than 2^32 blocks, its images
# sparse on /dev/shm), runs in both: directories, attribute blocks and
# extent-tree leaves past block 2^32; skipped (TAP SKIP) where /dev/shm
# cannot hold it.
#
# The heavy case (b1k-flat40k, 40,000 names in one directory: an htree
# here, so quick) runs in the -t ext2 run only: its inodes and directory
# blocks are placed alike in both runs (no delayed allocation for them),
# and the -t ext4 run's writeback of small files is the other cases' too.
# Options are passed on to crosscheck.sh (e.g. --only REGEX, --no-heavy).
# Exit: 0 pass, 1 fail (also when Debian's kernel cannot be fetched),
# 77 skip (no QEMU, ORLOV_SKIP_KERNEL_TESTS=1, tool not built).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_require_qemu
t0=$(date +%s)
if ! kdir=$("$top_srcdir/kernel/debian-kernel.sh"); then
	echo "# cannot fetch Debian's kernel: kernel/debian-kernel.sh failed (see above)"
	exit 1
fi
echo "# Debian kernel: $(cat "$kdir/package" 2>/dev/null) ($kdir)"

kt_workdir ""
failed=0 skipped=0
linear='^(b1k-fill|b1k-g2k-mixed|u1k-big-ext3)$:linear:mb_optimize_scan=0:6.1.164'
ssd='^b1k-fill$:ssd::::no'
for fs in ext2 ext4; do
	t1=$(date +%s)
	et=(--no-heavy --ext4-trace)
	[ $fs = ext2 ] && et=(--heavy --ext4-trace --variant "$linear" --variant "$ssd")
	echo "# --- crosscheck.sh --kernel debian --cpus 2 --driver ext4 --fstype $fs ${et[*]} $*"
	"$kt_here/crosscheck.sh" --kernel debian --cpus 2 --driver ext4 \
		--fstype "$fs" "${et[@]}" "$@" | tee "$work/$fs.tap"
	rc=${PIPESTATUS[0]}
	echo "# --fstype $fs: rc=$rc in $(( $(date +%s) - t1 ))s"
	case $rc in
	0) ;;
	77) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
	# CASE PATHS SAME_INODE SAME_BLOCKS, from `ok N - CASE p/i/b [# measured]`
	sed -n "s|^ok [0-9]* - \([^ ]*\) \([0-9]*\)/\([0-9]*\)/\([0-9]*\)\( # measured.*\)\{0,1\}\$|\1 $fs \2 \3 \4|p" \
		"$work/$fs.tap" >>"$work/table"
done

echo "#"
echo "# Debian's kernel (ext4 driver) vs the tool (--driver ext4), per case:"
if [ -s "$work/table" ]; then
	awk 'function pct(a, b) { return b ? sprintf("%.1f", 100 * a / b) : "-" }
	BEGIN { printf "# %-22s %-6s %7s %9s %9s\n", "case", "fstype", "paths",
		"inode %", "blocks %" }
	{
		printf "# %-22s %-6s %7d %9s %9s\n", $1, $2, $3, pct($4, $3), pct($5, $3)
		p[$2] += $3; i[$2] += $4; b[$2] += $5
	}
	END {
		split("ext2 ext4", fl, " ")
		for (k = 1; k <= 2; k++)
			if ((f = fl[k]) in p)
				printf "# %-22s %-6s %7d %9s %9s\n", "(all)", f, p[f],
					pct(i[f], p[f]), pct(b[f], p[f])
	}' "$work/table"
else
	echo "# (no case reached the layout comparison)"
fi
echo "# whole test: $(( $(date +%s) - t0 ))s"

[ "$failed" = 0 ] || { echo "# $failed of the two crosscheck runs failed"; exit 1; }
[ "$skipped" = 0 ] || exit 77
exit 0
