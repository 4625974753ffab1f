#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# source-tree.sh - the pristine tree of Debian's linux-source-VER, unpacked
# once into the cache and shared by every kernel build (kernel/build-kernel.sh
# copies it) and by tests/kernel/t-patches.sh (reads it).
#
# Usage:
#   kernel/source-tree.sh VER        (6.1, 6.12, ...)
#
# Stdout: exactly one line, the absolute path of the tree.  Nothing may
# write into it: callers copy it (cp -a) before building or patching.
#
# Cache: ${ORLOV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate}/src-VER,
# stamped with the size and mtime of /usr/src/linux-source-VER.tar.xz, so a
# new upload of the package unpacks again.  Unpacking the tarball is most of
# a cold kernel build's time outside the compiler (xz is single-threaded):
# done once here, not once per build.  Concurrent callers serialise on an
# flock of the tree's .lock file.  The source package is installed with
# apt-get when missing (root or sudo needed only then).
set -euo pipefail
export LC_ALL=C TZ=UTC

[ $# = 1 ] && [[ $1 =~ ^[0-9]+\.[0-9]+$ ]] ||
	{ echo "usage: kernel/source-tree.sh VER" >&2; exit 2; }
ver=$1
log() { echo "source-tree: $*" >&2; }
die() { echo "source-tree: error: $*" >&2; exit 1; }

tarball=/usr/src/linux-source-$ver.tar.xz
if [ ! -f "$tarball" ]; then
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	log "installing linux-source-$ver"
	$sudo apt-get update -q >&2 || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
		"linux-source-$ver" >&2 || die "apt-get install linux-source-$ver failed"
fi
[ -f "$tarball" ] || die "$tarball not found after installing linux-source-$ver"
command -v xz >/dev/null || die "xz missing (apt-get install xz-utils)"

cache=${ORLOV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate}
dir=$cache/src-$ver
mkdir -p "$cache"
stamp=$(stat -c '%s %Y' "$tarball")
fresh() { [ -f "$dir/.orlov-pristine" ] && [ "$(cat "$dir/.orlov-pristine")" = "$stamp" ]; }
if fresh; then echo "$dir"; exit 0; fi

exec 9>"$dir.lock"
flock 9
if ! fresh; then
	t0=$(date +%s)
	log "unpacking $tarball into $dir"
	rm -rf "$dir" "$dir.new"
	mkdir -p "$dir.new"
	tar -xJf "$tarball" -C "$dir.new" --strip-components=1 ||
		{ rm -rf "$dir.new"; die "unpacking $tarball failed"; }
	[ -f "$dir.new/Makefile" ] || { rm -rf "$dir.new"; die "no kernel tree in $tarball"; }
	echo "$stamp" >"$dir.new/.orlov-pristine"
	mv "$dir.new" "$dir"
	log "unpacked in $(( $(date +%s) - t0 ))s"
fi
echo "$dir"
