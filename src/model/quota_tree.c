// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The quota file's tree, read side by side with fs/quota/quota_tree.c
 * (qtree_write_dquot's dq_insert_tree, do_insert_tree, find_free_dqentry,
 * get_free_dqblk) and quota_v2.c (the header, v2r1 entries) of Linux 6.1
 * and 6.12, which do not differ there.  Every number on disk is little
 * endian.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/quota_tree.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

#define QT_TREEOFF 1		/* the root's block */
#define QT_DEPTH 4		/* v2: ids of 32 bits, 8 bits a level */
#define QT_EPB (QT_BLKSIZE / 4)	/* references in a tree block */
#define V2_VERSION_R1 1
#define DQINFO 8		/* struct v2_disk_dqinfo after the header */
#define DQDBHEADER 16		/* struct qt_disk_dqdbheader */
#define DQENTRY 72		/* struct v2r1_disk_dqblk */
#define DQSTR_IN_BLK ((QT_BLKSIZE - DQDBHEADER) / DQENTRY)

/* v2_disk_dqinfo's fields after the grace times and flags */
#define INFO_BLOCKS (DQINFO + 12)
#define INFO_FREE_BLK (DQINFO + 16)
#define INFO_FREE_ENTRY (DQINFO + 20)
/* qt_disk_dqdbheader */
#define DH_NEXT 0
#define DH_PREV 4
#define DH_ENTRIES 8
/* v2r1_disk_dqblk */
#define D_ID 0
#define D_IHARDLIMIT 8
#define D_CURINODES 24
#define D_BHARDLIMIT 32
#define D_CURSPACE 48
#define D_ITIME 64

static const uint32_t v2_magic[QT_NTYPES] = {
	0xd9c01f11, 0xd9c01927, 0xd9c03f14	/* INITQMAGICS */
};

static uint64_t get_le64(const unsigned char *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le64(unsigned char *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static unsigned char *blk_of(const struct qtree *q, uint32_t blk)
{
	return q->buf + ((size_t)blk << QT_BLKSIZE_BITS);
}

static uint32_t info(const struct qtree *q, size_t field)
{
	return get_le32(q->buf + field);
}

static void set_info(struct qtree *q, size_t field, uint32_t v)
{
	put_le32(q->buf + field, v);
}

uint32_t qtree_blocks(const struct qtree *q)
{
	return info(q, INFO_BLOCKS);
}

/* __get_index: the reference to follow at @depth, the id's bytes from
 * the most significant down */
static unsigned int get_index(uint32_t id, int depth)
{
	return (id >> ((QT_DEPTH - depth - 1) * 8)) & (QT_EPB - 1);
}

/* A block number read from the file must lie inside it (do_check_range):
 * a damaged file is refused, not followed. */
static errcode_t check_blk(const struct qtree *q, uint32_t blk)
{
	return blk < qtree_blocks(q) ? 0 : ORLOV_ERR_QUOTA_FILE;
}

errcode_t qtree_load(struct qtree *q, int type, const void *data, size_t len)
{
	const unsigned char *d = data;
	uint32_t n;

	memset(q, 0, sizeof(*q));
	if (len < QT_BLKSIZE || get_le32(d) != v2_magic[type] ||
	    get_le32(d + 4) != V2_VERSION_R1)
		return ORLOV_ERR_QUOTA_FILE;
	n = get_le32(d + INFO_BLOCKS);
	/* the header and the root at least, all inside the file */
	if (n <= QT_TREEOFF || (uint64_t)n << QT_BLKSIZE_BITS > len)
		return ORLOV_ERR_QUOTA_FILE;
	q->buf = calloc(n, QT_BLKSIZE);
	if (!q->buf)
		return ENOMEM;
	q->nalloc = n;
	memcpy(q->buf, d, (size_t)n << QT_BLKSIZE_BITS);
	if (check_blk(q, info(q, INFO_FREE_BLK)) ||
	    check_blk(q, info(q, INFO_FREE_ENTRY))) {
		qtree_free(q);
		return ORLOV_ERR_QUOTA_FILE;
	}
	return 0;
}

void qtree_free(struct qtree *q)
{
	free(q->buf);
	memset(q, 0, sizeof(*q));
}

errcode_t qtree_find(const struct qtree *q, uint32_t id, uint32_t *off)
{
	uint32_t blk = QT_TREEOFF, i;
	const unsigned char *b;
	int depth;

	*off = 0;
	for (depth = 0; depth < QT_DEPTH; depth++) {
		blk = get_le32(blk_of(q, blk) + 4 * get_index(id, depth));
		if (!blk)
			return 0;
		if (check_blk(q, blk))
			return ORLOV_ERR_QUOTA_FILE;
	}
	/* find_block_dqentry: v2r1_is_id skips the unused (all-zero) ones */
	b = blk_of(q, blk) + DQDBHEADER;
	for (i = 0; i < DQSTR_IN_BLK; i++, b += DQENTRY) {
		static const unsigned char zero[DQENTRY];

		if (memcmp(b, zero, DQENTRY) && get_le32(b + D_ID) == id) {
			*off = (blk << QT_BLKSIZE_BITS) + DQDBHEADER +
			       i * DQENTRY;
			return 0;
		}
	}
	return ORLOV_ERR_QUOTA_FILE;	/* the tree points at no entry */
}

/* get_free_dqblk: the first block of the free list, else a new one at
 * the file's end (written zero at once, "to assure block allocation"). */
static errcode_t get_free_dqblk(struct qtree *q, uint32_t *blk)
{
	uint32_t n = qtree_blocks(q);

	if (info(q, INFO_FREE_BLK)) {
		*blk = info(q, INFO_FREE_BLK);
		set_info(q, INFO_FREE_BLK, get_le32(blk_of(q, *blk) + DH_NEXT));
		if (check_blk(q, info(q, INFO_FREE_BLK)))
			return ORLOV_ERR_QUOTA_FILE;
	} else {
		if (n == UINT32_MAX)
			return ORLOV_ERR_QUOTA_FILE;
		if (n >= q->nalloc) {
			uint32_t cap = q->nalloc * 2;
			unsigned char *b = realloc(q->buf,
						   (size_t)cap << QT_BLKSIZE_BITS);

			if (!b)
				return ENOMEM;
			q->buf = b;
			q->nalloc = cap;
		}
		*blk = n;
		set_info(q, INFO_BLOCKS, n + 1);
	}
	/* the callers fill it from a zeroed buffer */
	memset(blk_of(q, *blk), 0, QT_BLKSIZE);
	return 0;
}

/* remove_free_dqentry: @blk, now full, off the list of data blocks with
 * free entries. */
static void remove_free_dqentry(struct qtree *q, uint32_t blk)
{
	unsigned char *dh = blk_of(q, blk);
	uint32_t next = get_le32(dh + DH_NEXT), prev = get_le32(dh + DH_PREV);

	if (next)
		put_le32(blk_of(q, next) + DH_PREV, prev);
	if (prev)
		put_le32(blk_of(q, prev) + DH_NEXT, next);
	else
		set_info(q, INFO_FREE_ENTRY, next);
	put_le32(dh + DH_NEXT, 0);
	put_le32(dh + DH_PREV, 0);
}

/* find_free_dqentry: a slot in the first data block with free entries,
 * or in a new one that heads that list; *blk the block. */
static errcode_t find_free_dqentry(struct qtree *q, uint32_t *blk,
				   uint32_t *off)
{
	static const unsigned char zero[DQENTRY];
	unsigned char *dh, *e;
	errcode_t err;
	uint32_t i;

	if (info(q, INFO_FREE_ENTRY)) {
		*blk = info(q, INFO_FREE_ENTRY);
	} else {
		err = get_free_dqblk(q, blk);
		if (err)
			return err;
		set_info(q, INFO_FREE_ENTRY, *blk);
	}
	dh = blk_of(q, *blk);
	/* Block will be full? */
	if (get_le16(dh + DH_ENTRIES) + 1u >= DQSTR_IN_BLK)
		remove_free_dqentry(q, *blk);
	put_le16(dh + DH_ENTRIES, (uint16_t)(get_le16(dh + DH_ENTRIES) + 1));
	for (i = 0, e = dh + DQDBHEADER; i < DQSTR_IN_BLK; i++, e += DQENTRY)
		if (!memcmp(e, zero, DQENTRY))
			break;
	if (i == DQSTR_IN_BLK)
		return ORLOV_ERR_QUOTA_FILE;	/* "Data block full but it shouldn't" */
	*off = (*blk << QT_BLKSIZE_BITS) + DQDBHEADER + i * DQENTRY;
	return 0;
}

/* do_insert_tree: down from @blks[@depth], a block made for each level
 * the id's path lacks (numbered top down), the reference to it stored
 * once the level below is made. */
static errcode_t do_insert_tree(struct qtree *q, uint32_t id, uint32_t *blks,
				int depth, uint32_t *off)
{
	unsigned int idx = get_index(id, depth);
	uint32_t newblk;
	errcode_t err;

	if (!blks[depth]) {
		err = get_free_dqblk(q, &blks[depth]);
		if (err)
			return err;
	}
	newblk = get_le32(blk_of(q, blks[depth]) + 4 * idx);
	if (check_blk(q, newblk))
		return ORLOV_ERR_QUOTA_FILE;
	blks[depth + 1] = newblk;
	if (depth == QT_DEPTH - 1) {
		if (newblk)
			return ORLOV_ERR_QUOTA_FILE;	/* "already present" */
		err = find_free_dqentry(q, &blks[depth + 1], off);
	} else {
		err = do_insert_tree(q, id, blks, depth + 1, off);
	}
	if (!err && !newblk)
		put_le32(blk_of(q, blks[depth]) + 4 * idx, blks[depth + 1]);
	return err;
}

errcode_t qtree_insert(struct qtree *q, uint32_t id, uint32_t *off)
{
	uint32_t blks[QT_DEPTH + 1] = { QT_TREEOFF };
	errcode_t err = do_insert_tree(q, id, blks, 0, off);

	/* dquot_acquire's commit_dqblk writes the new dquot, no usage yet */
	if (!err)
		qtree_set_usage(q, *off, id, 0, 0);
	return err;
}

void qtree_usage(const struct qtree *q, uint32_t off, uint64_t *inodes,
		 uint64_t *space)
{
	*inodes = get_le64(q->buf + off + D_CURINODES);
	*space = get_le64(q->buf + off + D_CURSPACE);
}

int qtree_has_limits(const struct qtree *q, uint32_t off)
{
	static const unsigned char zero[32];

	/* dqb_ihardlimit, isoftlimit, then bhardlimit, bsoftlimit */
	return memcmp(q->buf + off + D_IHARDLIMIT, zero, 16) ||
	       memcmp(q->buf + off + D_BHARDLIMIT, zero, 16);
}

void qtree_set_usage(struct qtree *q, uint32_t off, uint32_t id,
		     uint64_t inodes, uint64_t space)
{
	static const unsigned char zero[DQENTRY];
	unsigned char *d = q->buf + off;

	put_le32(d + D_ID, id);
	put_le64(d + D_CURINODES, inodes);
	put_le64(d + D_CURSPACE, space);
	/* v2r1_mem2diskdqb: an entry that would read as unused (id 0,
	 * nothing charged, no limit) is marked by itime 1 */
	if (!memcmp(d, zero, DQENTRY))
		put_le64(d + D_ITIME, 1);
}
