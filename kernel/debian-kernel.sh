#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# debian-kernel.sh - fetch (or find in the cache) Debian 12's own
# distribution kernel, as an oracle for the QEMU harness in tests/kernel/.
#
# Usage:
#   kernel/debian-kernel.sh [--arch amd64|arm64] [--line 6.1|6.12]
#       [--package NAME] [--help]
#
# --arch arm64: the same releases built for arm64 (linux-image-arm64,
# linux-image-6.12-arm64 and the packages they depend on, downloaded as
# NAME:arm64; the architecture is added to dpkg and apt-get update run
# when apt does not know it yet), for qemu-system-aarch64 -M virt
# (run-guest.sh -A arm64).  Default amd64.
#
# --line 6.12: the 6.12 line Debian 12 ships beside its own kernel (the
# kernel of Debian 13): linux-image-6.12.N+deb12-amd64, the package the
# metapackage linux-image-6.12-amd64 depends on.  Default 6.1.
#
# --package NAME: that linux-image package of the line instead (e.g.
# linux-image-6.1.0-47-amd64, an older point release the archive still
# has: tools/check-kernels.sh boots each).
#
# Resolves the linux-image-6.1.0-N-amd64 package that the metapackage
# linux-image-amd64 currently depends on (apt-cache depends; the signed
# image, the one a Debian 12 machine runs), downloads it with
# `apt-get download` (never installed) and unpacks it with `dpkg-deb -x`
# into a scratch directory, where `depmod -b` writes the modules.dep the
# package does not ship.  Kept from it:
#
#   vmlinuz      the kernel image (boot it with run-guest.sh -k)
#   config       its config-* file
#   release      its uname -r
#   package      NAME VERSION of the .deb it came from
#   modules/     the .ko files needed to mount ext2/ext3 images (through
#                ext4: CONFIG_EXT2_FS is not set, CONFIG_EXT4_USE_FOR_EXT2=y)
#                and to see virtio disks: ext4, virtio_pci, virtio_blk,
#                every module modules.dep lists for them, and crc32c_generic
#                (ext4's and jbd2's soft dependency crypto-crc32c; the
#                crc32c-intel alternative needs SSE4.2, which QEMU's default
#                TCG CPU lacks), and quota_v2 (the quota files' format,
#                which ext4 loads to mount an image with the quota
#                feature).  Modules that the kernel has built in are
#                left out.  Compressed modules (.ko.xz/.zst/.gz) are
#                decompressed here: busybox insmod loads plain ELF files.
#   load-order   the file names in modules/, one a line, every module after
#                the modules it depends on (run-guest.sh -M DIR insmods them
#                in this order)
#   roots        the modules the closure was made from, one line: a
#                finished directory made from other roots is made again
#                (quota_v2 came later, for images with the quota feature)
#
# Stdout: exactly one line, the absolute path of that directory.
# Stderr: progress.
#
# Cache: ${ORLOV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate}/debian-kernel-VERSION
# (VERSION: the Debian version of the package, e.g. 6.1.192-3), for arm64
# debian-kernel-arm64-VERSION.  A finished
# directory has a .done file; later calls return at once.  Concurrent
# callers serialise on an flock of DIR.lock.  If the package cannot be
# resolved (no apt lists and apt-get update fails), the newest finished
# directory in the cache is used, with a warning.
#
# Needs apt-get, apt-cache, dpkg-deb and depmod (kmod; installed with
# apt-get when missing, root or sudo needed only then); apt-get update is
# run when apt knows no linux-image-amd64.

set -euo pipefail
export LC_ALL=C TZ=UTC

arch=amd64
line=6.1
package=
# the modules the harness needs, roots of the dependency closure;
# quota_v2 (and quota_tree under it): ext4 mounts an image with the quota
# feature only once it can load the quota files' format (QFMT_VFS_V1)
roots=(crc32c_generic ext4 virtio_pci virtio_blk quota_v2)

while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) sed -n '3,62p' "$0"; exit 0 ;;
	--arch)
		[ $# -ge 2 ] || { echo "debian-kernel.sh: --arch needs amd64 or arm64" >&2; exit 2; }
		arch=$2
		shift ;;
	--line)
		[ $# -ge 2 ] || { echo "debian-kernel.sh: --line needs 6.1 or 6.12" >&2; exit 2; }
		line=$2
		shift ;;
	--package)
		[ $# -ge 2 ] || { echo "debian-kernel.sh: --package needs a name" >&2; exit 2; }
		[[ $2 =~ ^linux-image-[0-9][0-9.]*(-[0-9]+|\+deb[0-9]+)-(amd64|arm64)$ ]] ||
			{ echo "debian-kernel.sh: --package: not a linux-image-VERSION-amd64 (or -arm64) name: $2" >&2; exit 2; }
		package=$2
		shift ;;
	*) echo "debian-kernel.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done

case $arch in
amd64|arm64) ;;
*) echo "debian-kernel.sh: --arch amd64 or arm64, not '$arch'" >&2; exit 2 ;;
esac
case $line in
6.1) meta=linux-image-$arch ;;
6.12) meta=linux-image-6.12-$arch ;;
*) echo "debian-kernel.sh: --line 6.1 or 6.12, not '$line'" >&2; exit 2 ;;
esac
[ -z "$package" ] || [ "${package##*-}" = "$arch" ] ||
	{ echo "debian-kernel.sh: --package $package is not an $arch package (--arch)" >&2; exit 2; }
# apt's name of a package of that architecture (a foreign one needs :ARCH)
aptname() { if [ "$arch" = amd64 ]; then echo "$1"; else echo "$1:$arch"; fi; }

log() { echo "debian-kernel: $*" >&2; }
die() { echo "debian-kernel: error: $*" >&2; exit 1; }

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
apt_update() {
	log "apt-get update"
	$sudo apt-get update -q >&2
}

cache=${ORLOV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/orlov-populate}
mkdir -p "$cache"
# the cache directories' prefix: amd64's keep their old names
prefix=debian-kernel-
[ "$arch" = amd64 ] || prefix=debian-kernel-$arch-

for t in apt-get apt-cache dpkg-deb; do
	command -v "$t" >/dev/null 2>&1 || die "$t missing (not a Debian system?)"
done
if ! command -v depmod >/dev/null 2>&1 && ! [ -x /usr/sbin/depmod ] &&
	! [ -x /sbin/depmod ]; then
	log "installing kmod (depmod)"
	{ apt_update && DEBIAN_FRONTEND=noninteractive $sudo apt-get install \
		-y -q kmod >&2; } || die "apt-get install kmod failed"
fi
depmod=$(command -v depmod 2>/dev/null || echo /usr/sbin/depmod)
[ -x "$depmod" ] || depmod=/sbin/depmod

# --- which package ----------------------------------------------------------------
# a foreign architecture: dpkg must know it before apt lists its packages
if [ "$arch" != amd64 ] && [ "$(dpkg --print-architecture)" != "$arch" ] &&
	! dpkg --print-foreign-architectures | grep -qx "$arch"; then
	log "dpkg --add-architecture $arch"
	$sudo dpkg --add-architecture "$arch" || die "dpkg --add-architecture $arch failed"
	apt_update || log "apt-get update failed"
fi
# the linux-image-6.1.0-N-ARCH that the metapackage depends on now
resolve() {
	apt-cache depends "$(aptname "$meta")" 2>/dev/null |
		sed -n "s/^ *Depends: \\(linux-image-[0-9][0-9.]*\\(-[0-9]*\\|+deb[0-9]*\\)-$arch\\)\\(:$arch\\)\\{0,1\\}\$/\\1/p" |
		head -n1
}
if [ -n "$package" ]; then
	resolve() { echo "$package"; }
fi
pkg=$(resolve || true)
if [ -z "$pkg" ]; then
	apt_update || log "apt-get update failed"
	pkg=$(resolve || true)
fi
ver=
[ -z "$pkg" ] ||
	ver=$(apt-cache policy "$(aptname "$pkg")" 2>/dev/null | sed -n 's/^ *Candidate: //p' | head -n1)
if [ -z "$pkg" ] || [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
	# offline: the newest finished download, if any
	old=$(find "$cache" -mindepth 2 -maxdepth 2 \
		-path "*/$prefix$line.*/.done" -printf '%h\n' 2>/dev/null | sort -V | tail -n1)
	[ -n "$old" ] ||
		die "cannot resolve the package $meta depends on (apt-cache depends $meta), and none is cached"
	log "warning: cannot resolve $meta's kernel package; using the cached $old"
	echo "$old"
	exit 0
fi
[[ $ver =~ ^[A-Za-z0-9.+~:-]+$ ]] || die "odd version '$ver' of $pkg"

dir=$cache/$prefix${ver//:/_}
# finished, and from these roots
current() { [ -f "$dir/.done" ] && [ "$(cat "$dir/roots" 2>/dev/null)" = "${roots[*]}" ]; }
if current; then
	echo "$dir"
	exit 0
fi

# --- download and unpack under lock ------------------------------------------------
exec 9>"$dir.lock"
if ! flock -n 9; then
	log "waiting for another caller preparing $dir"
	flock 9
fi
if current; then
	echo "$dir"
	exit 0
fi

t0=$(date +%s)
rm -rf "$dir" "$dir.tmp"
scratch=$dir.tmp
mkdir -p "$scratch/deb" "$dir/modules"
trap 'rm -rf "$scratch"' EXIT
log "downloading $pkg=$ver"
# apt-get download writes into the current directory; as root it warns that
# the _apt user cannot write there (harmless): keep its chatter in a log
(cd "$scratch/deb" && apt-get download "$(aptname "$pkg")=$ver") >"$scratch/apt.log" 2>&1 || {
	cat "$scratch/apt.log" >&2
	die "apt-get download $pkg=$ver failed"
}
deb=$(find "$scratch/deb" -maxdepth 1 -name '*.deb' | head -n1)
[ -n "$deb" ] || die "apt-get download left no .deb"
got=$(dpkg-deb -f "$deb" Package Version | sed 's/^[^:]*: //' | tr '\n' ' ')
[ "$got" = "$pkg $ver " ] || die "downloaded '$got', expected '$pkg $ver'"
log "unpacking $(basename "$deb")"
dpkg-deb -x "$deb" "$scratch/root" || die "dpkg-deb -x failed"
rm -f "$deb"

rel=${pkg#linux-image-}
moddir=$scratch/root/lib/modules/$rel
vmlinuz=$scratch/root/boot/vmlinuz-$rel
config=$scratch/root/boot/config-$rel
[ -f "$vmlinuz" ] || die "no boot/vmlinuz-$rel in $pkg"
[ -f "$config" ] || die "no boot/config-$rel in $pkg"
[ -d "$moddir" ] || die "no lib/modules/$rel in $pkg"
grep -qx 'CONFIG_EXT4_USE_FOR_EXT2=y' "$config" ||
	log "warning: $pkg is not built with CONFIG_EXT4_USE_FOR_EXT2=y"

"$depmod" -b "$scratch/root" "$rel" >&2 || die "depmod -b failed"
dep=$moddir/modules.dep
[ -s "$dep" ] || die "depmod wrote no modules.dep"

# module name (dashes and underscores alike) -> path relative to $moddir
modpath() {
	awk -F: -v want="$1" '{
		n = $1; sub(/.*\//, "", n); sub(/\.ko(\.[a-z]+)?$/, "", n)
		gsub(/-/, "_", n)
		w = want; gsub(/-/, "_", w)
		if (n == w) { print $1; exit }
	}' "$dep"
}
# builtin? (modules.builtin lists kernel/.../NAME.ko)
builtin() {
	awk -v want="$1" '{
		n = $0; sub(/.*\//, "", n); sub(/\.ko$/, "", n); gsub(/-/, "_", n)
		w = want; gsub(/-/, "_", w)
		if (n == w) { found = 1; exit }
	} END { exit !found }' "$moddir/modules.builtin" 2>/dev/null
}

# depth first: a module after every module modules.dep lists for it
order=()
declare -A seen=()
visit() { # PATH (relative to $moddir)
	local p=$1 d deps
	[ -z "${seen[$p]:-}" ] || return 0
	seen[$p]=1
	deps=$(awk -F: -v p="$p" '$1 == p { print $2; exit }' "$dep")
	for d in $deps; do visit "$d"; done
	order+=("$p")
}
for m in "${roots[@]}"; do
	p=$(modpath "$m")
	if [ -n "$p" ]; then
		visit "$p"
	elif builtin "$m"; then
		log "$m is built in"
	else
		die "$pkg has no module $m"
	fi
done

: >"$dir/load-order"
for p in "${order[@]}"; do
	f=$(basename "$p")
	case $f in
	*.ko) cp "$moddir/$p" "$dir/modules/$f" ;;
	*.ko.xz) xz -dc "$moddir/$p" >"$dir/modules/${f%.xz}" ;;
	*.ko.zst) zstd -q -dc "$moddir/$p" >"$dir/modules/${f%.zst}" ;;
	*.ko.gz) gzip -dc "$moddir/$p" >"$dir/modules/${f%.gz}" ;;
	*) die "unexpected module file $p" ;;
	esac || die "cannot copy or decompress $p"
	f=${f%.ko*}.ko
	head -c 4 "$dir/modules/$f" | grep -q 'ELF' || die "$f is not an ELF file"
	echo "$f" >>"$dir/load-order"
done
cp "$vmlinuz" "$dir/vmlinuz"
cp "$config" "$dir/config"
echo "$rel" >"$dir/release"
echo "$pkg $ver" >"$dir/package"
echo "${roots[*]}" >"$dir/roots"
rm -rf "$scratch"
trap - EXIT
touch "$dir/.done"
log "$pkg $ver ready in $(( $(date +%s) - t0 ))s: $(tr '\n' ' ' <"$dir/load-order")"
echo "$dir"
