#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t-trace-equal-oldalloc.sh - t-trace-equal.sh with the oldalloc policy:
# tree below /t/u, guest mounted -o oldalloc (find_group_dir, branch=dir),
# orlov-populate --policy oldalloc; the two ext2 allocation traces must be
# equal line for line.
#
# The kernel patch (0002) records pgroup = the parent's i_block_group for
# every branch but orlov-top, as doc/trace-format.md says; a tool that
# writes pgroup=-1 for branch=dir fails here (first differing lines shown).
export TRACE_EQUAL_RUNS=oldalloc
exec "$(dirname "$0")/t-trace-equal.sh" "$@"
