// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xblock.h"
#include "orlov_err.h"
#include "util.h"

errcode_t xattr_blocks_init(struct xattr_blocks *xb, uint32_t block_size)
{
	memset(xb, 0, sizeof(*xb));
	xb->block_size = block_size;
	xb->scratch = malloc(block_size);
	return xb->scratch ? 0 : ENOMEM;
}

void xattr_blocks_free(struct xattr_blocks *xb)
{
	size_t i;

	for (i = 0; i < xb->n; i++)
		free(xb->b[i].data);
	free(xb->b);
	free(xb->scratch);
	memset(xb, 0, sizeof(*xb));
}

static struct xattr_blk *find_blk(const struct xattr_blocks *xb, uint32_t blk)
{
	size_t i;

	for (i = 0; blk && i < xb->n; i++)
		if (xb->b[i].blk == blk)
			return &xb->b[i];
	return NULL;
}

const unsigned char *xattr_blocks_data(const struct xattr_blocks *xb,
				       uint32_t blk)
{
	const struct xattr_blk *b = find_blk(xb, blk);

	return b ? b->data : NULL;
}

errcode_t xattr_blocks_adopt(struct xattr_blocks *xb, uint32_t blk,
			     const unsigned char *data)
{
	struct xattr_blk *b;

	if (grow_array(&xb->b, &xb->cap, xb->n + 1, sizeof(*xb->b), 16))
		return ENOMEM;
	b = &xb->b[xb->n];
	b->data = malloc(xb->block_size);
	if (!b->data)
		return ENOMEM;
	memcpy(b->data, data, xb->block_size);
	b->blk = blk;
	b->cached = 0;
	xb->n++;
	return 0;
}

void xattr_blocks_cache_insert(struct xattr_blocks *xb, uint32_t blk)
{
	struct xattr_blk *b = find_blk(xb, blk);

	if (b && !b->cached)
		b->cached = ++xb->stamp;
}

/* ext2_xattr_cache_find: the newest cached block with the same hash and
 * the same entries, unless its refcount is already over the maximum. */
static struct xattr_blk *cache_find(struct xattr_blocks *xb,
				    const unsigned char *header)
{
	uint32_t hash = xattr_block_hash(header);
	struct xattr_blk *best = NULL;
	size_t i;

	if (!hash)
		return NULL;
	for (i = 0; i < xb->n; i++) {
		struct xattr_blk *b = &xb->b[i];

		if (!b->cached || xattr_block_hash(b->data) != hash)
			continue;
		if (best && best->cached > b->cached)
			continue;
		if (xattr_block_refcount(b->data) > EXT2_XATTR_REFCOUNT_MAX ||
		    xattr_block_cmp(header, b->data))
			continue;
		best = b;
	}
	return best;
}

/* ext2_xattr_release_block: the last user frees it, others drop a ref. */
static void release_block(struct fs_state *fs, uint32_t ino,
			  struct xattr_blk *b)
{
	uint32_t refs = xattr_block_refcount(b->data);

	if (refs == 1) {
		ext2_free_blocks(fs, ino, b->blk, 1);
		b->blk = 0;
		b->cached = 0;
		return;
	}
	xattr_block_set_refcount(b->data, refs - 1);
}

errcode_t ext2_xattr_set(struct fs_state *fs, struct xattr_blocks *xb,
			 uint32_t ino, uint32_t group,
			 struct blk_alloc_info *bi, uint32_t *file_acl,
			 const struct xattr_disk *d, int remove)
{
	uint32_t bs = xb->block_size;
	struct xattr_blk *old = NULL, *new = NULL;
	unsigned char *header = xb->scratch;
	errcode_t err;

	if (*file_acl) {
		old = find_blk(xb, *file_acl);
		/* Only inodes of this run are changed, and their blocks are
		 * all known here. */
		if (!old)
			return ORLOV_ERR_CORRUPT;
	}
	if (remove && (!old || !xattr_block_has(old->data, d)))
		return 0;
	if (old)
		memcpy(header, old->data, bs);
	else
		xattr_block_init(header, bs);
	/* The size check comes before the block is touched. */
	err = xattr_block_set(header, bs, d, remove);
	if (err)
		return err;
	if (old && xattr_block_refcount(old->data) == 1) {
		/* Only this inode uses it: edited in place, and out of the
		 * cache until ext2_xattr_set2 decides. */
		memcpy(old->data, header, bs);
		header = old->data;
		old->cached = 0;
	} else {
		xattr_block_set_refcount(header, 1);
	}

	if (!xattr_block_is_empty(header)) {
		new = cache_find(xb, header);
		if (new && new != old) {
			xattr_block_set_refcount(new->data,
				xattr_block_refcount(new->data) + 1);
		} else if (!new && old && header == old->data) {
			new = old;
			new->cached = ++xb->stamp;
		} else if (!new) {
			unsigned long count = 1;
			uint32_t blk;

			err = ext2_new_blocks(fs, ino, bi,
					      group_first_block(fs, group),
					      &count, &blk);
			if (err)
				return err;
			if (grow_array(&xb->b, &xb->cap, xb->n + 1,
				       sizeof(*xb->b), 16))
				return ENOMEM;
			new = &xb->b[xb->n];
			new->data = malloc(bs);
			if (!new->data)
				return ENOMEM;
			/* grow_array may have moved the array */
			old = *file_acl ? find_blk(xb, *file_acl) : NULL;
			xb->n++;
			new->blk = blk;
			memcpy(new->data, header, bs);
			new->cached = ++xb->stamp;
			xb->allocated = 1;
		}
	}
	*file_acl = new ? new->blk : 0;
	if (old && old != new)
		release_block(fs, ino, old);
	return 0;
}
