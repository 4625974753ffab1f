/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An inode's 32-bit owner: i_uid and i_gid hold the low 16 bits,
 * osd2.linux2's l_i_uid_high and l_i_gid_high the high ones.  The setting
 * side of ext2_fs.h's inode_uid() and inode_gid(), for struct ext2_inode
 * and struct ext2_inode_large alike (@inode is the struct, not a pointer,
 * as in those macros; @id is evaluated twice).
 */
#ifndef ORLOV_OWNER_H
#define ORLOV_OWNER_H

#include <stdint.h>
#include <ext2fs/ext2_fs.h>

#define inode_set_uid(inode, id) \
	((inode).i_uid = (uint16_t)(id), \
	 ext2fs_set_i_uid_high(inode, (uint16_t)((uint32_t)(id) >> 16)))
#define inode_set_gid(inode, id) \
	((inode).i_gid = (uint16_t)(id), \
	 ext2fs_set_i_gid_high(inode, (uint16_t)((uint32_t)(id) >> 16)))

#endif
