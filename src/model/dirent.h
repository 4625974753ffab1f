/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fields of one directory entry, for dir.c. */
#ifndef ORLOV_DIRENT_H
#define ORLOV_DIRENT_H

#include <stddef.h>
#include <stdint.h>
#include <ext2fs/ext2_fs.h>

#include "lib/util.h"
#include "model/dir.h"

/*
 * A directory entry's fields where struct ext2_dir_entry_2 puts them, read
 * byte by byte: entries read from the image are not checked for 4-byte
 * alignment (their rec_len is not), so no struct pointer lies over them.
 */
#define DE_OFF(f) offsetof(struct ext2_dir_entry_2, f)
#define DE_HEAD EXT2_DIR_ENTRY_HEADER_LEN

static inline uint32_t de_inode(const unsigned char *de)
{
	return get_le32(de + DE_OFF(inode));
}

static inline void de_set_inode(unsigned char *de, uint32_t ino)
{
	put_le32(de + DE_OFF(inode), ino);
}

static inline uint32_t de_name_len(const unsigned char *de)
{
	return de[DE_OFF(name_len)];
}

static inline void de_set_rec_len(unsigned char *de, uint32_t len)
{
	put_le16(de + DE_OFF(rec_len), len);
}

/* ext2_rec_len_from_disk for block sizes up to 64 KiB */
static inline uint32_t rec_len(const unsigned char *de, uint32_t bs)
{
	uint32_t len = get_le16(de + DE_OFF(rec_len));

	if (len == 65535 || len == 0)
		return bs > 65535 ? 65536 : len;
	return len;
}

/* How big a new name record the entry at @de could take. */
static inline uint32_t entry_room(const unsigned char *de, uint32_t bs)
{
	uint32_t rl = rec_len(de, bs);

	if (!de_inode(de))
		return rl;
	return rl - DIR_REC_LEN(de_name_len(de));
}

#endif
