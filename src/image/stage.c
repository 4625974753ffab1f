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
#include <unistd.h>

#include "image/image_int.h"
#include "lib/clock.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

static void icache_free(struct inode_cache *c);

/* What waits for the commit: staged inodes and held block writes. */
void free_held(struct image *img)
{
	struct inode_cache *c = &img->icache;
	struct held_writes *h = &img->held;
	size_t k;

	for (k = 0; k < h->n; k++)
		free(h->late[k].data);
	free(h->late);
	icache_free(c);
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

errcode_t image_read_block(struct image *img, uint64_t blk, void *buf)
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
errcode_t put_blocks(struct image *img, blk64_t blk, uint32_t count,
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

errcode_t image_write_blocks(struct image *img, uint64_t blk, uint32_t count,
			     const void *buf)
{
	return put_blocks(img, blk, count, buf, 0);
}

/*
 * The staged inodes, by number: ICHUNK records a chunk, chunks in leaves
 * of LEAF made when first used, at most a budget of chunks in memory.
 * Beyond it the chunk the clock finds unused longest goes to the spill
 * file, at its own place there (chunk number times its size: no index),
 * and comes back when an inode of it is read or staged again.  The
 * engine works on a few directories at a time, in a few groups, so few
 * chunks are in use at once whatever the tree's size.
 */
#define ICHUNK 64
#define LEAF 1024
#define STAGE_BUDGET (8u << 20)

static size_t chunk_bytes(const struct inode_cache *c)
{
	return (size_t)ICHUNK * c->recsz;
}

/* The first use: records sized for the image's inodes, and the budget
 * (image_opts.stage_budget: the tests' small one). */
static errcode_t icache_init(struct image *img)
{
	struct inode_cache *c = &img->icache;
	size_t budget = img->stage_budget ? img->stage_budget : STAGE_BUDGET;

	if (c->recsz)
		return 0;
	c->tailsz = (uint32_t)image_inode_tail_size(img);
	c->recsz = (uint32_t)sizeof(struct ext2_inode_large) + c->tailsz;
	c->nchunks = (uint64_t)img->fs->super->s_inodes_count / ICHUNK + 1;
	c->nleaf = (size_t)(c->nchunks / LEAF + 1);
	c->leaf = calloc(c->nleaf, sizeof(*c->leaf));
	if (!c->leaf || clock_init(&c->clk, chunk_bytes(c), budget)) {
		free(c->leaf);
		clock_free(&c->clk);
		memset(c, 0, sizeof(*c));
		return ENOMEM;
	}
	return 0;
}

static void icache_free(struct inode_cache *c)
{
	size_t k;

	for (k = 0; k < c->nleaf; k++)
		free(c->leaf[k]);
	if (c->recsz)
		clock_free(&c->clk);
	free(c->leaf);
	free(c->rbuf);
	memset(c, 0, sizeof(*c));
}

/* Chunk @n's entry, or NULL when it was never used (and !@make). */
static struct ichunk *chunk_of(const struct inode_cache *c, uint64_t n,
			       int make)
{
	struct ichunk **l;

	if (n >= c->nchunks)
		return NULL;
	l = &c->leaf[n / LEAF];
	if (!*l && make)
		*l = calloc(LEAF, sizeof(**l));
	return *l ? &(*l)[n % LEAF] : NULL;
}

/* A slot for chunk @n; the chunk it held is on the spill file from now
 * on if it changed there. */
static errcode_t take_slot(struct inode_cache *c, uint64_t n, size_t *s)
{
	uint64_t old;
	int written;
	errcode_t err = clock_take(&c->clk, n, s, &old, &written);

	if (err && err != ENOMEM)
		c->spill_failed = "writing";
	if (!err && old != CLOCK_NONE) {
		struct ichunk *o = chunk_of(c, old, 0);

		o->on_file |= written;
		o->slot = 0;
	}
	return err;
}

/*
 * The record of @ino in memory at *rec, its chunk at *ch: brought back
 * from the spill file, or new (@make).  When @ino is not staged and
 * !@make, *rec is NULL.  *rec is valid until the next call: the next
 * chunk brought in may take its place, so it never leaves this file.
 */
static errcode_t record_of(struct image *img, uint32_t ino, int make,
			   struct ichunk **ch, unsigned char **rec)
{
	struct inode_cache *c = &img->icache;
	uint64_t n = (uint64_t)(ino - 1) / ICHUNK;
	uint32_t k = (ino - 1) % ICHUNK;
	struct clock_slot *sl;
	errcode_t err;
	size_t s;

	*rec = NULL;
	err = icache_init(img);
	if (err)
		return err;
	*ch = chunk_of(c, n, make);
	if (!*ch)
		return make ? ENOMEM : 0;
	if (!make && !((*ch)->staged >> k & 1))
		return 0;
	if (!(*ch)->slot) {
		err = take_slot(c, n, &s);
		if (!err && (*ch)->on_file && (err = clock_read(&c->clk, s)))
			c->spill_failed = "reading";
		if (err)
			return err;
		(*ch)->slot = (uint32_t)s + 1;
	}
	sl = &c->clk.slot[(*ch)->slot - 1];
	sl->ref = 1;
	sl->dirty |= make;
	*rec = sl->data + (size_t)k * c->recsz;
	return 0;
}

/* Chunk @n's records for the commit, read-only: in memory, or read back
 * into a buffer of their own (nothing goes to the spill file now). */
static errcode_t chunk_peek(struct inode_cache *c, uint64_t n,
			    const unsigned char **data)
{
	const struct ichunk *ch = chunk_of(c, n, 0);
	errcode_t err;

	if (ch->slot) {
		*data = c->clk.slot[ch->slot - 1].data;
		return 0;
	}
	if (!c->rbuf && !(c->rbuf = malloc(chunk_bytes(c))))
		return ENOMEM;
	if (c->rbuf_chunk != n + 1) {
		c->rbuf_chunk = 0;
		err = clock_read_file(&c->clk, n, 1, c->rbuf);
		if (err) {
			c->spill_failed = "reading";
			return err;
		}
		c->rbuf_chunk = n + 1;
	}
	*data = c->rbuf;
	return 0;
}

uint32_t icache_next(const struct inode_cache *c, struct icache_it *it)
{
	while (it->chunk < c->nchunks) {
		const struct ichunk *l = c->leaf[it->chunk / LEAF];

		if (!l) {
			it->chunk = (it->chunk / LEAF + 1) * LEAF;
			it->k = 0;
			continue;
		}
		for (; it->k < ICHUNK; it->k++)
			if (l[it->chunk % LEAF].staged >> it->k & 1)
				return (uint32_t)(it->chunk * ICHUNK + it->k++ + 1);
		it->chunk++;
		it->k = 0;
	}
	return 0;
}

errcode_t image_read_staged(struct image *img, uint32_t ino,
			    struct ext2_inode_large *inode)
{
	struct ichunk *ch;
	unsigned char *rec;
	errcode_t err = record_of(img, ino, 0, &ch, &rec);

	if (err)
		return err;
	if (!rec)
		return ORLOV_ERR_CORRUPT;
	memcpy(inode, rec, sizeof(*inode));
	return 0;
}

errcode_t image_stage_inode(struct image *img, uint32_t ino,
			    const struct ext2_inode_large *inode)
{
	struct ichunk *ch;
	unsigned char *rec;
	uint64_t bit = 1ULL << ((ino - 1) % ICHUNK);
	errcode_t err = record_of(img, ino, 1, &ch, &rec);

	if (err)
		return err;
	if (ext2fs_has_feature_quota(img->fs->super)) {
		struct ext2_inode_large old;

		memcpy(&old, rec, sizeof(old));
		err = quota_charge_staged(img, ino, (ch->staged & bit) ?
					  &old : NULL, inode);
		if (err)
			return err;
	}
	memcpy(rec, inode, sizeof(*inode));
	if (ch->staged & bit)
		return 0;
	ch->staged |= bit;
	/* the on-disk map: image_commit has not touched it yet */
	if (ext2fs_test_inode_bitmap2(img->fs->inode_map, ino))
		ch->existed |= bit;
	img->icache.n++;
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
	struct ichunk *ch;
	unsigned char *rec;
	size_t n = image_inode_tail_size(img);
	errcode_t err = record_of(img, ino, 0, &ch, &rec);

	if (err)
		return err;
	if (!rec || !n)
		return ORLOV_ERR_CORRUPT;
	/* changed: the chunk must go to the spill file again */
	img->icache.clk.slot[ch->slot - 1].dirty = 1;
	ch->tailed |= 1ULL << ((ino - 1) % ICHUNK);
	memcpy(rec + sizeof(struct ext2_inode_large), tail, n);
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

/* Inode-table blocks read and written at a time. */
#define ITABLE_RUN 64

/* Put staged inode @ino, record @rec, into its slot in the table blocks
 * at @slot. */
static void encode_inode(struct image *img, uint32_t ino, int existed,
			 int tailed, const unsigned char *rec,
			 unsigned char *slot, uint32_t isz)
{
	size_t n = isz < sizeof(struct ext2_inode_large) ?
		   isz : sizeof(struct ext2_inode_large);

	/* A new inode is zeroed to its full size first, as the kernel's
	 * first write of a new inode does: nothing of a deleted one stays. */
	if (!existed)
		memset(slot, 0, isz);
#ifdef WORDS_BIGENDIAN
	ext2fs_swap_inode_full(img->fs, (struct ext2_inode_large *)img->ibuf,
			       (struct ext2_inode_large *)rec, 1, (int)n);
	memcpy(slot, img->ibuf, n);
#else
	memcpy(slot, rec, n);
#endif
	if (tailed)	/* the rest of a large inode: in-inode attributes */
		memcpy(slot + sizeof(struct ext2_inode_large),
		       rec + sizeof(struct ext2_inode_large),
		       image_inode_tail_size(img));
	/* metadata_csum: over the whole slot, tail included (0 without) */
	ext2fs_inode_csum_set(img->fs, ino, (struct ext2_inode_large *)slot);
}

/* The next staged inode after @it that existed on disk (or is new: as
 * @existed), 0 at the end. */
static uint32_t next_of(const struct inode_cache *c, struct icache_it *it,
			int existed)
{
	uint32_t ino;

	while ((ino = icache_next(c, it)))
		if ((int)(chunk_of(c, (ino - 1) / ICHUNK, 0)->existed >>
			  ((ino - 1) % ICHUNK) & 1) == existed)
			break;
	return ino;
}

/* The inodes of one run of table blocks, @first to @last of @group,
 * from @ino on, encoded into @buf. */
static errcode_t encode_run(struct image *img, struct inode_cache *c,
			    struct icache_it *it, uint32_t ino, int existed,
			    uint64_t first, uint64_t last, unsigned char *buf)
{
	ext2_filsys e = img->fs;
	uint32_t isz = EXT2_INODE_SIZE(e->super), bs = e->blocksize;
	uint32_t ipg = e->super->s_inodes_per_group;
	uint32_t group = (ino - 1) / ipg;

	for (; ino && (ino - 1) / ipg == group; ino = next_of(c, it, existed)) {
		uint64_t b = (uint64_t)((ino - 1) % ipg) * isz / bs;
		uint64_t off = (uint64_t)((ino - 1) % ipg) * isz - first * bs;
		const struct ichunk *ch = chunk_of(c, (ino - 1) / ICHUNK, 0);
		uint32_t k = (ino - 1) % ICHUNK;
		const unsigned char *data;
		errcode_t err;

		if (b > last)
			break;
		err = chunk_peek(c, (ino - 1) / ICHUNK, &data);
		if (err)
			return err;
		encode_inode(img, ino, existed, (int)(ch->tailed >> k & 1),
			     data + (size_t)k * c->recsz, buf + off, isz);
	}
	return 0;
}

/*
 * The staged inodes that existed on disk before this run (@existed), or
 * the new ones, written as runs of whole inode-table blocks (from the
 * first of a group up to ITABLE_RUN blocks): a few large writes instead
 * of one per inode.
 */
errcode_t write_inodes(struct image *img, struct inode_cache *c, int existed)
{
	ext2_filsys e = img->fs;
	uint32_t isz = EXT2_INODE_SIZE(e->super), bs = e->blocksize;
	uint32_t ipg = e->super->s_inodes_per_group;
	struct icache_it it = { 0, 0 }, start;
	unsigned char *buf;
	errcode_t err = 0;
	uint32_t ino;

	buf = malloc((size_t)ITABLE_RUN * bs);
	if (!buf)
		return ENOMEM;
	ino = c->recsz ? next_of(c, &it, existed) : 0;
	while (!err && ino) {
		uint32_t group = (ino - 1) / ipg, first_ino = ino;
		uint64_t first = (uint64_t)((ino - 1) % ipg) * isz / bs;
		uint64_t last = first;
		blk64_t table = ext2fs_inode_table_loc(e, group);

		/* the run's end: the next inode beyond it starts the next */
		start = it;
		for (;;) {
			struct icache_it was = it;
			uint64_t b;

			ino = next_of(c, &it, existed);
			b = ino ? (uint64_t)((ino - 1) % ipg) * isz / bs : 0;
			if (!ino || (ino - 1) / ipg != group ||
			    b >= first + ITABLE_RUN) {
				it = was;
				break;
			}
			last = b;
		}
		if (!table || table + last >= ext2fs_blocks_count(e->super)) {
			err = ORLOV_ERR_CORRUPT;
			break;
		}
		err = io_channel_read_blk64(e->io, table + first,
					    (int)(last - first + 1), buf);
		if (!err)
			err = encode_run(img, c, &start, first_ino, existed,
					 first, last, buf);
		if (!err)
			err = io_channel_write_blk64(e->io, table + first,
						     (int)(last - first + 1), buf);
		ino = next_of(c, &it, existed);
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

const char *image_scratch_failed(const struct image *img)
{
	return img->icache.spill_failed;
}
