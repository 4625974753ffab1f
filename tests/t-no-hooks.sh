#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# No test hook in what is installed (issue 39): the programs and
# liborlov.so hold none of the hooks' names, and an environment that sets
# them changes nothing; the tests' own build (tests/orlov-populate-hooks)
# reads them.  tools/code-shape.sh keeps a hook's getenv inside
# #ifdef ORLOV_TEST_HOOKS.
. "$(dirname "$0")/lib.sh"

b=${top_builddir:-$PWD}
hooks='ORLOV_FAULT ORLOV_STAGE_BUDGET ORLOV_RACE'
lib=$(ls "$b"/src/.libs/liborlov.so.0.* 2>/dev/null | head -n 1)
[ -n "$lib" ] || t_fail "no $b/src/.libs/liborlov.so.0.*"
# the strings of FILE, by strings(1) if there is one
t_strings() {
	if command -v strings >/dev/null 2>&1; then
		strings -a "$1"
	else
		tr -c '[:print:]' '\n' <"$1"
	fi
}
for f in "$ORLOV_POPULATE" "$ORLOV_LAYOUT" "$b/src/orlov-mkfs" "$lib"; do
	[ -f "$f" ] || t_fail "no $f"
	t_strings "$f" >"$T_TMP/strings" || t_fail "strings $f"
	[ -s "$T_TMP/strings" ] || t_fail "no strings in $f"
	for h in $hooks; do
		! grep -q "$h" "$T_TMP/strings" || t_fail "${f#"$b"/} holds $h"
	done
	echo "${f#"$b"/}: none of $hooks"
done
# the check finds them where they are
t_strings "$ORLOV_HOOKS_POPULATE" >"$T_TMP/strings" || t_fail "strings"
for h in ORLOV_FAULT ORLOV_STAGE_BUDGET; do
	grep -q "$h" "$T_TMP/strings" || t_fail "tests/orlov-populate-hooks lacks $h"
done

# set, they change nothing: no kill, no fault count, the same image
src=$T_TMP/src
mkdir -p "$src/d"
printf 'a\n' >"$src/d/f"
t_pin_times "$src"
t_mkimage "$T_TMP/base.img" 8M -t ext2 -b 1024
cp "$T_TMP/base.img" "$T_TMP/plain.img"
"$ORLOV_POPULATE" -q "$T_TMP/plain.img" "$src" || t_fail "the plain run"
for h in ORLOV_FAULT=kill:1 ORLOV_FAULT=count ORLOV_FAULT=bad ORLOV_STAGE_BUDGET=1; do
	cp "$T_TMP/base.img" "$T_TMP/h.img"
	env "$h" "$ORLOV_POPULATE" -q "$T_TMP/h.img" "$src" 2>"$T_TMP/err" ||
		t_fail "$h: exit $?: $(cat "$T_TMP/err")"
	[ ! -s "$T_TMP/err" ] || t_fail "$h: said $(cat "$T_TMP/err")"
	cmp -s "$T_TMP/plain.img" "$T_TMP/h.img" || t_fail "$h: another image"
	echo "orlov-populate with $h: the plain run's image"
done
# and the test build does read one
cp "$T_TMP/base.img" "$T_TMP/h.img"
ORLOV_FAULT=count "$ORLOV_HOOKS_POPULATE" -q "$T_TMP/h.img" "$src" 2>"$T_TMP/err" ||
	t_fail "tests/orlov-populate-hooks: $(cat "$T_TMP/err")"
grep -q 'fault points: [0-9]* operations' "$T_TMP/err" ||
	t_fail "tests/orlov-populate-hooks counted nothing: $(cat "$T_TMP/err")"
cmp -s "$T_TMP/plain.img" "$T_TMP/h.img" || t_fail "tests/orlov-populate-hooks: another image"
echo "tests/orlov-populate-hooks: $(head -n 1 "$T_TMP/err")"
