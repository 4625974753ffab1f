#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# --help, --version, and the man page documenting every option --help lists.
. "$(dirname "$0")/lib.sh"

"$ORLOV_POPULATE" --help >"$T_TMP/help" || t_fail "--help exit status"
grep -q "^Usage: orlov-populate \[OPTIONS\] IMAGE SOURCE" "$T_TMP/help" || t_fail "usage line"
"$ORLOV_POPULATE" --version | grep -Eq '^orlov-populate [0-9]+\.[0-9]+' || t_fail "--version"
man=$top_srcdir/man/orlov-populate.1
opts=$(grep -Eo -- '--[a-z][a-z-]+' "$T_TMP/help" | sort -u)
[ -n "$opts" ] || t_fail "no options in --help"
for o in $opts; do
	# groff escapes the dashes: \-\-block\-colour
	pat=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
	grep -q -- "$pat" "$man" || t_fail "$o is in --help but not in the man page"
done
for o in $(grep -Eo -- '\\-\\-[a-z][a-z\\-]+' "$man" | sed 's/\\//g' | sort -u); do
	grep -q -- "$o" "$T_TMP/help" || t_fail "$o is in the man page but not in --help"
done
echo "--help and the man page list the same $(echo "$opts" | wc -l) options"
