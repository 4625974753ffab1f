// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include "populate/driver.h"

const struct driver ext2_driver = {
	.find_group = ext2_ialloc_find_group,
	.xattr_set = ext2_xattr_setxattr,
	.truncate = ext2_write_truncate,
	.release = ext2_write_release,
	.link_max = 32000,
};

const struct driver ext4_driver = {
	.find_group = ext4_ialloc_find_group,
	.xattr_set = ext4_xattr_set_handle,
	.truncate = ext4_write_truncate,
	.release = ext4_write_release,
	.mballoc = 1,
	.xattr_ibody = 1,
	.xattr_share_below = EXT2_EXT_ATTR_REFCOUNT_MAX,
	.link_max = 65000,
	.dir_nlink = 1,
};
