/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel driver that mounts the image and places what is written
 * (--driver): chosen once per run, asked through these operations
 * wherever fs/ext2 and fs/ext4 differ.
 */
#ifndef ORLOV_POPULATE_DRIVER_H
#define ORLOV_POPULATE_DRIVER_H

#include "model/ialloc.h"
#include "model/write.h"
#include "model/xattr_set.h"

struct driver {
	ialloc_find_group_fn *find_group;	/* which find_group_* */
	xattr_set_fn *xattr_set;		/* block only, or inode first */
	write_truncate_fn *truncate;		/* a trailing hole */
	write_release_fn *release;		/* the last close */
	int mballoc;	/* ext4's block allocator (mb_state), and its
			   htree directories where the image has dir_index */
	int xattr_ibody;	/* attributes in the inode, past i_extra_isize */
	uint32_t xattr_share_below;	/* 0: xattr_blocks_init's */
	/* EXT2_LINK_MAX / EXT4_LINK_MAX: link() and mkdir() fail at it
	 * (ext4's mkdir not in an htree directory with dir_nlink, whose
	 * count then stays at 1: ext4_inc_count) */
	uint16_t link_max;
	int dir_nlink;		/* ext4: dir_nlink is honoured */
};

extern const struct driver ext2_driver, ext4_driver;

#endif
