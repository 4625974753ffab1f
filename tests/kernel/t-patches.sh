#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# t-patches.sh - static checks of the kernel patch series (TAP output).
#
# kernel/patches/series is one series for linux-source-6.1 (the guest
# kernel) and linux-source-6.12.  For each version whose source tarball is
# installed (/usr/src/linux-source-VER.tar.xz; installed with apt-get when
# root/sudo allow it):
#   - every patch applies in order with `patch -p1 -F0` (no fuzz; offsets
#     are fine) to the pristine files it touches, and with `git apply`, and
#   - that tree's scripts/checkpatch.pl --strict --no-tree exits 0 and
#     reports no error, warning or check for any patch.
# With ORLOV_PATCH_BUILD=1 the patched tree is also built (fs/ext2/ fs/ext4/,
# W=1, tinyconfig + ext2/ext4/tracing) and any warning in a file the series
# touches, other than kernel-doc warnings already present upstream, fails.
#
# The pristine tree is kernel/source-tree.sh's (unpacked once into the cache,
# shared with kernel/build-kernel.sh).
# Exit: 0 all passed, 1 a check failed, 77 nothing could be checked.
set -u
. "$(dirname "$0")/lib.sh"
[ "${ORLOV_SKIP_KERNEL_TESTS:-0}" = 0 ] || kt_skip "ORLOV_SKIP_KERNEL_TESTS is set"

patches=$top_srcdir/kernel/patches
srcroot=$ORLOV_CACHE/patches-src
mkdir -p "$srcroot" || kt_die "cannot create $srcroot"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t-patches.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0 failed=0 passed=0
ok() { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }

# pristine source tree of VER (kernel/source-tree.sh: unpacked once into the
# cache, shared with the kernel builds); prints its path
pristine() {
	"$top_srcdir/kernel/source-tree.sh" "$1"
}

# patch files of a series file, in order
series_list() {
	local dir=$1 line
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		line=$(echo "$line" | tr -d '[:space:]')
		[ -n "$line" ] && echo "$dir/$line"
	done <"$dir/series"
}

# the files a series touches: touched P...
touched() {
	sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' "$@" | sort -u
}

# apply the series to fresh copies of the files it touches, with patch (no
# fuzz; offsets are fine) or git apply: apply_series patch|git SRC WORK P...
apply_series() {
	local how=$1 src=$2 work=$3 p f out rc
	shift 3
	rm -rf "$work" && mkdir -p "$work" || return 1
	for f in $(touched "$@"); do
		if [ -f "$src/$f" ]; then
			mkdir -p "$work/$(dirname "$f")" && cp "$src/$f" "$work/$f"
		fi
	done
	for p in "$@"; do
		if [ "$how" = patch ]; then
			out=$(cd "$work" && patch -p1 -F0 -N --batch -s <"$p" 2>&1)
		else
			out=$(cd "$work" && git apply -p1 "$p" 2>&1)
		fi
		rc=$?
		[ $rc = 0 ] || echo "# $(basename "$p") does not apply with $how:"
		[ -z "$out" ] || echo "$out" | sed 's/^/#   /'
		[ $rc = 0 ] || return 1
	done
}

# checkpatch one patch: clean means exit status 0 and nothing reported
check_style() {
	local src=$1 p=$2 out rc=0
	out=$(perl "$src/scripts/checkpatch.pl" --strict --no-tree --show-types \
		--no-summary --terse "$p" 2>&1) || rc=$?
	[ -n "$out" ] && echo "$out" | sed 's/^/#   /'
	[ $rc = 0 ] && ! echo "$out" | grep -qE '(ERROR|WARNING|CHECK):'
}

# optional: W=1 build of fs/ext2 and fs/ext4 in a patched copy of the tree
check_build() {
	local src=$1 ver=$2 tree=$srcroot/$ver-build obj=$srcroot/$ver-obj p f
	shift 2
	kt_need flex flex bison bison bc bc || true
	rm -rf "$tree" && cp -al "$src" "$tree" || return 1
	# break the hard links of the files the series touches first
	for f in $(touched "$@"); do
		[ -f "$tree/$f" ] && cp --remove-destination "$src/$f" "$tree/$f"
	done
	for p in "$@"; do
		(cd "$tree" && patch -p1 -F0 -N --batch -s <"$p") || return 1
	done
	mkdir -p "$obj"
	make -s -C "$tree" O="$obj" tinyconfig >/dev/null 2>&1 || return 1
	"$tree/scripts/config" --file "$obj/.config" --enable 64BIT \
		--enable BLOCK --enable EXT2_FS --enable EXT2_FS_XATTR \
		--enable EXT4_FS --disable EXT4_USE_FOR_EXT2 --enable FTRACE \
		--enable EVENT_TRACING --enable QUOTA --enable PRINTK || return 1
	make -s -C "$tree" O="$obj" olddefconfig >/dev/null 2>&1 || return 1
	make -C "$tree" O="$obj" -j"$(nproc)" W=1 fs/ext2/ fs/ext4/ \
		>"$obj/build.log" 2>&1 || { tail -20 "$obj/build.log" | sed 's/^/#   /'; return 1; }
	! grep -E 'warning:' "$obj/build.log" |
		grep -Ev 'not described in|isn.t a kernel-doc comment|Excess function parameter' |
		sed 's/^/#   /' | grep .
}

kt_need git git || true
dir=$patches
versions="6.1 6.12"
echo "1..$(( $(echo $versions | wc -w) * 4 ))"
for ver in $versions; do
	if [ ! -f "$dir/series" ] || ! src=$(pristine "$ver"); then
		why="linux-source-$ver not installable here"
		[ -f "$dir/series" ] || why="no series file $dir/series"
		skip "$ver: $why"
		skip "$ver: git apply"
		skip "$ver: checkpatch"
		skip "$ver: build"
		continue
	fi
	mapfile -t list < <(series_list "$dir")
	if apply_series patch "$src" "$tmp/$ver" "${list[@]}"; then
		ok "$ver: ${#list[@]} patches apply with patch -F0"
	else
		notok "$ver: series does not apply with patch -F0"
	fi
	if apply_series git "$src" "$tmp/$ver-git" "${list[@]}"; then
		ok "$ver: ${#list[@]} patches apply with git apply"
	else
		notok "$ver: series does not apply with git apply"
	fi
	bad=
	for p in "${list[@]}"; do
		check_style "$src" "$p" || bad="$bad $(basename "$p")"
	done
	if [ -z "$bad" ]; then
		ok "$ver: checkpatch --strict: 0 errors, 0 warnings, 0 checks"
	else
		notok "$ver: checkpatch --strict:$bad"
	fi
	if [ "${ORLOV_PATCH_BUILD:-0}" != 1 ]; then
		skip "$ver: build (set ORLOV_PATCH_BUILD=1)"
	elif check_build "$src" "$ver" "${list[@]}"; then
		ok "$ver: fs/ext2 fs/ext4 build with W=1, no new warnings"
	else
		notok "$ver: build"
	fi
done

[ $failed = 0 ] || exit 1
[ $passed -gt 0 ] || { echo "skipped: no kernel source available"; exit 77; }
exit 0
