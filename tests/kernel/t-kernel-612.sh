#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The same series (kernel/patches/series) applied to linux-source-6.12, built
# and booted: mount options, reproducible top level and ext3 oldalloc
# (t-patches-guest.sh), then tracefs records equal to the tool's --trace
# (t-trace-equal.sh, without the attribute cases: see below), all under
# the patched 6.12 kernel.
set -u
. "$(dirname "$0")/lib.sh"
kt_require_qemu
ORLOV_KERNEL=$("$top_srcdir/kernel/build-kernel.sh" --patched --source 6.12) ||
	kt_die "cannot build the patched 6.12 kernel"
export ORLOV_KERNEL
"$kt_here/t-patches-guest.sh" || exit 1
# The tool models 6.1.  Since then ext2_xattr_set2 allocates attribute
# blocks with EXT2_ALLOC_NORESERVE (no reservation window), so the
# attribute cases are left out here; every other case must still agree.
TRACE_EQUAL_CASES='^(b1k-mixed|b4k-g4k-mixed|b1k-small-tight|b2k-i128-colour5|b1k-prefill|b1k-tind|b1k-fill|b4k-fill)$' \
	exec "$kt_here/t-trace-equal.sh"
