#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what building, testing and the QEMU cross-checks need on Debian 12.
# Quiet and quick when everything is already there.
set -eu
pkgs="build-essential autoconf automake pkg-config libext2fs-dev comerr-dev
e2fsprogs attr acl util-linux python3 time qemu-system-x86 busybox-static
linux-source-6.1 flex bison bc libelf-dev libssl-dev cpio xz-utils
clang libclang-rt-14-dev libarchive-dev dpkg-dev debhelper libtool
libselinux1-dev selinux-utils uuid-dev libblkid-dev fdisk kmod dosfstools procps"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: need root to install:$missing" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
