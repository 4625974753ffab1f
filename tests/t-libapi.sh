#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# liborlov (include/orlov/orlov.h) called by tests/libapi, a program built
# as one outside the project is: the image it makes from a directory and
# from a tarball equal byte for byte to orlov-populate's with the same
# options; its errors the command line's (code, what, path) with the
# image untouched; nothing printed; only orlov_* exported, SONAME
# liborlov.so.0; and the library, header and orlov.pc as make install puts
# them, found by pkg-config, compiled against and run.
. "$(dirname "$0")/lib.sh"

b=${top_builddir:-$PWD}
api=$b/tests/libapi
so=$b/src/.libs/liborlov.so.0
[ -x "$api" ] || t_fail "no $api"
[ -f "$so" ] || t_fail "no $so"
command -v tar >/dev/null || t_skip "no tar"
"$ORLOV_POPULATE" --help=all | grep -q "archive SOURCE" || t_skip "built --without-libarchive"
export SOURCE_DATE_EPOCH=1700000000

# only the API is exported; the program is linked with the library
syms=$(nm -D --defined-only "$so" | awk '{ print $3 }' | sort | tr '\n' ' ')
[ "$syms" = "orlov_options_init orlov_populate orlov_result_free orlov_strerror orlov_version " ] ||
	t_fail "liborlov.so.0 exports: $syms"
readelf -d "$so" | grep -q 'SONAME.*\[liborlov\.so\.0\]' || t_fail "SONAME is not liborlov.so.0"
readelf -d "$api" | grep -q 'NEEDED.*\[liborlov\.so\.0\]' || t_fail "tests/libapi is not linked with liborlov.so.0"

src=$T_TMP/src
t_sample_tree "$src"
t_pin_times "$src"
(cd "$src" && tar --format=posix -cf "$T_TMP/src.tar" .) || t_fail "tar"

# same (CLI OPTIONS) (LIBAPI OPTIONS) NAME SOURCE [BASE]: both runs, on a
# copy of BASE or --create, give the same image; the library prints nothing
same() {
	cli=$1 lib=$2 name=$3 from=$4 base=${5:-}
	rm -f "$T_TMP/cli.img" "$T_TMP/lib.img"
	if [ -n "$base" ]; then
		cp "$base" "$T_TMP/cli.img" && cp "$base" "$T_TMP/lib.img"
	fi
	# shellcheck disable=SC2086
	"$ORLOV_POPULATE" -q $cli "$T_TMP/cli.img" "$from" ||
		t_fail "$name: orlov-populate $cli"
	# shellcheck disable=SC2086
	"$api" $lib "$T_TMP/lib.img" "$from" >"$T_TMP/out" 2>&1 ||
		{ cat "$T_TMP/out" >&2; t_fail "$name: libapi $lib"; }
	[ ! -s "$T_TMP/out" ] || { cat "$T_TMP/out" >&2; t_fail "$name: the library printed"; }
	cmp -s "$T_TMP/cli.img" "$T_TMP/lib.img" ||
		t_fail "$name: the library's image differs from orlov-populate's"
	t_fsck "$T_TMP/lib.img"
	echo "$name: the same image"
}

# a directory: --create through members, an option through args, -v
# ignored, SOURCE_DATE_EPOCH from the options over the environment's
SOURCE_DATE_EPOCH=1800000000 same "--create 8M --fs-type ext3 --block-size 1024 --uid-map 0:100 --topdir random --seed 7" \
	"-o create=8M -o fs_type=ext3 -o block_size=1024 -o uid_map=0:100 -a --topdir -a random -a --seed=7 -a -v -e 1800000000" \
	"directory, --create" "$src"
# a tarball into an existing ext4 image, the ext4 driver
t_mkimage "$T_TMP/base.img" 16M -t ext4 -b 4096 -I 256
same "--driver ext4 --kernel 6.12" "-o driver=ext4 -o kernel=6.12 -a --json" \
	"tarball, ext4" "$T_TMP/src.tar" "$T_TMP/base.img"
t_verify "$T_TMP/lib.img" "$src"
# the summary's figures
cp "$T_TMP/base.img" "$T_TMP/cli.img" && cp "$T_TMP/base.img" "$T_TMP/lib.img"
want=$("$ORLOV_POPULATE" "$T_TMP/cli.img" "$src" | sed 's/, [0-9.]* seconds$//')
got=$("$api" -s "$T_TMP/lib.img" "$src")
[ "$got" = "$want" ] || t_fail "result: '$got', orlov-populate said '$want'"
echo "result figures as the summary's: $got"

# errct NAME CLI-OPTIONS LIBAPI-OPTIONS SOURCE: both fail with the same
# words and code (--json's), and the image stays as it was
errct() {
	name=$1 cli=$2 lib=$3 from=$4
	cp "$T_TMP/base.img" "$T_TMP/cli.img" && cp "$T_TMP/base.img" "$T_TMP/lib.img"
	# shellcheck disable=SC2086
	"$ORLOV_POPULATE" $cli "$T_TMP/cli.img" "$from" 2>"$T_TMP/cli.err" && t_fail "$name: orlov-populate succeeded"
	# shellcheck disable=SC2086
	code=$("$ORLOV_POPULATE" --json $cli "$T_TMP/cli.img" "$from" 2>/dev/null |
		sed -n 's/.*"code": \([0-9-]*\).*/\1/p')
	# shellcheck disable=SC2086
	"$api" $lib "$T_TMP/lib.img" "$from" >"$T_TMP/lib.err" 2>&1 && t_fail "$name: the library succeeded"
	head -n 1 "$T_TMP/cli.err" | sed 's/ (\(.*\)); try --help$//' >"$T_TMP/cli.line"
	head -n 1 "$T_TMP/lib.err" | sed 's/ while parsing the options .*//' >"$T_TMP/lib.line"
	cmp -s "$T_TMP/cli.line" "$T_TMP/lib.line" ||
		t_fail "$name: the library said '$(cat "$T_TMP/lib.line")', orlov-populate '$(cat "$T_TMP/cli.line")'"
	# --json's code is positive: a com_err table's, above 2^31, too
	lcode=$(sed -n 's/^code \(-*[0-9][0-9]*\)$/\1/p' "$T_TMP/lib.err")
	[ -n "$lcode" ] && [ $((lcode & 0xFFFFFFFF)) = "$code" ] ||
		t_fail "$name: not code $code: $(cat "$T_TMP/lib.err")"
	cmp -s "$T_TMP/base.img" "$T_TMP/lib.img" || t_fail "$name: the image changed"
	echo "$name: $(head -n 1 "$T_TMP/lib.line") (code $code)"
}
errct "no source" "" "" "$T_TMP/missing"
errct "no target" "-t /no/such" "-o target=/no/such" "$src"
errct "conflict" "--atomic --in-place" "-f atomic -f in_place" "$src"
grep -qx 'usage: --atomic writes a copy, --in-place the image itself: give one' "$T_TMP/lib.err" ||
	t_fail "conflict: usage message: $(cat "$T_TMP/lib.err")"
"$api" -a --help "$T_TMP/lib.img" "$src" >"$T_TMP/out" 2>&1 && t_fail "--help through args was taken"
grep -q '^usage: --help and --version print' "$T_TMP/out" || t_fail "--help: $(cat "$T_TMP/out")"
# twice in one process, the first stopped inside a cluster of short
# options whose words the caller then freed: nothing of the first parse
# reaches the second (getopt's state, when the library used it, went on
# in the freed cluster: "-" and garbage)
"$api" -r -a -qxt/no/such "$T_TMP/lib.img" "$src" >"$T_TMP/out" 2>&1 && t_fail "-qx was taken"
grep -qx 'usage: unknown option -x' "$T_TMP/out" || t_fail "-qx twice: $(cat "$T_TMP/out")"
# args read without getopt: options only, their arguments as the
# command line takes them
! nm -D --undefined-only "$so" | grep -q getopt || t_fail "liborlov.so.0 calls getopt"
# argswrong WANT WORD...: refused with usage WANT, the image untouched
argswrong() {
	want=$1
	shift
	set -- $(printf -- '-a %s ' "$@")
	cp "$T_TMP/base.img" "$T_TMP/lib.img"
	"$api" "$@" "$T_TMP/lib.img" "$src" >"$T_TMP/out" 2>&1 && t_fail "args $*: taken"
	grep -qxF "usage: $want" "$T_TMP/out" || t_fail "args $*: $(cat "$T_TMP/out")"
	cmp -s "$T_TMP/base.img" "$T_TMP/lib.img" || t_fail "args $*: the image changed"
	echo "args $*: $want"
}
argswrong "args: extra: not an option (IMAGE and SOURCE are orlov_populate()'s arguments)" extra
argswrong "args: --: not an option (IMAGE and SOURCE are orlov_populate()'s arguments)" -- --json
argswrong "unknown option --no-such" --no-such
argswrong "unknown option --d" --d
argswrong "unknown option --json=1" --json=1
argswrong "--target needs an argument" --target
argswrong "-t needs an argument" -qt
argswrong "--policy takes orlov or oldalloc" --pol=x
argswrong "--topdir takes hash or random" -v --topdir x
argswrong "--verbose and --quiet contradict each other: give one" -v --quiet
same "--target // --cpus 2 --no-fsck" "-a -t// -a --cp -a 2 -a --no-f" \
	"args: attached, abbreviated" "$src" "$T_TMP/base.img"
# an option with no member yet, through args: --casefold marks a
# directory +F (its names hashed folded), as the command line does
t_mkimage "$T_TMP/cf.img" 16M -t ext4 -b 4096 -I 256 -O casefold
same "--casefold var" "-a --casefold -a var" "args: --casefold" "$src" "$T_TMP/cf.img"
cfl=$(debugfs -R "stat /var/log" "$T_TMP/lib.img" 2>/dev/null |
	sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
[ $(( ${cfl:-0} & 0x40000000 )) != 0 ] ||
	t_fail "args: --casefold: /var/log has flags ${cfl:-none}, not casefold"

# installed: make install's library, header and orlov.pc, found through
# pkg-config, a program compiled against them
command -v pkg-config >/dev/null || t_skip "no pkg-config (the build-tree checks passed)"
inst=$T_TMP/inst
${MAKE:-make} -s -C "$b" install-libLTLIBRARIES install-orlovincludeHEADERS \
	install-nodist_orlovincludeHEADERS install-pkgconfigDATA DESTDIR="$inst" \
	>"$T_TMP/install.log" 2>&1 || { cat "$T_TMP/install.log" >&2; t_fail "make install"; }
pc=$(find "$inst" -name orlov.pc)
[ -n "$pc" ] || t_fail "no orlov.pc installed"
libdir=$(dirname "$(dirname "$pc")")
[ -f "$libdir/liborlov.so.0" ] && [ -f "$libdir/liborlov.so" ] || t_fail "no liborlov.so.0 / .so in $libdir"
export PKG_CONFIG_PATH=${pc%/*}
cflags=$(pkg-config --define-prefix --cflags orlov) && libs=$(pkg-config --define-prefix --libs orlov) ||
	t_fail "pkg-config --cflags --libs orlov"
case $libs in *-lorlov*) ;; *) t_fail "pkg-config --libs orlov: $libs" ;; esac
mk() { sed -n "s/^$1 = //p" "$b/Makefile"; }
# shellcheck disable=SC2046,SC2086
$(mk CC) $(mk CFLAGS) -DLIBAPI_INSTALLED $cflags -o "$T_TMP/libapi" \
	"$top_srcdir/tests/libapi.c" $(mk LDFLAGS) $libs 2>"$T_TMP/cc.log" ||
	{ cat "$T_TMP/cc.log" >&2; t_fail "compiling tests/libapi.c against the installed header"; }
export LD_LIBRARY_PATH=$libdir
api=$T_TMP/libapi
readelf -d "$api" | grep -q 'NEEDED.*\[liborlov\.so\.0\]' || t_fail "the installed-style libapi is not linked with liborlov.so.0"
same "--driver ext4" "-o driver=ext4" "installed, tarball" "$T_TMP/src.tar" "$T_TMP/base.img"
errct "installed, conflict" "--atomic --in-place" "-f atomic -f in_place" "$src"
echo "installed: pkg-config $cflags $libs"
