#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Is the release tarball complete?  Every file git tracks must be in the
# newest orlov-populate-*.tar.gz of BUILD (make dist or make distcheck
# leaves it there), but for the few that only serve the repository itself
# (CI's entry point, .gitignore files, m4/.keep).  This is what makes a short test list
# under make distcheck enough: the tests it leaves out read nothing that
# this check does not prove shipped.
#   tools/dist-files.sh BUILD
# Prints one line; exit 0 when complete, 1 when files are missing, 77 when
# there is no git checkout to compare with.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# = 1 ] || { echo "usage: tools/dist-files.sh BUILD" >&2; exit 2; }
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
	{ echo "dist-files.sh: skipped: $top is no git checkout"; exit 77; }
tarball=$(ls -t "$1"/orlov-populate-*.tar.gz 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "dist-files.sh: FAIL: no orlov-populate-*.tar.gz in $1 (make dist)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dist-files.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -tzf "$tarball" | sed -n 's|^[^/]*/||p' | grep -v '/$' | sort -u >"$tmp/shipped"
git -C "$top" ls-files | grep -Ev '^\.ci/|(^|/)\.(gitignore|keep)$' | sort -u >"$tmp/tracked"
comm -23 "$tmp/tracked" "$tmp/shipped" >"$tmp/missing"
if [ -s "$tmp/missing" ]; then
	echo "dist-files.sh: FAIL: $(wc -l <"$tmp/missing") tracked file(s) not in $(basename "$tarball") (add them to EXTRA_DIST):" >&2
	sed 's/^/  /' "$tmp/missing" >&2
	exit 1
fi
echo "dist-files.sh: all $(wc -l <"$tmp/tracked") tracked files are in $(basename "$tarball")"
