#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t-crosscheck-smp.sh - the crosscheck corpus against the SMP build of the
# stock kernel (kernel/build-kernel.sh --smp) on qemu -smp 2, the replayer
# pinned to CPU 1, the tool run with --cpus 2: every layout identical.
#
# Then the control that shows the lag matters: the same starting images
# populated by the tool with --cpus up (exact counters, the uniprocessor
# model) must differ from the SMP kernel's image in at least one case; the
# count of cases and paths that differ is printed.
#
# Options are passed on to crosscheck.sh (e.g. --only REGEX).
# Exit: 0 pass, 1 fail, 77 skip (no QEMU, ORLOV_SKIP_KERNEL_TESTS=1).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kt_workdir "" keep
"$kt_here/crosscheck.sh" --cpus 2 --keep "$work/keep" "$@"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || { echo "# SMP crosscheck failed"; exit 1; }

tool=${ORLOV_POPULATE:-$top_builddir/src/orlov-populate}
layout=${ORLOV_LAYOUT:-$top_builddir/src/orlov-layout}
k=$work/keep
differ=0 ncases=0 dpaths=0
kt_read_cases "$kt_here/cases.list" "" no
for i in "${!names[@]}"; do
	n=${names[$i]}
	base=$k/img/$n.base.img
	[ -f "$base" ] || continue	# left out by --only
	ncases=$((ncases + 1))
	cp --sparse=always "$base" "$k/img/$n.U.img"
	"$tool" --cpus up --block-colour "${colours[$i]}" --target /t/u ${merges[$i]} \
		"$k/img/$n.U.img" "$k/payload/$n" >/dev/null 2>&1 ||
		{ echo "# $n: orlov-populate --cpus up failed"; exit 1; }
	"$layout" diff "$k/img/$n.K.img" "$k/img/$n.U.img" >"$k/log/$n.U.layout" 2>&1
	kt_layout_figures "$k/log/$n.U.layout"
	[ -n "$p" ] && [ -n "$si" ] || { echo "# $n: no diff summary"; exit 1; }
	if [ "$p" != "$si" ]; then
		differ=$((differ + 1))
		dpaths=$((dpaths + p - si))
		echo "# control: $n with exact (UP) counters: $((p - si)) of $p paths get another inode than under the SMP kernel"
	fi
done
echo "# control: $differ of $ncases cases, $dpaths paths, differ under the UP model"
[ "$differ" -gt 0 ] || { echo "# the UP model matched the SMP kernel everywhere: the corpus does not exercise the counters' lag"; exit 1; }
exit 0
