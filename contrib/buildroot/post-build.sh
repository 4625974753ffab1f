#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# BR2_ROOTFS_POST_BUILD_SCRIPT: fs/ext2 runs $(HOST_DIR)/sbin/mkfs.ext2/3/4
# by path, so PATH cannot switch it; this makes those three links to
# orlov-mkfs before the rootfs images are made.  mke2fs stays host-
# e2fsprogs' own, which orlov-mkfs finds on Buildroot's PATH and runs.
# ORLOV_MKFS: the orlov-mkfs to link to (default /usr/bin/orlov-mkfs).
set -eu
mkfs=${ORLOV_MKFS:-/usr/bin/orlov-mkfs}
[ -x "$mkfs" ] || { echo "post-build.sh: no $mkfs (install orlov-populate)" >&2; exit 1; }
[ -x "$HOST_DIR/sbin/mke2fs" ] ||
	{ echo "post-build.sh: no $HOST_DIR/sbin/mke2fs (host-e2fsprogs)" >&2; exit 1; }
for n in mkfs.ext2 mkfs.ext3 mkfs.ext4; do
	ln -sf "$mkfs" "$HOST_DIR/sbin/$n"
done
