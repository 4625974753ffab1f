#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The whole test suite: dependencies, a -Werror build, the shape of src/
# (tools/code-shape.sh), make check (unit, golden, round-trip, error, fault,
# damaged-image, layout and QEMU kernel tests), make fuzz, the same tests
# once more built with AddressSanitizer and UBSan (without QEMU), make
# distcheck, and the Debian package built, installed, tried and removed
# (tools/deb.sh).
#
# Order: the host's own work first (build, make check of every test that
# boots no kernel, fuzz, sanitizers, distcheck, package), while
# tools/kernels.sh builds the QEMU tests' kernels into the cache in the
# background at the lowest priority; then the QEMU tests, once every kernel
# is there.  On a warm cache the fill takes seconds; on a new machine it is
# most of the run (doc/testing.md, "The test suite and its time").
#
# Tests run two at a time (make -jN, N = CPUs), longest first.  Every
# test's wall time goes to BUILD/test-times, every phase's to
# _build/check-times; the slowest tests are listed at the end.
# Budget: the suite's own time, which is the wall time less the one-time
# cache fills (installing packages, and the time spent waiting for the
# kernels with nothing else to run), warns past CHECK_WARN_MIN minutes
# (default 40) and fails past CHECK_FAIL_MIN (default 75), so that the
# tests cannot drift toward CI's limit of 90 minutes unnoticed.  The
# kernels, built at nice 19, take little from the host tests beside them.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
warn_min=${CHECK_WARN_MIN:-40}
fail_min=${CHECK_FAIL_MIN:-75}
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -ge 2 ] || jobs=2
t_start=$(date +%s)
t_last=$t_start
phases=
phase() { # phase NAME: the time since the last phase
	now=$(date +%s)
	echo "check.sh: $1: $((now - t_last)) s (total $((now - t_start)) s)" >&2
	phases="$phases$1 $((now - t_last))
"
	t_last=$now
}
"$top/tools/deps.sh"
phase deps
fill_s=$(( $(date +%s) - t_start ))
cd "$top"
# kill_tree PID: PID and every process under it, each stopped before its
# children are listed, so that none starts another meanwhile
kill_tree() {
	kill -STOP "$1" 2>/dev/null || return 0
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		kill_tree "$c"
	done
	kill -TERM "$1" 2>/dev/null
	kill -CONT "$1" 2>/dev/null || :
}
# the QEMU tests' kernels: built once per machine, in the background
kfill_pid=
if [ "${ORLOV_SKIP_KERNEL_TESTS:-0}" = 0 ]; then
	missing=$("$top/tools/kernels.sh" --missing)
	if [ -n "$missing" ]; then
		nfull=$(printf '%s\n' "$missing" | grep -c '^full' || :)
		echo "check.sh: the first run on this machine builds $(printf '%s\n' "$missing" | wc -l) kernels ($nfull in full) into ${ORLOV_CACHE:-~/.cache/orlov-populate}: about 17 min of both cores, at the lowest priority beside the host tests, then the QEMU tests wait for what is left (doc/testing.md)" >&2
	fi
	# In check.sh's own session: a session of its own (setsid) would be
	# an autogroup of its own, which the scheduler gives an equal share
	# of the CPU whatever its nice, and the host tests beside it ran at
	# half speed.  So no process group of its own either: a check.sh
	# stopped early stops the whole tree under it (kill_tree).
	( nice -n 19 "$top/tools/kernels.sh" --fill 2>&1 |
		sed -u 's/^/check.sh: [kernels] /' >&2 ) &
	kfill_pid=$!
	trap '[ -z "$kfill_pid" ] || kill_tree "$kfill_pid"' EXIT
	# a signal ends the shell without its EXIT trap: end through exit
	trap 'exit 130' INT
	trap 'exit 143' TERM
fi
b=$("$top/tools/build.sh" _build)
status=0
# the shape of src/ (doc/architecture.md, "Code map"): file and function sizes, layers
"$top/tools/code-shape.sh" || status=1
# ... and the calls between its files: no cycle, none to a layer above
"$top/tools/call-graph.sh" "$b" || status=1
phase build
: >"$b/test-times"
make -C "$b" -s -j"$jobs" check VERBOSE=1 TESTS='$(HOST_CHECK)' || status=1
cp "$b/test-suite.log" "$b/test-suite-host.log" 2>/dev/null || :
phase check
# libFuzzer on images (tests/fuzz), a fixed number of inputs.
make -C "$b" -s fuzz || status=1
phase fuzz
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g -O1"
a=$("$top/tools/build.sh" _build-asan CFLAGS="$san" LDFLAGS="$san")
# t-faults.sh tries every fifth failure point and every 25th kill point (and
# the last 64 and 8 of them) in this
# pass (the plain pass tried all; tests/t-faults.sh says why that is enough).
# t-damaged.sh every second of its 400 damaged images: the plain pass tried
# all, and the fuzz target above ran the same readers under the sanitizers.
: >"$a/test-times"
ORLOV_SKIP_KERNEL_TESTS=1 T_FAULT_STRIDE=5 T_FAULT_KILL_STRIDE=25 T_FAULT_KILL_TAIL=8 T_DAMAGED_STRIDE=2 ASAN_OPTIONS=detect_leaks=1 \
	make -C "$a" -s -j"$jobs" check VERBOSE=1 || status=1
phase asan-check
# make distcheck builds the tarball out of tree, installs, uninstalls and
# runs DIST_TESTS (tests/Makefile.inc: those that read the shipped data) from
# it; the whole suite already ran twice above.  tools/dist-files.sh then
# proves the tarball holds every file the tree tracks, so that no test left
# out here could find a file missing.
ORLOV_SKIP_KERNEL_TESTS=1 make -C "$b" -s -j"$jobs" distcheck \
	TESTS='$(DIST_TESTS)' >/dev/null ||
	{ echo "make distcheck failed" >&2; status=1; }
"$top/tools/dist-files.sh" "$b" || status=1
phase distcheck
# dpkg-buildpackage on the committed tree, dpkg -i, a smoke run, dpkg -r.
"$top/tools/deb.sh" || { echo "Debian package build or install failed" >&2; status=1; }
phase deb
# The QEMU tests, once their kernels are in the cache.  The time waited
# here ran nothing but the one-time kernel builds: it is no test's time.
if [ -n "$kfill_pid" ]; then
	# kernels.sh's status is the pipeline's last command's (sed); a kernel
	# that failed to build fails its tests below, with the build's log
	wait "$kfill_pid" || :
	kfill_pid=
	phase kernels-wait
	fill_s=$((fill_s + $(echo "$phases" | awk '$1 == "kernels-wait" { print $2 }')))
fi
make -C "$b" -s -j"$jobs" check VERBOSE=1 TESTS='$(KERNEL_TESTS)' || status=1
cp "$b/test-suite.log" "$b/test-suite-kernel.log" 2>/dev/null || :
phase check-qemu

wall=$(( $(date +%s) - t_start ))
total=$((wall - fill_s))
printf '%s' "$phases" >"$b/check-times"
echo "wall $wall" >>"$b/check-times"
echo "cache-fill $fill_s" >>"$b/check-times"
echo "total $total" >>"$b/check-times"
echo "check.sh: the slowest tests (seconds; asan: the sanitizer pass):"
{ sed 's|^\([0-9.]*\) .*/\([^/]*/[^/]*\)$|\1 \2|' "$b/test-times"
  sed 's|^\([0-9.]*\) .*/\([^/]*/[^/]*\)$|\1 asan:\2|' "$a/test-times"; } 2>/dev/null |
	sort -rn | head -n 20 | sed 's/^/  /'
if [ "$total" -gt $((fail_min * 60)) ]; then
	echo "check.sh: FAIL: the tests took $((total / 60)) min, over their budget of $fail_min (CI stops at 90); the slowest tests are above" >&2
	status=1
elif [ "$total" -gt $((warn_min * 60)) ]; then
	echo "check.sh: warning: the tests took $((total / 60)) min, over $warn_min; the slowest tests are above" >&2
fi
echo "check.sh: the tests took $((total / 60)) min $((total % 60)) s; with the cache fills (packages, kernels: $((fill_s / 60)) min $((fill_s % 60)) s) $((wall / 60)) min $((wall % 60)) s in all (phases in $b/check-times)"
# One plain closing line over the three runs, from automake's summaries.
cat "$b/test-suite-host.log" "$b/test-suite-kernel.log" "$a/test-suite.log" 2>/dev/null | awk '
	/^# PASS:/ { p += $3 } /^# SKIP:/ { s += $3 }
	/^# (FAIL|ERROR|XPASS):/ { f += $3 }
	END { printf "%d passed, %d failed, %d skipped\n", p, f + (st ? 1 : 0), s }' st=$status
exit $status
