/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ext4's inline_data (fs/ext4/inline.c, Linux 6.1 and 6.12 alike): a new
 * inode may keep its first bytes in i_block (60) and the rest in the value
 * of the in-inode attribute system.data, as long as the inode's attribute
 * space has room.  Regular files whose first write fits, and directories
 * until their names outgrow it, then converted to one block.
 */
#ifndef ORLOV_EXT4_INLINE_H
#define ORLOV_EXT4_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include "model/dir.h"

/* i_block's 60 bytes (ext2_fs.h's EXT4_MIN_INLINE_DATA_SIZE), and an
 * inline directory's ".." */
#ifndef EXT4_INLINE_DOTDOT_SIZE
#define EXT4_INLINE_DOTDOT_SIZE 4u
#endif

/* get_max_inline_xattr_value_size: the largest system.data value the
 * inode's attribute space @tail (@tail_size bytes, the ibody header
 * first) could hold, the value it has counted as free. */
size_t get_max_inline_xattr_value_size(const unsigned char *tail,
				       size_t tail_size);
/* ext4_get_max_inline_size: i_block and that value; 0 for none. */
size_t ext4_get_max_inline_size(const unsigned char *tail, size_t tail_size);
/* The value of system.data, *size its bytes (NULL: no inline data,
 * i_inline_off 0). */
unsigned char *ext4_inline_value(unsigned char *tail, size_t tail_size,
				 size_t *size);
/* ext4_prepare_inline_data for @len bytes from offset 0: system.data
 * made (ext4_create_inline_data, zeroed) or grown
 * (ext4_update_inline_data, its bytes kept).  *fits 0: -ENOSPC, nothing
 * changed (the inode then loses EXT4_STATE_MAY_INLINE_DATA). */
errcode_t ext4_prepare_inline_data(unsigned char *tail, size_t tail_size,
				   size_t len, int *fits);

/* ext4_try_create_inline_dir: @d (its ibody set, no blocks yet) an
 * inline directory with ".." @parent and one empty entry; *fits 0 when
 * the inode has no room (a block directory then). */
errcode_t ext4_try_create_inline_dir(struct dirbuf *d, uint32_t parent,
				     int *fits);
/* ext4_try_add_inline_entry: the name into the inline entries (i_block's,
 * then system.data's, grown once by ext4_update_inline_dir), *added; or
 * when none has room, ext4_convert_inline_data_nolock: the entries into
 * the directory's first block, allocated now, *added 0 (the caller adds
 * the name to that block). */
errcode_t ext4_try_add_inline_entry(struct fs_state *fs, struct dirbuf *d,
				    const char *name, size_t len, uint32_t ino,
				    unsigned int ftype, int *added);
/* The live entries of an inline directory, as dir_for_each. */
errcode_t ext4_inline_for_each(const struct dirbuf *d,
			       errcode_t (*fn)(void *arg, const char *name,
					       size_t len, uint32_t ino),
			       void *arg);
/* i_size of an inline directory: i_block and the value. */
uint32_t ext4_inline_dir_size(const struct dirbuf *d);

#endif
