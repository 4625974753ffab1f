#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The QEMU tests' cache fill: every kernel they boot, built (or, for
# Debian's own, downloaded) once into ORLOV_CACHE (default
# ~/.cache/orlov-populate), so that no test pays for it.
#
# Usage: tools/kernels.sh [--missing | --fill]
#   --missing  build nothing: list the kernels not yet in the cache, one a
#              line ("full" or "patched", then which); nothing when warm
#   --fill     (default) build and fetch what is missing, in order, with a
#              progress line every few minutes; a line per kernel at the end
#
# tools/check.sh runs --fill in the background at low priority while the
# host tests run, and starts the QEMU tests when it has finished.  Which
# test boots what (tests/kernel/):
#   6.1 UP stock      crosscheck.sh, oldalloc, guest-verify, journal replay
#   6.1 UP patched    trace-equal, toplevel, guest-verify-patched, patches-guest
#   6.1 SMP stock     t-crosscheck-smp.sh
#   6.1 SMP patched   t-trace-equal-smp.sh
#   6.12 UP stock     the base the patched 6.12 build starts from
#   6.12 UP patched   t-kernel-612.sh
#   Debian 6.1, 6.12  t-crosscheck-debian.sh, t-crosscheck-debian612.sh
#   Debian arm64 6.1, 6.12  t-crosscheck-arm64.sh (with busybox-static:arm64
#                     and the cross-built replayer, lib.sh)
# A patched kernel is built on the finished stock build of the same source
# and configuration (kernel/build-kernel.sh), so three of the six compile
# the whole kernel and three only what the patches touch.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:---fill}
builds="--stock
--patched
--stock --smp
--patched --smp
--stock --source 6.12
--patched --source 6.12"

case $mode in
--missing)
	printf '%s\n' "$builds" | while IFS= read -r b; do
		# shellcheck disable=SC2086
		"$top/kernel/build-kernel.sh" --check $b >/dev/null && continue
		case $b in *--patched*) kind=patched ;; *) kind=full ;; esac
		echo "$kind $b"
	done
	exit 0 ;;
--fill) ;;
*) echo "usage: tools/kernels.sh [--missing | --fill]" >&2; exit 2 ;;
esac

log() { echo "kernels.sh: $*" >&2; }
status=0
summary=
fill() { # fill WHAT CMD...: run CMD, keep its time for the summary
	what=$1
	shift
	t0=$(date +%s)
	if "$@" >/dev/null; then
		summary="$summary  $what: $(( $(date +%s) - t0 )) s
"
	else
		summary="$summary  $what: FAILED after $(( $(date +%s) - t0 )) s
"
		status=1
	fi
}
t_all=$(date +%s)
list=$(printf '%s\n' "$builds")
IFS='
'
for b in $list; do
	IFS=' '
	# shellcheck disable=SC2086
	fill "build-kernel.sh $b" "$top/kernel/build-kernel.sh" --progress 180 $b
done
IFS=' '
for line in 6.1 6.12; do
	fill "Debian's $line kernel" "$top/kernel/debian-kernel.sh" --line $line
	fill "Debian's arm64 $line kernel" "$top/kernel/debian-kernel.sh" --arch arm64 --line $line
done
log "the kernels took $(( $(date +%s) - t_all )) s:"
printf '%s' "$summary" >&2
exit $status
