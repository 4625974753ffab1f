#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# liborlov from several threads at once (tests/libthreads.c): two images
# made with --create (different sizes, block sizes, a directory and a
# tarball), one written --atomic, two calls refused (an option conflict,
# a missing device table), each in its own thread over and over; every
# answer the one the call gave alone, and a bystander thread's files get
# the umask's mode.  When the library parsed its options with getopt,
# one thread's words reached another's getopt ("No such file or
# directory while reading device table 64M").
. "$(dirname "$0")/lib.sh"

b=${top_builddir:-$PWD}
prog=$b/tests/libthreads
[ -x "$prog" ] || t_fail "no $prog"
command -v tar >/dev/null || t_skip "no tar"
"$ORLOV_POPULATE" --help=all | grep -q "archive SOURCE" || t_skip "built --without-libarchive"

src=$T_TMP/src
t_sample_tree "$src"
t_pin_times "$src"
(cd "$src" && tar --format=posix -cf "$T_TMP/src.tar" .) || t_fail "tar"
t_mkimage "$T_TMP/base.img" 8M -t ext2 -b 1024
mkdir "$T_TMP/w"
"$prog" "$T_TMP/w" "$src" "$T_TMP/src.tar" "$T_TMP/base.img" "${LIBTHREADS_SECONDS:-8}" \
	>"$T_TMP/out" 2>&1 || { cat "$T_TMP/out" >&2; t_fail "libthreads"; }
cat "$T_TMP/out"
