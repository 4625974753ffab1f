#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The whole test suite: dependencies, a -Werror build and make check (unit,
# golden, round-trip, error, fault, damaged-image, layout and QEMU kernel
# tests), make fuzz, the same tests once more built with AddressSanitizer
# and UBSan (without QEMU), make distcheck, and the Debian package built,
# installed, tried and removed (tools/deb.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
t_start=$(date +%s)
t_last=$t_start
phase() { # phase NAME: the time since the last phase, into the log
	now=$(date +%s)
	echo "check.sh: $1: $((now - t_last)) s (total $((now - t_start)) s)" >&2
	t_last=$now
}
"$top/tools/deps.sh"
phase deps
cd "$top"
b=$("$top/tools/build.sh" _build)
status=0
phase build
make -C "$b" -s check VERBOSE=1 || status=1
phase check
# libFuzzer on images (tests/fuzz), a fixed number of inputs.
make -C "$b" -s fuzz || status=1
phase fuzz
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g -O1"
a=$("$top/tools/build.sh" _build-asan CFLAGS="$san" LDFLAGS="$san")
# t-faults.sh tries every fifth fault point in these two passes, not all.
ORLOV_SKIP_KERNEL_TESTS=1 T_FAULT_STRIDE=5 ASAN_OPTIONS=detect_leaks=1 \
	make -C "$a" -s check VERBOSE=1 || status=1
phase asan-check
ORLOV_SKIP_KERNEL_TESTS=1 T_FAULT_STRIDE=5 make -C "$b" -s distcheck >/dev/null ||
	{ echo "make distcheck failed" >&2; status=1; }
phase distcheck
# dpkg-buildpackage on the committed tree, dpkg -i, a smoke run, dpkg -r.
"$top/tools/deb.sh" || { echo "Debian package build or install failed" >&2; status=1; }
phase deb
# One plain closing line over both runs, from automake's summaries.
cat "$b/test-suite.log" "$a/test-suite.log" 2>/dev/null | awk '
	/^# PASS:/ { p += $3 } /^# SKIP:/ { s += $3 }
	/^# (FAIL|ERROR|XPASS):/ { f += $3 }
	END { printf "%d passed, %d failed, %d skipped\n", p, f + (st ? 1 : 0), s }' st=$status
exit $status
