#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Trace equality (t-trace-equal.sh) on the patched kernel's SMP build,
# qemu -smp 2, the replayer pinned to CPU 1, the tool with --cpus 2: every
# record's Orlov figures (avefreei, avefreeb, max_dirs, min_inodes,
# min_blocks, max_debt) come from the lagging percpu counters on both sides.
exec "$(dirname "$0")/t-trace-equal.sh" --cpus 2 "$@"
