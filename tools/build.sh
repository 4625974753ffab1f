#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Configure and build in DIR (default _build) with extra configure args.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-_build}
[ $# -gt 0 ] && shift
cd "$top"
[ -x configure ] && [ configure -nt configure.ac ] && [ configure -nt Makefile.am ] ||
	autoreconf -fi >/dev/null 2>&1
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || "$top/configure" -q --enable-werror "$@"
make -s -j"$(nproc)" >/dev/null
echo "$top/$dir"
