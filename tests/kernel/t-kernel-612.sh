#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The same series (kernel/patches/series) applied to linux-source-6.12, built
# and booted: mount options, reproducible top level and ext3 oldalloc
# (t-patches-guest.sh), then tracefs records equal to the tool's --trace
# run with --kernel 6.12 (t-trace-equal.sh, every case, the attribute ones
# included), all under the patched 6.12 kernel.
set -u
. "$(dirname "$0")/lib.sh"
kt_require_qemu
ORLOV_KERNEL=$("$top_srcdir/kernel/build-kernel.sh" --patched --source 6.12) ||
	kt_die "cannot build the patched 6.12 kernel"
export ORLOV_KERNEL
"$kt_here/t-patches-guest.sh" || exit 1
# 6.12 hashes attribute names as unsigned char and allocates attribute
# blocks with EXT2_ALLOC_NORESERVE: the tool's --kernel 6.12.
exec "$kt_here/t-trace-equal.sh" --source 6.12
