#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Test wrapper (the LOG_COMPILER of make check): runs one test and appends
# "SECONDS TEST" to $top_builddir/test-times, so tools/check.sh can name
# the slowest tests and hold the suite to its time budget.
t0=$(date +%s.%N)
"$@"
rc=$?
t1=$(date +%s.%N)
for last; do :; done
[ -n "${top_builddir:-}" ] && [ -d "$top_builddir" ] &&
	awk -v a="$t0" -v b="$t1" -v t="$last" 'BEGIN { printf "%.1f %s\n", b - a, t }' \
		>>"$top_builddir/test-times"
exit $rc
