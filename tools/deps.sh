#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what building, testing and the QEMU cross-checks need on Debian 12.
# Quiet and quick when everything is already there.
set -eu
pkgs="build-essential autoconf automake pkg-config libext2fs-dev comerr-dev
e2fsprogs attr acl util-linux python3 time qemu-system-x86 busybox-static
linux-source-6.1 flex bison bc libelf-dev libssl-dev cpio xz-utils
clang libclang-rt-14-dev libarchive-dev dpkg-dev debhelper libtool
libselinux1-dev selinux-utils uuid-dev libblkid-dev fdisk kmod dosfstools procps
qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
# the arm64 oracle (t-crosscheck-arm64.sh) downloads Debian's arm64 kernel
# and busybox-static:arm64 packages (never installed): apt must list them
arch=
dpkg --print-foreign-architectures 2>/dev/null | grep -qx arm64 || arch=arm64
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && [ -z "$arch" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: need root to install:$missing${arch:+ (and dpkg --add-architecture $arch)}" >&2
	exit 1
fi
[ -z "$arch" ] || { echo "deps.sh: dpkg --add-architecture $arch" >&2; dpkg --add-architecture "$arch"; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
[ -n "$missing" ] || exit 0
echo "deps.sh: installing$missing" >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
