# SPDX-License-Identifier: GPL-2.0-or-later
# The ext2/ext3/ext4 images of IMAGE_FSTYPES made by orlov-mkfs: the
# image class's own command (oe_mkext234fs: mkfs.ext4 -F -i 4096 IMG -d
# ROOTFS) runs unchanged, with orlov-mkfs's links first on PATH.  The
# native e2fsprogs' mke2fs, next on PATH, still makes the filesystem.
#
#   INHERIT += "orlov-mkfs"                      (local.conf, or an image recipe)
#   ORLOV_MKFS_OPTIONS = "--kernel 6.12"         (optional: orlov-populate's options)

ORLOV_MKFS_DIR ??= "/usr/lib/orlov-populate/mkfs"
ORLOV_MKFS_OPTIONS ??= ""
export ORLOV_MKFS_OPTIONS

# prepend: applied after image_types.bbclass sets IMAGE_CMD
IMAGE_CMD:ext2:prepend = "export PATH=${ORLOV_MKFS_DIR}:$PATH; "
IMAGE_CMD:ext3:prepend = "export PATH=${ORLOV_MKFS_DIR}:$PATH; "
IMAGE_CMD:ext4:prepend = "export PATH=${ORLOV_MKFS_DIR}:$PATH; "
