// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What waits for the commit: the staged inodes (an inode cache, by
 * number, that the engine reads back and edits, and the commit writes in
 * inode order) and the held writes to blocks in use; the one way data,
 * indirect and directory blocks reach the image before it; and the
 * engine's reads of inodes and blocks.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "image/image_int.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* What waits for the commit: staged inodes and held block writes. */
void free_held(struct image *img)
{
	struct inode_cache *c = &img->icache;
	struct held_writes *h = &img->held;
	size_t k;

	for (k = 0; k < c->n; k++)
		free(c->inodes[k].tail);
	for (k = 0; k < h->n; k++)
		free(h->late[k].data);
	free(c->inodes);
	free(h->late);
	keymap_free(&c->idx);
	memset(c, 0, sizeof(*c));
	memset(h, 0, sizeof(*h));
}

errcode_t image_lookup_dir(struct image *img, const char *path, uint32_t *ino)
{
	ext2_ino_t i;
	struct ext2_inode inode;
	errcode_t err;

	err = ext2fs_namei(img->fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &i);
	if (err)
		return err;
	err = ext2fs_read_inode(img->fs, i, &inode);
	if (err)
		return err;
	if (!LINUX_S_ISDIR(inode.i_mode))
		return ORLOV_ERR_NOT_DIR;
	*ino = i;
	return 0;
}

errcode_t image_read_inode(struct image *img, uint32_t ino,
			   struct ext2_inode_large *inode)
{
	memset(inode, 0, sizeof(*inode));
	return ext2fs_read_inode_full(img->fs, ino, (struct ext2_inode *)inode,
				      sizeof(*inode));
}

errcode_t image_read_block(struct image *img, uint32_t blk, void *buf)
{
	return io_channel_read_blk64(img->fs->io, blk, 1, buf);
}

/*
 * The one way blocks reach the image before commit.  Blocks free on disk
 * are written now: nothing points at them yet.  A block already in use (an
 * existing directory's, an attribute block whose refcount grows) is held
 * for image_commit, so that until then the filesystem on disk is the one
 * that was opened.
 */
errcode_t put_blocks(struct image *img, uint32_t blk, uint32_t count,
		     const void *buf, int link)
{
	ext2_filsys e = img->fs;
	struct held_writes *h = &img->held;
	const unsigned char *p = buf;
	uint32_t i;

	if (img->dry)
		return 0;
	if (ext2fs_test_block_bitmap_range2(e->block_map, blk, count))
		return io_channel_write_blk64(e->io, blk, (int)count, buf);
	for (i = 0; i < count; i++, p += e->blocksize) {
		struct late *l;
		errcode_t err;

		if (!ext2fs_test_block_bitmap2(e->block_map, blk + i)) {
			err = io_channel_write_blk64(e->io, blk + i, 1, p);
			if (err)
				return err;
			continue;
		}
		if (grow_array(&h->late, &h->cap, h->n + 1, sizeof(*h->late), 64))
			return ENOMEM;
		l = &h->late[h->n];
		l->data = malloc(e->blocksize);
		if (!l->data)
			return ENOMEM;
		memcpy(l->data, p, e->blocksize);
		l->blk = blk + i;
		l->link = link;
		h->n++;
	}
	return 0;
}

errcode_t image_write_blocks(struct image *img, uint32_t blk, uint32_t count,
			     const void *buf)
{
	return put_blocks(img, blk, count, buf, 0);
}

/* The staged entry of @ino, or NULL.  Its address is the cache's own:
 * the next image_stage_inode may move it, so it never leaves this file. */
static struct staged *staged_of(struct image *img, uint32_t ino)
{
	size_t i;

	return keymap_get(&img->icache.idx, ino, &i) ? &img->icache.inodes[i] :
	       NULL;
}

errcode_t image_read_staged(struct image *img, uint32_t ino,
			    struct ext2_inode_large *inode)
{
	const struct staged *st = staged_of(img, ino);

	if (!st)
		return ORLOV_ERR_CORRUPT;
	*inode = st->inode;
	return 0;
}

errcode_t image_stage_inode(struct image *img, uint32_t ino,
			    const struct ext2_inode_large *inode)
{
	struct staged *old = staged_of(img, ino);
	struct inode_cache *c = &img->icache;

	if (old) {
		old->inode = *inode;
		return 0;
	}
	if (grow_array(&c->inodes, &c->cap, c->n + 1, sizeof(*c->inodes), 1024) ||
	    keymap_add(&c->idx, ino, c->n))
		return ENOMEM;
	c->inodes[c->n].ino = ino;
	c->inodes[c->n].inode = *inode;
	c->inodes[c->n].tail = NULL;
	/* the on-disk map: image_commit has not touched it yet */
	c->inodes[c->n].existed =
		ext2fs_test_inode_bitmap2(img->fs->inode_map, ino) != 0;
	c->n++;
	return 0;
}

size_t image_inode_tail_size(const struct image *img)
{
	size_t isz = EXT2_INODE_SIZE(img->fs->super);

	return isz > sizeof(struct ext2_inode_large) ?
	       isz - sizeof(struct ext2_inode_large) : 0;
}

errcode_t image_stage_inode_tail(struct image *img, uint32_t ino,
				 const unsigned char *tail)
{
	struct staged *st = staged_of(img, ino);
	size_t n = image_inode_tail_size(img);

	if (!st || !n)
		return ORLOV_ERR_CORRUPT;
	if (!st->tail && !(st->tail = malloc(n)))
		return ENOMEM;
	memcpy(st->tail, tail, n);
	return 0;
}

errcode_t image_read_inode_tail(struct image *img, uint32_t ino,
				unsigned char *tail)
{
	size_t isz = EXT2_INODE_SIZE(img->fs->super), n = image_inode_tail_size(img);
	unsigned char *buf = malloc(isz);
	errcode_t err;

	if (!buf)
		return ENOMEM;
	err = ext2fs_read_inode_full(img->fs, ino, (struct ext2_inode *)buf,
				     (int)isz);
	if (!err)
		memcpy(tail, buf + isz - n, n);
	free(buf);
	return err;
}

static int staged_cmp(const void *a, const void *b)
{
	const struct staged *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* In inode order, so inode table blocks are written sequentially; the
 * index by number goes (the sort has changed the positions). */
void icache_sort(struct inode_cache *c)
{
	if (c->n > 1)
		qsort(c->inodes, c->n, sizeof(*c->inodes), staged_cmp);
	keymap_free(&c->idx);
}

/* Inode-table blocks read and written at a time. */
#define ITABLE_RUN 64

/* Put staged inode @st into its slot in the table blocks at @slot. */
static void encode_inode(struct image *img, const struct staged *st,
			 unsigned char *slot, uint32_t isz)
{
	size_t n = isz < sizeof(st->inode) ? isz : sizeof(st->inode);

	/* A new inode is zeroed to its full size first, as the kernel's
	 * first write of a new inode does: nothing of a deleted one stays. */
	if (!st->existed)
		memset(slot, 0, isz);
#ifdef WORDS_BIGENDIAN
	ext2fs_swap_inode_full(img->fs, (struct ext2_inode_large *)img->ibuf,
			       (struct ext2_inode_large *)&st->inode, 1, (int)n);
	memcpy(slot, img->ibuf, n);
#else
	memcpy(slot, &st->inode, n);
#endif
	if (st->tail)	/* the rest of a large inode: in-inode attributes */
		memcpy(slot + sizeof(st->inode), st->tail,
		       image_inode_tail_size(img));
	/* metadata_csum: over the whole slot, tail included (0 without) */
	ext2fs_inode_csum_set(img->fs, st->ino, (struct ext2_inode_large *)slot);
}

/*
 * The staged inodes that existed on disk before this run (@existed), or
 * the new ones, written as runs of whole inode-table blocks (they are in
 * inode order): a few large writes instead of one per inode.
 */
errcode_t write_inodes(struct image *img, const struct inode_cache *c,
		       int existed)
{
	ext2_filsys e = img->fs;
	uint32_t isz = EXT2_INODE_SIZE(e->super), bs = e->blocksize;
	uint32_t ipg = e->super->s_inodes_per_group;
	unsigned char *buf;
	errcode_t err = 0;
	size_t k = 0, j;

	buf = malloc((size_t)ITABLE_RUN * bs);
	if (!buf)
		return ENOMEM;
	while (!err && k < c->n) {
		uint32_t group = (c->inodes[k].ino - 1) / ipg;
		uint64_t first = (uint64_t)((c->inodes[k].ino - 1) % ipg) * isz / bs;
		uint64_t last = first;
		blk64_t table = ext2fs_inode_table_loc(e, group);

		if (c->inodes[k].existed != existed) {
			k++;
			continue;
		}
		for (j = k; j < c->n; j++) {
			uint32_t ino = c->inodes[j].ino;
			uint64_t b = (uint64_t)((ino - 1) % ipg) * isz / bs;

			if ((ino - 1) / ipg != group || b >= first + ITABLE_RUN)
				break;
			if (c->inodes[j].existed == existed)
				last = b;
		}
		if (!table || table + last >= ext2fs_blocks_count(e->super)) {
			err = ORLOV_ERR_CORRUPT;
			break;
		}
		err = io_channel_read_blk64(e->io, table + first,
					    (int)(last - first + 1), buf);
		for (; !err && k < j; k++) {
			const struct staged *st = &c->inodes[k];
			uint64_t off = (uint64_t)((st->ino - 1) % ipg) * isz -
				       first * bs;

			if (st->existed == existed)
				encode_inode(img, st, buf + off, isz);
		}
		if (!err)
			err = io_channel_write_blk64(e->io, table + first,
						     (int)(last - first + 1), buf);
	}
	free(buf);
	return err;
}

/* The held writes to blocks already in use (put_blocks), of one kind. */
errcode_t write_late(struct image *img, const struct held_writes *h, int link)
{
	errcode_t err;
	size_t k;

	for (k = 0; k < h->n; k++) {
		if (h->late[k].link != link)
			continue;
		err = io_channel_write_blk64(img->fs->io, h->late[k].blk, 1,
					     h->late[k].data);
		if (err)
			return err;
	}
	return 0;
}
