#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Trust in the programs and the library (issue 37):
# - no environment makes orlov-populate or liborlov run a command (the
#   races of the tests go through tests/race-populate instead);
# - an owner mapping (--all-root, --uid-map, --gid-map) clears the set-ID
#   bits of a file whose owner it changes, as chown(2) does, and says so;
#   a device table's explicit mode keeps them;
# - --file-contexts refuses what is no readable regular file;
# - every .c file includes config.h first (tools/code-shape.sh);
# - the library prints nothing: mke2fs's and libselinux's messages come
#   back in the result, and the command line prints them once.
. "$(dirname "$0")/lib.sh"

b=${top_builddir:-$PWD}
api=$b/tests/libapi
[ -x "$api" ] || t_fail "no $api"
export SOURCE_DATE_EPOCH=1700000000

src=$T_TMP/src
mkdir -p "$src/d"
printf 'a\n' >"$src/d/f"
t_mkimage "$T_TMP/base.img" 8M -t ext2 -b 1024

# --- ORLOV_RACE: a command no shipped code runs ---
cp "$T_TMP/base.img" "$T_TMP/r.img"
ORLOV_RACE="touch '$T_TMP/ran-cli'" "$ORLOV_POPULATE" -q "$T_TMP/r.img" "$src" ||
	t_fail "orlov-populate with ORLOV_RACE set"
[ ! -e "$T_TMP/ran-cli" ] || t_fail "orlov-populate ran ORLOV_RACE's command"
cp "$T_TMP/base.img" "$T_TMP/r.img"
ORLOV_RACE="touch '$T_TMP/ran-lib'" "$api" "$T_TMP/r.img" "$src" ||
	t_fail "liborlov with ORLOV_RACE set"
[ ! -e "$T_TMP/ran-lib" ] || t_fail "liborlov ran ORLOV_RACE's command"
for f in "$b/src/orlov-populate" "$b/src/orlov-layout" "$b/src/.libs/liborlov.so.0"; do
	! grep -q ORLOV_RACE "$f" || t_fail "$f still knows ORLOV_RACE"
done
# the tests' own program runs it (tests/t-races.sh and others use it)
cp "$T_TMP/base.img" "$T_TMP/r.img"
ORLOV_RACE="touch '$T_TMP/ran-test'" "$ORLOV_RACE_POPULATE" -q "$T_TMP/r.img" "$src" ||
	t_fail "tests/race-populate"
[ -e "$T_TMP/ran-test" ] || t_fail "tests/race-populate did not run ORLOV_RACE's command"
echo "ORLOV_RACE: ignored by orlov-populate and liborlov, run by tests/race-populate"

# --- set-ID bits and owner mappings ---
s8=$T_TMP/s8
mkdir -p "$s8/bin" "$s8/shared"
printf '#!/bin/sh\n' >"$s8/bin/su"
printf 'x\n' >"$s8/bin/sg"
printf 'x\n' >"$s8/bin/lock"
uid=$(id -u)
if [ "$uid" = 0 ]; then
	chown -R 1000:1000 "$s8" || t_fail "chown"
	uid=1000
fi
# (after chown, which clears them)
chmod 4755 "$s8/bin/su"
chmod 2755 "$s8/bin/sg"
chmod 2644 "$s8/bin/lock"	# set-group-ID without group exec: kept
chmod 2775 "$s8/shared"		# a directory's: kept
gid=$(stat -c %g "$s8/bin/su")
# setid NAME 'SU SG LOCK SHARED' WARNED OPTIONS...: the modes the image
# holds, and whether (how many files) the run warned of
setid() {
	name=$1 want=$2 warned=$3
	shift 3
	cp "$T_TMP/base.img" "$T_TMP/s.img"
	"$ORLOV_POPULATE" -q "$@" "$T_TMP/s.img" "$s8" 2>"$T_TMP/err" ||
		{ cat "$T_TMP/err" >&2; t_fail "$name: failed"; }
	got=
	for p in /bin/su /bin/sg /bin/lock /shared; do
		got="$got $(debugfs -R "stat $p" "$T_TMP/s.img" 2>/dev/null |
			sed -n 's/.*Mode: *\([0-7]*\).*/\1/p')"
	done
	[ "$got" = " $want" ] || t_fail "$name: modes$got, want $want"
	if [ "$warned" = 0 ]; then
		[ ! -s "$T_TMP/err" ] || t_fail "$name: warned: $(cat "$T_TMP/err")"
	else
		[ "$(wc -l <"$T_TMP/err")" = 1 ] &&
			grep -q "^orlov-populate: warning: cleared the set-user-ID and set-group-ID bits of $warned file.* whose owner --all-root, --uid-map or --gid-map changed, as chown(2) does (the first: $s8/bin/" "$T_TMP/err" ||
			{ cat "$T_TMP/err" >&2; t_fail "$name: no warning of $warned files"; }
	fi
	t_fsck "$T_TMP/s.img"
	echo "$name: $want, warned of $warned"
}
setid "no mapping" "04755 02755 02644 02775" 0
setid "identity map" "04755 02755 02644 02775" 0 --uid-map "$uid:$uid"
setid "--all-root" "0755 0755 02644 02775" 2 --all-root
t_verify --all-root "$T_TMP/s.img" "$s8"
setid "--uid-map to 0" "0755 0755 02644 02775" 2 --uid-map "$uid:0"
setid "--gid-map only" "0755 0755 02644 02775" 2 --gid-map "$gid:0"
printf '/bin/su f 4755 0 0\n' >"$T_TMP/dt"
setid "--all-root, su in a device table" "04755 0755 02644 02775" 1 --all-root --devtable "$T_TMP/dt"

# --- config.h first in every .c file (tools/code-shape.sh) ---
shape=$top_srcdir/tools/code-shape.sh
sh "$shape" "$top_srcdir/src" >"$T_TMP/shape" 2>&1 || :
! grep 'config\.h' "$T_TMP/shape" || t_fail "a .c file includes a header before config.h"
# the check catches populate/namei.c as it was (lib/ftype.h, which reads
# <sys/stat.h>, before config.h)
mkdir -p "$T_TMP/shape-src/populate"
printf '#include "lib/ftype.h"\n#include "config.h"\n' >"$T_TMP/shape-src/populate/namei.c"
sh "$shape" "$T_TMP/shape-src" >"$T_TMP/shape" 2>&1 &&
	t_fail "code-shape.sh took a header before config.h"
grep -q 'populate/namei.c: includes "lib/ftype.h" before "config.h"' "$T_TMP/shape" ||
	t_fail "code-shape.sh: $(cat "$T_TMP/shape")"
echo "config.h first: checked by tools/code-shape.sh"

# --- --file-contexts: a readable regular file only ---
cp "$T_TMP/base.img" "$T_TMP/fc.img"
if "$ORLOV_POPULATE" --dry-run --file-contexts /dev/null "$T_TMP/fc.img" "$src" 2>&1 |
	grep -q 'no libselinux'; then
	echo "--file-contexts: skipped (built without libselinux)"
	have_selinux=0
else
	have_selinux=1
	mkdir "$T_TMP/fcdir"
	mkfifo "$T_TMP/fcfifo" || t_fail "mkfifo"
	for fc in "$T_TMP/fcdir" /dev/null "$T_TMP/fcfifo" "$T_TMP/fcnone"; do
		cp "$T_TMP/base.img" "$T_TMP/fc.img"
		timeout 60 "$ORLOV_POPULATE" -q --file-contexts "$fc" "$T_TMP/fc.img" "$src" 2>"$T_TMP/err"
		rc=$?
		[ $rc = 2 ] || { cat "$T_TMP/err" >&2; t_fail "--file-contexts $fc: exit $rc, want 2"; }
		[ "$(wc -l <"$T_TMP/err")" = 1 ] && grep -q -- "--file-contexts $fc" "$T_TMP/err" ||
			t_fail "--file-contexts $fc: $(cat "$T_TMP/err")"
		cmp -s "$T_TMP/base.img" "$T_TMP/fc.img" || t_fail "--file-contexts $fc: the image changed"
		echo "--file-contexts $fc: $(cat "$T_TMP/err")"
	done
	timeout 60 "$ORLOV_LAYOUT" verify --file-contexts "$T_TMP/fcdir" "$T_TMP/base.img" "$src" \
		>"$T_TMP/err" 2>&1 && t_fail "verify --file-contexts DIRECTORY succeeded"
	grep -q "Is a directory" "$T_TMP/err" || t_fail "verify --file-contexts DIRECTORY: $(cat "$T_TMP/err")"
fi

# --- the library prints nothing: mke2fs's and libselinux's words come
# back in the result (tests/libapi prints it on stdout), and the command
# line prints them in its one line ---
"$api" -o create=1K "$T_TMP/m.img" "$src" >"$T_TMP/out" 2>"$T_TMP/err" &&
	t_fail "create=1K succeeded"
[ ! -s "$T_TMP/err" ] || t_fail "mke2fs through the library printed: $(cat "$T_TMP/err")"
grep -q "^orlov-populate: mke2fs failed while making a filesystem with mke2fs in $T_TMP/m.img: .*Not enough space" "$T_TMP/out" ||
	t_fail "mke2fs's words not in the library's result: $(cat "$T_TMP/out")"
"$ORLOV_POPULATE" --create 1K "$T_TMP/m.img" "$src" >/dev/null 2>"$T_TMP/err" &&
	t_fail "--create 1K succeeded"
[ "$(wc -l <"$T_TMP/err")" = 1 ] &&
	grep -q "^orlov-populate: mke2fs failed while making a filesystem with mke2fs in $T_TMP/m.img: .*Not enough space" "$T_TMP/err" ||
	t_fail "--create 1K: $(cat "$T_TMP/err")"
echo "mke2fs's words: $(cat "$T_TMP/err")"
if [ $have_selinux = 1 ]; then
	printf '/foo bad bad bad bad\n' >"$T_TMP/bad.fc"
	"$api" -o create=8M -a --file-contexts -a "$T_TMP/bad.fc" "$T_TMP/l.img" "$src" \
		>"$T_TMP/out" 2>"$T_TMP/err" && t_fail "a bad file_contexts through the library succeeded"
	[ ! -s "$T_TMP/err" ] || t_fail "libselinux through the library printed: $(cat "$T_TMP/err")"
	grep -q "^orlov-populate: .* while reading --file-contexts $T_TMP/bad.fc: .*line 1 has invalid" "$T_TMP/out" ||
		t_fail "libselinux's words not in the library's result: $(cat "$T_TMP/out")"
	"$ORLOV_POPULATE" --create 8M --file-contexts "$T_TMP/bad.fc" "$T_TMP/l.img" "$src" \
		>/dev/null 2>"$T_TMP/err" && t_fail "a bad file_contexts succeeded"
	[ "$(wc -l <"$T_TMP/err")" = 1 ] && [ "$(grep -o 'line 1 has invalid' "$T_TMP/err" | wc -l)" = 1 ] ||
		t_fail "a bad file_contexts: $(cat "$T_TMP/err")"
	echo "libselinux's words: $(cat "$T_TMP/err")"
fi
