# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the tests/kernel/ scripts (sourced, not executed).
#
# Environment honoured:
#   srcdir, top_srcdir, top_builddir   as set by automake (fallbacks below)
#   ORLOV_CACHE       cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate)
#   REPLAY            replay binary (default: build dir, else built on demand)
#   ORLOV_POPULATE    the tool (default $top_builddir/src/orlov-populate)
#   ORLOV_LAYOUT      the layout differ (default $top_builddir/src/orlov-layout)
#   ORLOV_KERNEL      a bzImage to use instead of kernel/build-kernel.sh's
#   ORLOV_KERNEL_MODE stock (default) or patched
#   ORLOV_SKIP_KERNEL_TESTS=1  skip everything that boots QEMU (exit 77)

export LC_ALL=C TZ=UTC
export E2FSPROGS_FAKE_TIME=${E2FSPROGS_FAKE_TIME:-1700000000}

kt_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$kt_here/../.." && pwd)}
top_srcdir=$(cd "$top_srcdir" && pwd)
top_builddir=${top_builddir:-$top_srcdir}
top_builddir=$(cd "$top_builddir" && pwd)
ORLOV_CACHE=${ORLOV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate}
export ORLOV_CACHE

kt_log() { echo "${0##*/}: $*" >&2; }
kt_die() { echo "${0##*/}: error: $*" >&2; exit 1; }
kt_skip() { echo "${0##*/}: skipped: $*"; exit 77; }

# install Debian packages if a command is missing (root or sudo only)
kt_need() { # kt_need CMD PKG [CMD PKG]...
	local missing=()
	while [ $# -ge 2 ]; do
		command -v "$1" >/dev/null 2>&1 || missing+=("$2")
		shift 2
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	local sudo=
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || return 1
		sudo=sudo
	fi
	kt_log "installing ${missing[*]}"
	$sudo apt-get update -q >&2 &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
			"${missing[@]}" >&2
}

# install Debian packages unconditionally (root or sudo only)
kt_install() {
	local sudo=
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null 2>&1 || return 1
		sudo=sudo
	fi
	kt_log "installing $*"
	$sudo apt-get update -q >&2 &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "$@" >&2
}

# QEMU present (installing it when we can)?  Skip (77) otherwise.
kt_require_qemu() {
	[ "${ORLOV_SKIP_KERNEL_TESTS:-0}" = 0 ] ||
		kt_skip "ORLOV_SKIP_KERNEL_TESTS is set"
	kt_need qemu-system-x86_64 qemu-system-x86 || true
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
		kt_skip "qemu-system-x86_64 not available"
}

# path of a static replay binary, building it if needed
kt_replay() {
	if [ -n "${REPLAY:-}" ]; then
		[ -x "$REPLAY" ] || kt_die "REPLAY=$REPLAY is not executable"
		echo "$REPLAY"; return
	fi
	if [ -x "$top_builddir/tests/kernel/replay" ] &&
		[ "$top_builddir/tests/kernel/replay" -nt "$kt_here/replay.c" ] &&
		file_is_static "$top_builddir/tests/kernel/replay"; then
		echo "$top_builddir/tests/kernel/replay"; return
	fi
	local h out
	h=$(sha256sum "$kt_here/replay.c" | cut -c1-16)
	out=$ORLOV_CACHE/replay-$h
	if [ ! -x "$out" ]; then
		mkdir -p "$ORLOV_CACHE"
		kt_need gcc gcc >&2 || true
		gcc -static -O2 -Wall -o "$out.tmp.$$" "$kt_here/replay.c" >&2 ||
			kt_die "cannot build replay (needs gcc + libc6-dev static libc)"
		mv -f "$out.tmp.$$" "$out"
	fi
	echo "$out"
}

# path of the gentree generator, building it if needed
kt_gentree() {
	if [ -n "${GENTREE:-}" ]; then
		echo "$GENTREE"; return
	fi
	if [ -x "$top_builddir/tests/kernel/gentree" ] &&
		[ "$top_builddir/tests/kernel/gentree" -nt "$kt_here/gentree.c" ]; then
		echo "$top_builddir/tests/kernel/gentree"; return
	fi
	local h out
	h=$(sha256sum "$kt_here/gentree.c" | cut -c1-16)
	out=$ORLOV_CACHE/gentree-$h
	if [ ! -x "$out" ]; then
		mkdir -p "$ORLOV_CACHE"
		gcc -O2 -Wall -o "$out.tmp.$$" "$kt_here/gentree.c" >&2 ||
			kt_die "cannot build gentree"
		mv -f "$out.tmp.$$" "$out"
	fi
	echo "$out"
}

file_is_static() {
	# a static binary has no PT_INTERP; readelf may be missing, so be lax
	if command -v readelf >/dev/null 2>&1; then
		! readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'
	else
		return 0
	fi
}

# path of the guest kernel
kt_kernel() {
	if [ -n "${ORLOV_KERNEL:-}" ]; then
		[ -f "$ORLOV_KERNEL" ] || kt_die "ORLOV_KERNEL=$ORLOV_KERNEL not found"
		echo "$ORLOV_KERNEL"; return
	fi
	"$top_srcdir/kernel/build-kernel.sh" "--${ORLOV_KERNEL_MODE:-stock}" ||
		kt_die "kernel build failed"
}

kt_tmpdir() {
	local d
	d=$(mktemp -d "${TMPDIR:-/tmp}/orlov-kt.XXXXXX") || kt_die "mktemp failed"
	echo "$d"
}
