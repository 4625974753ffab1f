#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t-crosscheck-arm64.sh - the arm64 oracle: Debian's arm64 packages of the
# releases the amd64 tests boot (kernel/debian-kernel.sh --arch arm64:
# linux-image-6.1.0-N-arm64 and linux-image-6.12.N+deb12-arm64) on
# qemu-system-aarch64 -M virt -cpu cortex-a57 -smp 2 (TCG), the replayer
# cross-built static for arm64 and pinned to CPU 1 as on amd64,
# busybox-static:arm64; the tool run with --driver ext4 --cpus 2 --kernel
# 6.1-arm64, then 6.12-arm64.  One boot per kernel (crosscheck.sh with
# every case and mount in one batch): ext2 and ext3 images mounted -t ext2
# (the ext4 driver without delayed allocation), two of them once more -t
# ext4 (delayed allocation, CASE-da), ext4 images mounted -o nodelalloc
# and -t ext4 (CASE-da), and the attribute-heavy cases b1k-xattr and
# u1k-xattr-ext3 (attribute blocks shared by block hash; the names' hash
# is unsigned char on arm64's 6.1, signed on amd64's).  ext4's own
# tracepoints are compared record for record with the tool's --trace.
# Every case must be identical.
#
# A control on 6.1: the x86 model (--kernel 6.1, signed char) run on the
# attribute cases' starting images must NOT give the arm64 kernel's
# layout; otherwise they no longer show the unsigned hash.
#
# Options are passed on to crosscheck.sh (e.g. --only REGEX to narrow).
# Exit: 0 pass, 1 fail (also when a package cannot be fetched or the
# replayer cannot be cross-built), 77 skip (no qemu-system-aarch64,
# ORLOV_SKIP_KERNEL_TESTS=1, tool not built).
set -uo pipefail
export ORLOV_ARCH=arm64
. "$(dirname "$0")/lib.sh"

if [ "${ORLOV_SKIP_KERNEL_TESTS:-0}" != 0 ]; then
	echo "# skipped: ORLOV_SKIP_KERNEL_TESTS is set"
	exit 77
fi
kt_need qemu-system-aarch64 qemu-system-arm || true
if ! command -v qemu-system-aarch64 >/dev/null 2>&1; then
	echo "# skipped: qemu-system-aarch64 not available (apt-get install qemu-system-arm)"
	exit 77
fi
tool=${ORLOV_POPULATE:-$top_builddir/src/orlov-populate}
layout=${ORLOV_LAYOUT:-$top_builddir/src/orlov-layout}
if [ ! -x "$tool" ] || [ ! -x "$layout" ]; then
	echo "# skipped: orlov-populate or orlov-layout not built"
	exit 77
fi
t0=$(date +%s)
kt_workdir ""

# what the guest needs, fetched or built before any boot (a failure here
# is a failure, not a skip)
for line in 6.1 6.12; do
	if ! kdir=$("$top_srcdir/kernel/debian-kernel.sh" --arch arm64 --line "$line"); then
		echo "# cannot fetch Debian's arm64 $line kernel: kernel/debian-kernel.sh --arch arm64 --line $line failed (see above)"
		exit 1
	fi
	echo "# Debian arm64 kernel $line: $(cat "$kdir/package" 2>/dev/null) ($kdir)"
done
replay=$(kt_guest_replay) || exit 1
busybox=$(kt_busybox) || exit 1
echo "# replayer $replay, busybox $busybox"

only='^(b1k-mixed|b4k-g4k-mixed|b2k-ext3-nori|b1k-big|b1k-fill|b1k-xattr|u1k-xattr-ext3|e1k-mixed|e4k-mixed-g|e1k-big)$'
da='^(b1k-mixed|b1k-fill|e1k-mixed|e4k-mixed-g|e1k-big)$:da:::::ext4'
failed=0 skipped=0
for line in 6.1 6.12; do
	t1=$(date +%s)
	echo "# --- crosscheck.sh --arch arm64 --kernel debian --source $line --cpus 2 --driver ext4 --fstype ext2 --ext4-trace --variant '$da' --only '$only' $*"
	"$kt_here/crosscheck.sh" --arch arm64 --kernel debian --source "$line" \
		--cpus 2 --driver ext4 --fstype ext2 --ext4-trace --batch 23 \
		--variant "$da" --only "$only" --keep "$work/$line" "$@" |
		tee "$work/$line.tap"
	rc=${PIPESTATUS[0]}
	echo "# $line: rc=$rc in $(( $(date +%s) - t1 ))s"
	case $rc in
	0) ;;
	77) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
	# CASE PATHS SAME_INODE SAME_BLOCKS, from `ok N - CASE p/i/b`
	sed -n "s|^ok [0-9]* - \([^ ]*\) \([0-9]*\)/\([0-9]*\)/\([0-9]*\).*\$|\1 $line \2 \3 \4|p" \
		"$work/$line.tap" >>"$work/table"
done

# the control: arm64's 6.1 is not x86's on the attribute cases
k=$work/6.1
shown=0 ncontrol=0
# (u1k-xattr-ext3 has ext4 features: read only for the ext4 driver)
kt_driver=ext4
kt_read_cases "$kt_here/cases.list" '^(b1k-xattr|u1k-xattr-ext3)$' no
for i in "${!names[@]}"; do
	n=${names[$i]}
	[ -f "$k/img/$n.base.img" ] && [ -f "$k/img/$n.K.img" ] || continue
	ncontrol=$((ncontrol + 1))
	cp --sparse=always "$k/img/$n.base.img" "$k/img/$n.X.img"
	"$tool" --driver ext4 --no-delalloc --cpus 2 --kernel 6.1 \
		--block-colour "${colours[$i]}" --target /t/u \
		"$k/img/$n.X.img" "$k/payload/$n" >"$k/log/$n.X.tool" 2>&1 ||
		{ echo "# control: $n: orlov-populate --kernel 6.1 failed"; failed=$((failed + 1)); continue; }
	"$layout" diff "$k/img/$n.K.img" "$k/img/$n.X.img" >"$k/log/$n.X.layout" 2>&1
	kt_layout_figures "$k/log/$n.X.layout"
	[ -n "$p" ] && [ -n "$sb" ] ||
		{ echo "# control: $n: no diff summary"; failed=$((failed + 1)); continue; }
	echo "# control: $n under the x86 model (--kernel 6.1): $si of $p paths the same inode, $sb the same blocks as arm64's 6.1"
	[ "$sb" = "$p" ] && [ "$si" = "$p" ] || shown=$((shown + 1))
done
if [ "$ncontrol" -gt 0 ] && [ "$shown" = 0 ]; then
	echo "# control: the x86 model gave arm64's layout in every attribute case: they do not show the unsigned hash"
	failed=$((failed + 1))
fi

echo "#"
echo "# Debian's arm64 kernels (ext4 driver) vs the tool (--kernel LINE-arm64), per case:"
if [ -s "$work/table" ]; then
	awk 'function pct(a, b) { return b ? sprintf("%.1f", 100 * a / b) : "-" }
	BEGIN { printf "# %-22s %-6s %7s %9s %9s\n", "case", "kernel", "paths",
		"inode %", "blocks %" }
	{ printf "# %-22s %-6s %7d %9s %9s\n", $1, $2, $3, pct($4, $3), pct($5, $3) }' \
		"$work/table"
else
	echo "# (no case reached the layout comparison)"
fi
echo "# whole test: $(( $(date +%s) - t0 ))s"

[ "$failed" = 0 ] || { echo "# $failed failure(s)"; exit 1; }
[ "$skipped" = 0 ] || exit 77
exit 0
