#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t-trace-equal.sh - the allocation trace of the patched kernel (tracefs
# events/ext2, doc/trace-format.md) and orlov-populate --trace must be the
# same record for record, for a few corpus cases (1 KiB and 4 KiB blocks, a
# nearly full inode table), both at the image root (guest mounted with
# topdir_hash, the tool's default --topdir hash) and below /t/u.  Every
# ext2_new_inode and ext2_new_blocks the kernel does while the tree is
# replayed is compared with the tool's decision: branch, the Orlov figures,
# goal, reservation window, result.  The layouts must also be identical
# (orlov-layout diff), as in crosscheck.sh.  The oldalloc policy is
# checked the same way by t-trace-equal-oldalloc.sh.
#
# Cases: 1/2/4 KiB blocks, a nearly full inode table, nearly full images,
# pre-existing content, block colour 5, the triple-indirect file, extended
# attributes and ACLs (shared, replaced and freed attribute blocks).
#
# Known representation difference, normalised in crosscheck.sh: the
# kernel prints name=%s raw, the tool escapes the name (%XX for bytes
# < 0x21, '%', > 0x7e) as it does every path.
#
# Options are passed on to crosscheck.sh (e.g. --keep DIR, --only REGEX);
# TRACE_EQUAL_CASES replaces the case regex.
# Exit: 0 pass, 1 fail, 77 skip (no QEMU, ORLOV_SKIP_KERNEL_TESTS=1).
set -uo pipefail
here=$(dirname "$0")
export ORLOV_KERNEL_MODE=patched
cases=${TRACE_EQUAL_CASES:-'^(b1k-mixed|b4k-g4k-mixed|b1k-small-tight|b2k-i128-colour5|b1k-prefill|b1k-tind|b1k-fill|b4k-fill|b1k-xattr|b4k-xattr|b1k-tacl-base|b2k-tacl-named)$'}
rc=0
for run in ${TRACE_EQUAL_RUNS:-root below}; do
	extra=()
	case $run in
	root) echo "# trace equality: tree at the root, -o topdir_hash" ;;
	below) echo "# trace equality: tree below /t/u" ;;
	oldalloc) echo "# trace equality: tree below /t/u, oldalloc" ;;
	esac
	[ $run = root ] && extra=(--target / --mount-opts topdir_hash)
	[ $run = oldalloc ] && extra=(--policy oldalloc)
	[ $run = root ] || [ $run = below ] || [ $run = oldalloc ] ||
		{ echo "t-trace-equal.sh: unknown run $run" >&2; exit 2; }
	"$here/crosscheck.sh" --kernel patched --trace --only "$cases" \
		"${extra[@]}" "$@"
	r=$?
	[ $r = 77 ] && exit 77
	[ $r = 0 ] || rc=1
done
exit $rc
