/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Directory contents (in memory up to a budget: dirblocks.h), grown as
 * ext2_add_link() in fs/ext2/dir.c (Linux 6.1) grows them: the first entry with room (a free entry, or the
 * slack after a live one) takes the name; past the end, a new block.
 */
#ifndef ORLOV_DIR_H
#define ORLOV_DIR_H

#include <ext2fs/ext2_fs.h>

#include "model/bmap.h"
#include "model/dirblocks.h"

/* EXT2_DIR_REC_LEN of ext2_fs.h (the kernel's too), unsigned */
#define DIR_REC_LEN(n) ((uint32_t)EXT2_DIR_REC_LEN(n))

struct dirbuf {
	struct ifile map;
	struct dirblocks b;	/* the blocks' bytes, and how many (b.n) */
	fsblk_t *phys;		/* physical block of each logical block */
	uint16_t *room;		/* largest name record that fits, per block */
	uint16_t *first;	/* per block, its first entry with room */
	/* fit[(rec_len - 12) / 4], one per record size (12 to 264 bytes):
	 * no block before it has room for one (linear directories) */
	uint32_t fit[64];
	int filetype;		/* the filetype feature: store d_type */
	int indexed;		/* an htree (EXT2_INDEX_FL), ext4 only */
	/* EXT4_CASEFOLD_FL: the superblock's encoding, which its names are
	 * hashed and compared by (model/casefold.h); NULL: as bytes */
	const struct ext2fs_nls_table *cf;
	/* inline_data (model/ext4/inline.h): the entries are in the inode,
	 * i_block's copy here (".."'s inode, then entries), the rest in
	 * system.data in map.ibody; no block until converted */
	int inline_dir;
	unsigned char inl[60];
};

void dirbuf_init(struct dirbuf *d, uint32_t ino, uint32_t ipg, int filetype);
void dirbuf_release(const struct fs_state *fs, struct dirbuf *d);

/* Append an existing block read from the image. */
errcode_t dirbuf_add_block(const struct fs_state *fs, struct dirbuf *d,
			   fsblk_t phys, const unsigned char *data);

/* ext2_make_empty: the first block with "." and "..". */
errcode_t dir_make_empty(struct fs_state *fs, struct dirbuf *d,
			 uint32_t parent_ino);

/* ext2_add_link, or ext4_add_entry when fs->dx.enabled (an htree once
 * the first block is full): may allocate blocks for the directory. */
errcode_t dir_add_link(struct fs_state *fs, struct dirbuf *d,
		       const char *name, size_t len, uint32_t ino,
		       unsigned int ftype);

/* Every live entry of @d, as its blocks hold them (an htree's index
 * blocks hold none): @fn with its name and inode until it returns
 * non-zero, which is returned; so is an error reading a spilled block
 * back (told by the engine's dir_spill); 0 once all are seen. */
errcode_t dir_for_each(const struct fs_state *fs, const struct dirbuf *d,
		       errcode_t (*fn)(void *arg, const char *name, size_t len,
				       uint32_t ino),
		       void *arg);
/* Does @name exist among the live entries (folded alike in a casefolded
 * directory: @d->cf)?  *found, and its inode in *ino (when not NULL). */
errcode_t dir_lookup(const struct fs_state *fs, const struct dirbuf *d,
		     const char *name, size_t len, int *found, uint32_t *ino);

/* The directory's blocks. */
static inline uint32_t dir_nblocks(const struct dirbuf *d)
{
	return d->b.n;
}

/* i_size in bytes */
uint64_t dir_size(const struct dirbuf *d, uint32_t bs);

#endif
