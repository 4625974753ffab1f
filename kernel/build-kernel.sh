#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-kernel.sh - build (or find in the cache) the minimal guest kernel used
# by the QEMU harness in tests/kernel/.
#
# Usage:
#   kernel/build-kernel.sh [--stock | --patched] [--source 6.1|6.12] [--smp]
#       [--jobs N] [--check] [--progress SECS]
#
#   --stock     the Debian linux-source-VER tree as shipped (default)
#   --patched   the same tree with kernel/patches/series applied in order
#               (one series for every supported source version;
#               each line names a git-format-patch file in kernel/patches/,
#               '#' comments and blank lines ignored; applied with patch -p1).
#               Without a series file --patched is identical to --stock.
#   --source V  kernel source version: Debian package linux-source-V,
#               tarball /usr/src/linux-source-V.tar.xz (default 6.1)
#   --smp       an SMP build: kernel/config-smp.fragment replaces the
#               fragment's `# CONFIG_SMP is not set' (boot it with -smp N;
#               its percpu counters then batch as Debian's kernel's do)
#   --jobs N    make -jN (default: number of CPUs)
#   --check     build nothing: print the bzImage's path and exit 0 if this
#               kernel is in the cache, exit 1 if it is not
#   --progress SECS  while compiling, a line on stderr every SECS seconds:
#               which kernel, how long so far, how many files compiled
#               (tools/kernels.sh, for a first run's long builds)
#
# Stdout: exactly one line, the absolute path of the built bzImage.
# Stderr: progress; the full build log is CACHEDIR/build.log.
#
# Source: a copy of the pristine tree that kernel/source-tree.sh unpacked
# once into the cache.  A --patched build copies the finished --stock build
# of the same source and config instead (objects included) and applies the
# series to it, so that make recompiles only what the patches touch.
#
# Config: `make tinyconfig`, then kernel/config.fragment appended, then
# `make olddefconfig`; every line of the fragment is checked against the final
# .config and the build fails if any did not take effect.
#
# Cache: ${ORLOV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate}/kernel-HASH
# where HASH = sha256 over (source version, the config fragment as applied,
# the recipe number, and for --patched every patch the series lists).  A finished build
# leaves CACHEDIR/bzImage and CACHEDIR/.done; later calls return at once.
# Concurrent callers serialise on an flock of CACHEDIR.lock.
#
# Missing tools or the source package are installed with apt-get (root or
# sudo needed only then).

set -euo pipefail
export LC_ALL=C TZ=UTC

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=stock
srcver=6.1
smp=false
jobs=$(nproc 2>/dev/null || echo 2)
check=false
progress=0

while [ $# -gt 0 ]; do
	case "$1" in
	--stock) mode=stock ;;
	--patched) mode=patched ;;
	--source) srcver=$2; shift ;;
	--source=*) srcver=${1#--source=} ;;
	--smp) smp=true ;;
	--jobs) jobs=$2; shift ;;
	--check) check=true ;;
	--progress) progress=$2; shift ;;
	-h|--help) sed -n '3,49p' "$0"; exit 0 ;;
	*) echo "build-kernel.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done

log() { echo "build-kernel: $*" >&2; }
die() { echo "build-kernel: error: $*" >&2; exit 1; }

fragment=$here/config.fragment
patchdir=$here/patches
series=$patchdir/series
[ -r "$fragment" ] || die "missing $fragment"
# the fragment as applied: the SMP build swaps the one line that keeps
# CONFIG_SMP off for the SMP fragment
fragtext=$(cat "$fragment")
if $smp; then
	[ -r "$here/config-smp.fragment" ] || die "missing $here/config-smp.fragment"
	fragtext=$(grep -vx '# CONFIG_SMP is not set' "$fragment"; cat "$here/config-smp.fragment")
fi

# --- patch list ------------------------------------------------------------
patches=()
if [ "$mode" = patched ] && [ -f "$series" ]; then
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		line=$(echo "$line" | tr -d '[:space:]')
		[ -n "$line" ] || continue
		[ -f "$patchdir/$line" ] || die "series lists missing patch $line"
		patches+=("$patchdir/$line")
	done <"$series"
fi

# --- cache key ---------------------------------------------------------------
# What the kernel is made of: the source version, the config fragment as
# applied, the patches and the recipe (tinyconfig + fragment + olddefconfig,
# in-tree).  Bump recipe when a change to this script changes the kernel it
# builds; other changes to the script keep every cached kernel.
recipe=1
key() { # key PATCH...: the cache key of a build of this source and config with PATCHes
	{
		echo "source=$srcver recipe=$recipe"
		echo "--- fragment"; echo "$fragtext"
		local p
		for p in "$@"; do
			echo "--- patch $(basename "$p")"; cat "$p"
		done
	} | sha256sum | cut -c1-16
}
hash=$(key "${patches[@]}")

cache=${ORLOV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate}
dir=$cache/kernel-$hash
mkdir -p "$cache"

if [ -f "$dir/.done" ] && [ -f "$dir/bzImage" ]; then
	echo "$dir/bzImage"
	exit 0
fi
! $check || exit 1

# --- dependencies ------------------------------------------------------------
need_pkgs=()
for t in make:make gcc:gcc flex:flex bison:bison bc:bc xz:xz-utils \
	cpio:cpio perl:perl; do
	command -v "${t%%:*}" >/dev/null 2>&1 || need_pkgs+=("${t#*:}")
done
[ -f /usr/include/gelf.h ] || need_pkgs+=(libelf-dev)
[ -f /usr/include/openssl/opensslv.h ] || need_pkgs+=(libssl-dev)
if [ ${#need_pkgs[@]} -gt 0 ]; then
	log "installing ${need_pkgs[*]}"
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -q >&2 || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
		"${need_pkgs[@]}" >&2 || die "apt-get install ${need_pkgs[*]} failed"
fi
pristine=$("$here/source-tree.sh" "$srcver") || die "no source tree of linux-source-$srcver"

# --- build under lock --------------------------------------------------------
exec 9>"$dir.lock"
if ! flock -n 9; then
	log "waiting for another build of $dir"
	flock 9
fi
if [ -f "$dir/.done" ] && [ -f "$dir/bzImage" ]; then
	echo "$dir/bzImage"
	exit 0
fi

rm -rf "$dir"
mkdir -p "$dir"
buildlog=$dir/build.log
: >"$buildlog"
fail() {
	echo "build-kernel: error: $*; last lines of $buildlog:" >&2
	tail -n 40 "$buildlog" >&2
	exit 1
}

# wait_s PID SECS: true once PID has exited, false after SECS seconds
wait_s() {
	local i=0
	while [ $i -lt "$2" ]; do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 1
		i=$((i + 1))
	done
	! kill -0 "$1" 2>/dev/null
}

t0=$(date +%s)
# A patched build starts from the finished stock build of the same source
# and config, objects included: the series touches a few files of fs/ext2,
# fs/ext4 and one trace header, so make rebuilds those and links, instead of
# compiling the whole kernel again.  It builds at the stock tree's own path
# (the stock tree set aside meanwhile, and put back after): objtool's build
# records absolute paths, and at another path make would rebuild objtool
# and then every object objtool checks.  A stock build under way in another
# process is waited for; the stock lock is held until the tree is back.
base=
if [ ${#patches[@]} -gt 0 ]; then
	bdir=$cache/kernel-$(key)
	exec 8>"$bdir.lock"
	flock -n 8 || { log "waiting for the stock build $bdir to start from it"; flock 8; }
	# a patched build killed before it put the stock tree back
	if [ -d "$bdir/linux.stock" ]; then
		rm -rf "$bdir/linux" && mv "$bdir/linux.stock" "$bdir/linux" ||
			fail "cannot put back the stock tree $bdir/linux.stock"
	fi
	if [ -f "$bdir/.done" ] && [ -d "$bdir/linux" ]; then
		base=$bdir/linux
	else
		exec 8>&-
	fi
fi
if [ -n "$base" ]; then
	log "building on the stock build $base (smp=$smp, ${#patches[@]} patches)"
	mv "$base" "$bdir/linux.stock" &&
		cp -a "$bdir/linux.stock" "$base" >>"$buildlog" 2>&1 ||
		fail "copying the stock tree $base failed"
	src=$base
else
	src=$dir/linux
	log "copying $pristine into $dir (mode=$mode, smp=$smp, ${#patches[@]} patches)"
	cp -a "$pristine" "$src" >>"$buildlog" 2>&1 || fail "copying $pristine failed"
	rm -f "$src/.orlov-pristine"
fi
[ -f "$src/Makefile" ] || fail "no kernel tree in $src"

for p in "${patches[@]}"; do
	log "applying $(basename "$p")"
	patch -d "$src" -p1 --batch --forward <"$p" >>"$buildlog" 2>&1 ||
		fail "patch $(basename "$p") does not apply"
done

kmake() { make -C "$src" ARCH=x86_64 "$@" >>"$buildlog" 2>&1; }

if [ -z "$base" ]; then
	kmake tinyconfig || fail "make tinyconfig failed"
	{ echo; echo "$fragtext"; } >>"$src/.config"
fi
kmake olddefconfig || fail "make olddefconfig failed"

# every fragment line must be in the final .config
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) want=$line ;;
	"# CONFIG_"*" is not set") want=$line ;;
	*) continue ;;
	esac
	opt=${want#\# }; opt=${opt%%[= ]*}
	if ! grep -qxF -- "$want" "$src/.config"; then
		if [[ "$want" == "# "* ]] && ! grep -q "^$opt=" "$src/.config"; then
			continue # unset and not even visible: fine
		fi
		got=$(grep -E "^(# )?$opt[= ]" "$src/.config" || echo "(absent)")
		echo "build-kernel: config: wanted '$want', got '$got'" >&2
		bad=1
	fi
done <<<"$fragtext"
[ $bad = 0 ] || fail "config fragment did not take effect"

what="$srcver $($smp && echo SMP || echo UP) $mode"
log "$what: compiling with -j$jobs (log: $buildlog)"
if [ "$progress" -gt 0 ]; then
	# a first run compiles for many minutes: say which kernel and how far
	kmake -j"$jobs" bzImage &
	kpid=$!
	while ! wait_s "$kpid" "$progress"; do
		log "$what: $(( ($(date +%s) - t0) / 60 )) min so far, $(grep -c '^  CC ' "$buildlog") files compiled"
	done
	wait "$kpid" || fail "kernel build failed"
else
	kmake -j"$jobs" bzImage || fail "kernel build failed"
fi
cp "$src/arch/x86/boot/bzImage" "$dir/bzImage"
cp "$src/.config" "$dir/config"
if [ -n "$base" ]; then
	rm -rf "$base" && mv "$bdir/linux.stock" "$base" ||
		fail "cannot put back the stock tree $bdir/linux.stock"
fi
touch "$dir/.done"
log "$what: built in $(( $(date +%s) - t0 ))s: $dir/bzImage"
echo "$dir/bzImage"
