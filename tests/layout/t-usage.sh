#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# orlov-layout command line: --help, --version, usage errors (exit 2).
set -eu
. "$(dirname "$0")/lib.sh"

for h in -h --help; do
	lt_run 0 "$ORLOV_LAYOUT" $h
	grep -q '^Usage: orlov-layout dump IMAGE \[PATH\]$' "$lt_tmp/out" ||
		lt_fail "$h: no usage on stdout"
done
for v in -V --version; do
	lt_run 0 "$ORLOV_LAYOUT" $v
	grep -qx 'orlov-layout [0-9][0-9.a-z~+-]*' "$lt_tmp/out" ||
		lt_fail "$v: $(cat "$lt_tmp/out")"
done
# Every command and status the help names is in the manual page.
man=$top_srcdir/man/orlov-layout.1
if [ -f "$man" ]; then
	for w in dump diff stats verify 'first difference:' 'same_blocks=' \
		'top_level_groups=' 'verified=' 'xattr=' 'lost+found'; do
		grep -qF -- "$w" "$man" || lt_fail "$w not in $man"
	done
fi
lt_run 2 "$ORLOV_LAYOUT"
lt_run 2 "$ORLOV_LAYOUT" frobnicate x.img
grep -q '^Usage:' "$lt_tmp/err" || lt_fail "no usage on stderr"
lt_run 2 "$ORLOV_LAYOUT" dump
lt_run 2 "$ORLOV_LAYOUT" dump a b c
lt_run 2 "$ORLOV_LAYOUT" stats a b
lt_run 2 "$ORLOV_LAYOUT" diff a
lt_run 2 "$ORLOV_LAYOUT" verify a
lt_run 2 "$ORLOV_LAYOUT" --bogus dump a
exit 0
