// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/xblock.h"
#include "model/ext4/mballoc.h"
#include "lib/orlov_err.h"
#include "lib/util.h"

errcode_t xattr_blocks_init(struct xattr_blocks *xb, uint32_t block_size)
{
	memset(xb, 0, sizeof(*xb));
	xb->block_size = block_size;
	xb->share_below = EXT2_EXT_ATTR_REFCOUNT_MAX + 1;
	xb->scratch = malloc(block_size);
	return xb->scratch ? 0 : ENOMEM;
}

void xattr_blocks_free(struct xattr_blocks *xb)
{
	size_t i;

	for (i = 0; i < xb->n; i++)
		free(xb->b[i].data);
	free(xb->b);
	free(xb->by_hash);
	free(xb->by_blk);
	free(xb->scratch);
	memset(xb, 0, sizeof(*xb));
}

static size_t bucket(const struct xattr_blocks *xb, uint32_t key)
{
	/* Fibonacci hashing: block numbers and xattr hashes both cluster */
	return (size_t)((key * 2654435769U) >> 7) & (xb->nbuckets - 1);
}

static uint32_t blk_key(fsblk_t blk)
{
	return (uint32_t)(blk ^ (blk >> 32));
}

static void cache_unlink(struct xattr_blocks *xb, size_t i)
{
	size_t *p = &xb->by_hash[bucket(xb, xb->b[i].chash)];

	while (*p && *p != i + 1)
		p = &xb->b[*p - 1].next_hash;
	if (*p)
		*p = xb->b[i].next_hash;
	xb->b[i].cached = 0;
}

/* ext2_xattr_cache_insert: at the head of its chain, unless it is there */
static void cache_insert(struct xattr_blocks *xb, size_t i)
{
	size_t *head;

	if (xb->b[i].cached)
		return;
	xb->b[i].chash = get_le32(xb->b[i].data + 12);
	head = &xb->by_hash[bucket(xb, xb->b[i].chash)];
	xb->b[i].next_hash = *head;
	*head = i + 1;
	xb->b[i].cached = 1;
}

/* Rebuild both indexes with twice the buckets; the cache chains keep their
 * newest-first order (walked backwards, then pushed). */
static errcode_t rehash(struct xattr_blocks *xb)
{
	size_t nb = xb->nbuckets ? xb->nbuckets * 2 : 64, i, k;
	size_t *bh = calloc(nb, sizeof(*bh)), *bb = calloc(nb, sizeof(*bb));
	size_t *order = malloc((xb->n ? xb->n : 1) * sizeof(*order)), m = 0;

	if (!bh || !bb || !order) {
		free(bh);
		free(bb);
		free(order);
		return ENOMEM;
	}
	for (k = 0; k < xb->nbuckets; k++) {
		size_t start = m;

		for (i = xb->by_hash[k]; i; i = xb->b[i - 1].next_hash)
			order[m++] = i - 1;
		/* oldest first, so that pushing each keeps newest first */
		for (i = 0; i < (m - start) / 2; i++) {
			size_t t = order[start + i];

			order[start + i] = order[m - 1 - i];
			order[m - 1 - i] = t;
		}
	}
	free(xb->by_hash);
	free(xb->by_blk);
	xb->by_hash = bh;
	xb->by_blk = bb;
	xb->nbuckets = nb;
	for (i = 0; i < m; i++) {
		xb->b[order[i]].cached = 0;
		cache_insert(xb, order[i]);
	}
	for (i = 0; i < xb->n; i++) {
		size_t *head = &bb[bucket(xb, blk_key(xb->b[i].blk))];

		xb->b[i].next_blk = *head;
		*head = i + 1;
	}
	free(order);
	return 0;
}

static errcode_t add_blk(struct xattr_blocks *xb, fsblk_t blk,
			 const unsigned char *data, size_t *idx)
{
	struct xattr_blk *b;
	size_t *head;

	if (grow_array(&xb->b, &xb->cap, xb->n + 1, sizeof(*xb->b), 16))
		return ENOMEM;
	if (xb->n + 1 > xb->nbuckets && rehash(xb))
		return ENOMEM;
	b = &xb->b[xb->n];
	memset(b, 0, sizeof(*b));
	b->data = malloc(xb->block_size);
	if (!b->data)
		return ENOMEM;
	memcpy(b->data, data, xb->block_size);
	b->blk = blk;
	head = &xb->by_blk[bucket(xb, blk_key(blk))];
	b->next_blk = *head;
	*head = xb->n + 1;
	*idx = xb->n++;
	return 0;
}

static struct xattr_blk *find_blk(const struct xattr_blocks *xb, fsblk_t blk)
{
	size_t i;

	if (!blk || !xb->nbuckets)
		return NULL;
	for (i = xb->by_blk[bucket(xb, blk_key(blk))]; i; i = xb->b[i - 1].next_blk)
		if (xb->b[i - 1].blk == blk)
			return &xb->b[i - 1];
	return NULL;
}

const unsigned char *xattr_blocks_data(const struct xattr_blocks *xb,
				       fsblk_t blk)
{
	const struct xattr_blk *b = find_blk(xb, blk);

	return b ? b->data : NULL;
}

int xattr_blocks_known(const struct xattr_blocks *xb, fsblk_t blk)
{
	return find_blk(xb, blk) != NULL;
}

errcode_t xattr_blocks_adopt(struct xattr_blocks *xb, fsblk_t blk,
			     const unsigned char *data)
{
	size_t i;

	return add_blk(xb, blk, data, &i);
}

void xattr_blocks_cache_insert(struct xattr_blocks *xb, fsblk_t blk)
{
	struct xattr_blk *b = find_blk(xb, blk);

	if (b)
		cache_insert(xb, (size_t)(b - xb->b));
}

/* ext2_xattr_cache_find: the newest cached block with the same hash and
 * the same entries, unless its refcount is already over the maximum. */
static struct xattr_blk *cache_find(struct xattr_blocks *xb,
				    const unsigned char *header)
{
	uint32_t hash = xattr_block_hash(header);
	size_t i;

	if (!hash || !xb->nbuckets)
		return NULL;
	for (i = xb->by_hash[bucket(xb, hash)]; i; i = xb->b[i - 1].next_hash) {
		struct xattr_blk *b = &xb->b[i - 1];

		if (b->chash != hash ||
		    xattr_block_refcount(b->data) >= xb->share_below ||
		    xattr_block_cmp(header, b->data))
			continue;
		return b;
	}
	return NULL;
}

/* ext2_xattr_release_block: the last user frees it, others drop a ref. */
static void release_block(struct fs_state *fs, struct xattr_blocks *xb,
			  uint32_t ino, struct xattr_blk *b)
{
	uint32_t refs = xattr_block_refcount(b->data);

	if (refs == 1) {
		if (fs->driver == ALLOC_EXT4)
			ext4_free_blocks(fs, ino, b->blk, 1);
		else
			ext2_free_blocks(fs, ino, (uint32_t)b->blk, 1);
		if (b->cached)
			cache_unlink(xb, (size_t)(b - xb->b));
		b->blk = 0;
		return;
	}
	xattr_block_set_refcount(b->data, refs - 1);
}

/* A new block at the inode's group: ext4_new_meta_blocks (an inode that
 * is not extent-mapped scans only the groups below 2^32), or the ext2
 * driver's ext2_new_blocks, whose images stay below 2^32. */
static errcode_t new_block(struct fs_state *fs, struct xattr_blocks *xb,
			   uint32_t ino, uint32_t group, int extents,
			   struct blk_alloc_info *bi, fsblk_t *blk)
{
	unsigned long count = 1;
	uint32_t got, b32;
	errcode_t err;

	if (fs->driver == ALLOC_EXT4) {
		struct mb_request ar = {
			.len = 1, .goal = group_first_block(fs, group),
			.indirect = !extents, .ino = ino,
		};

		return ext4_mb_new_blocks_ar(fs, &ar, blk, &got);
	}
	err = ext2_new_blocks(fs, ino, xb->noreserve ? NULL : bi,
			      (uint32_t)group_first_block(fs, group), &count,
			      &b32);
	*blk = b32;
	return err;
}

errcode_t ext2_xattr_set(struct fs_state *fs, struct xattr_blocks *xb,
			 uint32_t ino, uint32_t group, int extents,
			 struct blk_alloc_info *bi, fsblk_t *file_acl,
			 const struct xattr_disk *d, int remove)
{
	uint32_t bs = xb->block_size;
	struct xattr_blk *ob = NULL, *nb;
	size_t old = 0, new = 0;	/* index + 1; 0: none */
	unsigned char *header = xb->scratch;
	errcode_t err;

	if (*file_acl) {
		ob = find_blk(xb, *file_acl);
		/* Only inodes of this run are changed, and their blocks are
		 * all known here. */
		if (!ob)
			return ORLOV_ERR_CORRUPT;
		old = (size_t)(ob - xb->b) + 1;
	}
	if (remove && (!old || !xattr_block_has(ob->data, d)))
		return 0;
	if (old)
		memcpy(header, ob->data, bs);
	else
		xattr_block_init(header, bs);
	/* The size check comes before the block is touched. */
	err = xattr_block_set(header, bs, d, remove, xb->name_hash);
	if (err)
		return err;
	if (old && xattr_block_refcount(ob->data) == 1) {
		/* Only this inode uses it: edited in place, and out of the
		 * cache until ext2_xattr_set2 decides. */
		memcpy(ob->data, header, bs);
		header = ob->data;
		if (ob->cached)
			cache_unlink(xb, old - 1);
	} else {
		xattr_block_set_refcount(header, 1);
	}

	if (!xattr_block_is_empty(header)) {
		nb = cache_find(xb, header);
		if (nb) {
			new = (size_t)(nb - xb->b) + 1;
			if (new != old)
				xattr_block_set_refcount(nb->data,
					xattr_block_refcount(nb->data) + 1);
		} else if (old && header == xb->b[old - 1].data) {
			new = old;
			cache_insert(xb, old - 1);
		} else {
			fsblk_t blk;

			err = new_block(fs, xb, ino, group, extents, bi, &blk);
			if (!err)
				err = add_blk(xb, blk, header, &new);
			if (err)
				return err;
			cache_insert(xb, new);
			new++;
			xb->allocated = 1;
		}
	}
	*file_acl = new ? xb->b[new - 1].blk : 0;
	if (old && old != new)
		release_block(fs, xb, ino, &xb->b[old - 1]);
	return 0;
}
