#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the Debian packages (debian/: orlov-populate, liborlov0,
# liborlov-dev) with dpkg-buildpackage -us -uc -b in a temporary copy of
# the committed tree (git archive HEAD; without .git, a copy of the tree
# less _build*, _dev and the like), check their contents, install them
# with dpkg -i, check what they installed, fill an image with the
# installed orlov-populate, check it with e2fsck -fn and orlov-layout
# verify, make the same image through the installed library (a program
# compiled with pkg-config's flags), and remove the packages again.  Needs dpkg-dev and debhelper (see
# tools/deps.sh) and root to install; as another user it stops after the
# contents check.  Prints one line; exit status 0 or 1.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
pkg=orlov-populate
pkgs="orlov-populate liborlov0 liborlov-dev"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/orlov-deb.XXXXXX")
installed=
cleanup() {
	if [ -n "$installed" ]; then
		# shellcheck disable=SC2086
		dpkg -r $pkgs >"$tmp/remove.log" 2>&1 ||
			{ echo "deb.sh: dpkg -r $pkgs failed" >&2; cat "$tmp/remove.log" >&2; }
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM
fail() {
	[ $# -gt 1 ] && [ -f "$2" ] && tail -n 40 "$2" >&2
	echo "deb.sh: FAIL: $1" >&2
	exit 1
}

for p in $pkgs; do
	if [ "$(id -u)" = 0 ] &&
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed'; then
		fail "$p is installed already; dpkg -r $p first (this test removes it at the end)"
	fi
done

# The source: what is committed (CI tests a clean clone), else the tree.
src="$tmp/src/$pkg"
mkdir -p "$src"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	from="HEAD $(git -C "$top" rev-parse --short HEAD)"
	git -C "$top" archive --format=tar HEAD | tar -x -C "$src"
else
	from="$top"
	tar -C "$top" --exclude='./_*' --exclude=./.git \
		--exclude=./autom4te.cache --exclude='./orlov-populate-*' \
		-cf - . | tar -x -C "$src"
fi
[ -x "$src/debian/rules" ] || fail "no debian/rules in $from"

# Build.  The .deb lands next to the source directory.
( cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b ) >"$tmp/build.log" 2>&1 ||
	fail "dpkg-buildpackage -us -uc -b failed (from $from)" "$tmp/build.log"
debs=
for p in $pkgs; do
	deb=
	for f in "$tmp/src/${p}_"*.deb; do [ -f "$f" ] && deb=$f; done
	[ -n "$deb" ] || fail "dpkg-buildpackage made no $p .deb" "$tmp/build.log"
	debs="$debs $deb"
done
deb=$(echo "$debs" | awk '{ print $1 }')
# Warnings from the build tools (dpkg-shlibdeps, dh_*) count as failures.
grep -E '^(dpkg-[a-z]+|dh_[a-z_-]+): (warning|error)' "$tmp/build.log" >&2 &&
	fail "warnings from the package build (above)"

# What the package holds, whoever runs this.
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's,^\.,,' >"$tmp/contents"
for f in /usr/bin/orlov-populate /usr/bin/orlov-layout /usr/bin/orlov-mkfs \
	/usr/lib/orlov-populate/mkfs/mkfs.ext4 /usr/lib/orlov-populate/mkfs/mke2fs \
	/usr/share/man/man8/orlov-mkfs.8.gz \
	/usr/share/man/man1/orlov-populate.1.gz \
	/usr/share/man/man1/orlov-layout.1.gz \
	/usr/share/bash-completion/completions/orlov-populate \
	/usr/share/bash-completion/completions/orlov-layout \
	/usr/share/doc/orlov-populate/copyright; do
	grep -qx "$f" "$tmp/contents" || fail "$f is not in $(basename "$deb")"
done
dpkg-deb -f "$deb" Depends | grep -q 'e2fsprogs' ||
	fail "$(basename "$deb") does not depend on e2fsprogs"
grep -q 'liborlov' "$tmp/contents" && fail "$(basename "$deb") holds the library"
# the library's two packages: the .so.0 alone; the header, .so and .pc
lib=$(echo "$debs" | awk '{ print $2 }') dev=$(echo "$debs" | awk '{ print $3 }')
dpkg-deb -c "$lib" | awk '{ print $6 }' | sed 's,^\.,,' >"$tmp/lib.contents"
dpkg-deb -c "$dev" | awk '{ print $6 }' | sed 's,^\.,,' >"$tmp/dev.contents"
grep -qx '/usr/lib/[^/]*/liborlov\.so\.0' "$tmp/lib.contents" ||
	fail "no liborlov.so.0 in $(basename "$lib")"
grep -q '\.so$\|include\|pkgconfig' "$tmp/lib.contents" &&
	fail "$(basename "$lib") holds development files"
for f in /usr/include/orlov/orlov.h /usr/include/orlov/orlov_err.h \
	'/usr/lib/[^/]*/liborlov\.so' '/usr/lib/[^/]*/pkgconfig/orlov\.pc'; do
	grep -qx "$f" "$tmp/dev.contents" || fail "$f is not in $(basename "$dev")"
done
dpkg-deb -f "$lib" Depends | grep -q 'libext2fs2' ||
	fail "$(basename "$lib") does not depend on libext2fs2"
dpkg-deb -f "$dev" Depends | grep -q "liborlov0 (= " ||
	fail "$(basename "$dev") does not depend on its liborlov0"

if [ "$(id -u)" != 0 ]; then
	echo "deb.sh: $pkgs built from $from, contents checked; not root: not installed"
	exit 0
fi

# Install, check, use.
installed=1
# shellcheck disable=SC2086
dpkg -i $debs >"$tmp/install.log" 2>&1 || fail "dpkg -i $pkgs failed" "$tmp/install.log"
ver=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
/usr/bin/orlov-populate --version | grep -qx "orlov-populate ${ver%%-*}" ||
	fail "/usr/bin/orlov-populate --version is not ${ver%%-*}"
/usr/bin/orlov-layout --version >/dev/null || fail "/usr/bin/orlov-layout --version failed"
# A docker-style dpkg path-exclude may keep man pages off the disk.
if ! grep -qs '^path-exclude[= ]*/usr/share/man' /etc/dpkg/dpkg.cfg /etc/dpkg/dpkg.cfg.d/*; then
	if command -v man >/dev/null; then
		man -w orlov-populate >/dev/null 2>&1 || fail "man -w orlov-populate finds no page"
		man -w orlov-layout >/dev/null 2>&1 || fail "man -w orlov-layout finds no page"
	else
		[ -f /usr/share/man/man1/orlov-populate.1.gz ] || fail "no orlov-populate.1.gz installed"
	fi
fi
comp=/usr/share/bash-completion/completions
{ [ -f "$comp/orlov-populate" ] && [ -f "$comp/orlov-layout" ]; } ||
	fail "the bash completion is not installed in $comp"
bash -c ". $comp/orlov-layout && complete -p orlov-populate orlov-layout" >/dev/null 2>&1 ||
	fail "$comp/orlov-layout does not set up completion for both programs"
# Two completions as bash asks for them: COMP_WORDS, COMP_CWORD, the function.
got=$(bash -c '. "$1"
	COMP_WORDS=(orlov-populate --create 8M --pol) COMP_CWORD=3
	COMP_LINE="${COMP_WORDS[*]}" COMP_POINT=${#COMP_LINE}
	_orlov_populate orlov-populate --pol 8M; echo "${COMPREPLY[*]}"
	COMP_WORDS=(orlov-layout "") COMP_CWORD=1 COMP_LINE="orlov-layout " COMP_POINT=13
	_orlov_layout orlov-layout "" orlov-layout; echo "${COMPREPLY[*]}"' sh "$comp/orlov-populate" 2>&1)
[ "$got" = "--policy
dump diff stats verify" ] || fail "bash completion gave: $(echo "$got" | tr '\n' '|')"

tree="$tmp/tree"
mkdir -p "$tree/etc/conf.d" "$tree/usr/bin" "$tree/var/empty"
echo hello >"$tree/etc/motd"
echo 'x=1' >"$tree/etc/conf.d/x"
head -c 100000 /usr/bin/orlov-populate >"$tree/usr/bin/blob"
ln -s ../etc/motd "$tree/usr/motd"
ln "$tree/etc/motd" "$tree/usr/motd.link"
/usr/bin/orlov-populate -q --create 8M "$tmp/x.img" "$tree" >"$tmp/run.log" 2>&1 ||
	fail "orlov-populate --create 8M x.img TREE failed" "$tmp/run.log"
e2fsck -fn "$tmp/x.img" >"$tmp/fsck.log" 2>&1 || fail "e2fsck -fn x.img found errors" "$tmp/fsck.log"
/usr/bin/orlov-layout verify "$tmp/x.img" "$tree" >"$tmp/verify.log" 2>&1 ||
	fail "orlov-layout verify x.img TREE found differences" "$tmp/verify.log"
# mkfs.ext4 -d switched by PATH alone (doc/user-guide.md, orlov-mkfs)
PATH=/usr/lib/orlov-populate/mkfs:$PATH mkfs.ext4 -q -d "$tree" "$tmp/m.img" 8M \
	>"$tmp/run.log" 2>&1 || fail "mkfs.ext4 -d TREE m.img 8M through the PATH switch failed" "$tmp/run.log"
e2fsck -fn "$tmp/m.img" >"$tmp/fsck.log" 2>&1 || fail "e2fsck -fn m.img found errors" "$tmp/fsck.log"
/usr/bin/orlov-layout verify "$tmp/m.img" "$tree" >"$tmp/verify.log" 2>&1 ||
	fail "orlov-layout verify m.img TREE found differences" "$tmp/verify.log"

# The library as a program outside the project uses it: compiled with
# pkg-config's flags against the installed header, the same image as the
# installed orlov-populate's.
export SOURCE_DATE_EPOCH=1700000000 E2FSPROGS_FAKE_TIME=1700000000
# shellcheck disable=SC2046
cc -o "$tmp/libapi" $(pkg-config --cflags orlov) -DLIBAPI_INSTALLED \
	"$src/tests/libapi.c" $(pkg-config --libs orlov) >"$tmp/cc.log" 2>&1 ||
	fail "compiling tests/libapi.c with pkg-config --cflags --libs orlov failed" "$tmp/cc.log"
/usr/bin/orlov-populate -q --create 8M "$tmp/cli.img" "$tree" >"$tmp/run.log" 2>&1 ||
	fail "orlov-populate --create 8M cli.img TREE failed" "$tmp/run.log"
"$tmp/libapi" -o create=8M "$tmp/lib.img" "$tree" >"$tmp/lib.log" 2>&1 ||
	fail "the installed library failed" "$tmp/lib.log"
[ ! -s "$tmp/lib.log" ] || fail "the installed library printed" "$tmp/lib.log"
cmp -s "$tmp/cli.img" "$tmp/lib.img" ||
	fail "the installed library's image differs from orlov-populate's"

installed=
# shellcheck disable=SC2086
dpkg -r $pkgs >"$tmp/remove.log" 2>&1 || fail "dpkg -r $pkgs failed" "$tmp/remove.log"
{ [ ! -e /usr/bin/orlov-populate ] && [ ! -e "$comp/orlov-layout" ] &&
  [ ! -e /usr/lib/orlov-populate/mkfs/mkfs.ext4 ] &&
  [ ! -e /usr/include/orlov/orlov.h ] && ! ls /usr/lib/*/liborlov.so* >/dev/null 2>&1; } ||
	fail "dpkg -r $pkgs left files behind"
echo "deb.sh: $pkgs built from $from, installed, checked, removed"
