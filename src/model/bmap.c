// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "model/bmap.h"
#include "model/ext4/balloc.h"
#include "lib/orlov_err.h"

void ifile_init(struct ifile *f, uint32_t ino, uint32_t ipg)
{
	memset(f, 0, sizeof(*f));
	f->ino = ino;
	f->group = (ino - 1) / ipg;
}

static void ind_free(struct ind_node *n, uint32_t apb)
{
	uint32_t i;

	if (!n)
		return;
	if (n->child) {
		for (i = 0; i < apb; i++)
			ind_free(n->child[i], apb);
		free(n->child);
	}
	free(n->ptr);
	free(n);
}

static uint32_t apb_of(const struct fs_state *fs)
{
	return fs->g.block_size / 4;
}

void ifile_release(const struct fs_state *fs, struct ifile *f)
{
	int i;

	for (i = 0; i < 3; i++) {
		ind_free(f->ind[i], apb_of(fs));
		f->ind[i] = NULL;
	}
	mb_inode_release(&f->mb);
	free(f->ibody);
	f->ibody = NULL;
	ext_tree_release(&f->ext);
}

void ifile_use_extents(const struct fs_state *fs, struct ifile *f, int is_reg)
{
	f->extents = 1;
	ext4_ext_tree_init(&f->ext, fs->g.block_size, f->group, is_reg);
}

int ifile_is_new(const struct fs_state *fs, const struct ifile *f)
{
	struct ifile t;
	static const uint32_t zero[EXT2_N_BLOCKS];

	ifile_init(&t, f->ino, fs->g.inodes_per_group);
	if (f->extents)
		ifile_use_extents(fs, &t, f->ext.is_reg);
	if (f->group != t.group || f->has_alloc_info ||
	    memcmp(&f->bi, &t.bi, sizeof(t.bi)) || f->nblocks ||
	    f->ind[0] || f->ind[1] || f->ind[2] ||
	    memcmp(f->i_block, zero, sizeof(zero)) || f->mb.pas.n ||
	    f->mb.i_size || f->mb.closed)
		return 0;
	/* the extent tree: its root as ext4_ext_tree_init makes it, no block */
	return !f->extents ||
	       (!f->ext.n && !f->ext.nblocks &&
		f->ext.block_size == t.ext.block_size &&
		f->ext.group == t.ext.group &&
		!memcmp(f->ext.i_block, t.ext.i_block, sizeof(t.ext.i_block)));
}

errcode_t ifile_load_extents(const struct fs_state *fs, struct ifile *f,
			     const uint32_t i_block[EXT2_N_BLOCKS])
{
	f->extents = 1;
	return ext_tree_load(&f->ext, fs->g.block_size, f->group, 0, i_block);
}

void ifile_i_block(const struct ifile *f, uint32_t i_block[EXT2_N_BLOCKS])
{
	if (f->extents)
		ext_tree_encode_root(&f->ext, i_block);
	else
		memcpy(i_block, f->i_block, sizeof(f->i_block));
}

/* ext4_ext_map_blocks through mballoc: regular files with their
 * preallocation context; the file's block count follows the tree's. */
static errcode_t ext_map(struct fs_state *fs, struct ifile *f, int is_reg,
			 uint32_t iblock, uint32_t len, fsblk_t *phys,
			 uint32_t *got)
{
	struct ext_mb m = { fs, is_reg ? &f->mb : NULL, f->ino };
	struct ext_alloc_ops ops;
	struct ext_fs e;
	uint64_t p = 0;
	errcode_t err;

	if (fs->driver != ALLOC_EXT4)
		return ORLOV_ERR_UNSUPP_FEATURE;	/* ext2 has no extents */
	ext_fs_of(&e, fs, fs_flex_size(fs));
	ext_mb_ops(&m, &ops);
	f->ext.nblocks = f->nblocks;
	err = ext4_ext_map_blocks(&f->ext, &e, &ops, iblock, len, &p, got);
	f->nblocks = f->ext.nblocks;
	*phys = p;
	return err;
}

/* A block the conversion frees: once the I/O completes. */
static void release_at_io_end(void *ctx, uint64_t blk, uint32_t count,
			      int meta)
{
	struct ext_mb *m = ctx;
	uint32_t i;

	(void)meta;
	for (i = 0; i < count; i++)
		ext4_free_block_at_io_end(m->fs, m->ino, blk + i);
}

errcode_t bmap_writes_done(struct fs_state *fs, struct ifile *f)
{
	struct ext_mb m = { fs, &f->mb, f->ino };
	struct ext_alloc_ops ops;
	errcode_t err;

	if (!f->extents || fs->driver != ALLOC_EXT4)
		return 0;
	ext_mb_ops(&m, &ops);
	/* ext4 converts when the I/O completes (ext4_end_io_rsv_work):
	 * a leaf the merges give back is freed then */
	ops.release = release_at_io_end;
	f->ext.nblocks = f->nblocks;
	err = ext4_ext_convert_unwritten(&f->ext, &ops);
	f->nblocks = f->ext.nblocks;
	return err;
}

/* ext2_block_to_path: offsets of the pointers on the way to @i_block and
 * how many pointers remain after it in its last block. */
static int ext2_block_to_path(uint32_t apb, uint32_t i_block,
			      uint32_t offsets[4], uint32_t *boundary)
{
	uint64_t b = i_block, dbl = (uint64_t)apb * apb;
	uint32_t final = 0;
	int n = 0;

	if (b < EXT2_NDIR_BLOCKS) {
		offsets[n++] = (uint32_t)b;
		final = EXT2_NDIR_BLOCKS;
	} else if ((b -= EXT2_NDIR_BLOCKS) < apb) {
		offsets[n++] = EXT2_IND_BLOCK;
		offsets[n++] = (uint32_t)b;
		final = apb;
	} else if ((b -= apb) < dbl) {
		offsets[n++] = EXT2_DIND_BLOCK;
		offsets[n++] = (uint32_t)(b / apb);
		offsets[n++] = (uint32_t)(b % apb);
		final = apb;
	} else if ((b -= dbl) / dbl < apb) {
		offsets[n++] = EXT2_TIND_BLOCK;
		offsets[n++] = (uint32_t)(b / dbl);
		offsets[n++] = (uint32_t)((b / apb) % apb);
		offsets[n++] = (uint32_t)(b % apb);
		final = apb;
	}
	if (boundary)
		*boundary = final - 1 - (uint32_t)(b % apb);
	return n;
}

/* One step of the chain: where the pointer lives and which node holds it. */
struct chain {
	uint32_t *p;		/* the pointer slot */
	uint32_t *start;	/* first slot of the array holding it */
	struct ind_node *holder;	/* NULL: the inode's i_block[] */
	struct ind_node **slot;	/* where a node for *p hangs */
};

static int ext2_get_branch(const struct fs_state *fs, struct ifile *f,
			   int depth, const uint32_t *offsets, struct chain *ch)
{
	struct ind_node *node = NULL;
	int k;

	ch[0].p = &f->i_block[offsets[0]];
	ch[0].start = f->i_block;
	ch[0].holder = NULL;
	ch[0].slot = depth > 1 ? &f->ind[offsets[0] - EXT2_IND_BLOCK] : NULL;
	for (k = 1; k < depth; k++) {
		if (!*ch[k - 1].p)
			return k - 1;
		node = *ch[k - 1].slot;
		if (!node)
			return -2;	/* pointer to a block never loaded */
		ch[k].p = &node->ptr[offsets[k]];
		ch[k].start = node->ptr;
		ch[k].holder = node;
		ch[k].slot = node->child ? &node->child[offsets[k]] : NULL;
	}
	(void)fs;
	return *ch[depth - 1].p ? -1 : depth - 1;
}

/* A damaged tree reads as a hole: the callers refuse those. */
static fsblk_t ext_lookup_block(const struct ifile *f, uint32_t iblock)
{
	uint64_t p;
	uint32_t len;

	return ext_lookup(&f->ext, iblock, &p, &len) ? 0 : p;
}

void bmap_lookup(const struct fs_state *fs, const struct ifile *f,
		 uint32_t iblock, fsblk_t *phys)
{
	uint32_t offsets[4];
	struct chain ch[4];
	int depth, partial;

	if (f->extents) {
		*phys = ext_lookup_block(f, iblock);
		return;
	}
	depth = ext2_block_to_path(apb_of(fs), iblock, offsets, NULL);
	*phys = 0;
	if (!depth)
		return;
	partial = ext2_get_branch(fs, (struct ifile *)f, depth, offsets, ch);
	if (partial == -1)
		*phys = *ch[depth - 1].p;
}

/* ext2_find_near: left neighbour, else the indirect block, else the
 * inode's group coloured by the writer's pid. */
static uint32_t ext2_find_near(const struct fs_state *fs, const struct ifile *f,
			       const struct chain *ind)
{
	const uint32_t *p;

	for (p = ind->p - 1; p >= ind->start; p--)
		if (*p)
			return *p;
	if (ind->holder)
		return ind->holder->blk;
	/* the ext2 driver's images stay below 2^32 blocks */
	return (uint32_t)group_first_block(fs, f->group) +
	       fs->colour * (fs->g.blocks_per_group / 16);
}

/* ext4_find_near: as ext2's, but ext4_inode_to_goal_block scales the
 * colour to what is left of a short last group, and with flex_bg starts
 * in the flex group. */
static uint32_t ext4_find_near(const struct fs_state *fs, const struct ifile *f,
			       int is_reg, const struct chain *ind)
{
	const uint32_t *p;

	for (p = ind->p - 1; p >= ind->start; p--)
		if (*p)
			return *p;
	if (ind->holder)
		return ind->holder->blk;
	return ext4_goal_block(fs, f->group, is_reg, fs->mb->delalloc,
			       fs->colour);
}

static struct ind_node *ind_new(uint32_t blk, uint32_t apb, int leaf)
{
	struct ind_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->blk = blk;
	n->ptr = calloc(apb, sizeof(uint32_t));
	if (!leaf)
		n->child = calloc(apb, sizeof(*n->child));
	if (!n->ptr || (!leaf && !n->child)) {
		free(n->ptr);
		free(n->child);
		free(n);
		return NULL;
	}
	return n;
}

/* The sequential hint, else ext2_find_near. */
static uint32_t ext2_find_goal(const struct fs_state *fs,
			       const struct ifile *f,
			       const struct blk_alloc_info *bi, uint32_t iblock,
			       const struct chain *partial)
{
	if (bi && iblock == bi->last_alloc_logical_block + 1 &&
	    bi->last_alloc_physical_block != 0)
		return bi->last_alloc_physical_block + 1;
	return ext2_find_near(fs, f, partial);
}

/* ext2_get_blocks' allocation: the goal, then ext2_alloc_blocks: the
 * indirect blocks first, then at least one data block; a short run is
 * retried with the same goal.  One page cache buffer maps one block, so
 * one data block is asked for. */
static errcode_t ext2_alloc_branch(struct fs_state *fs, struct ifile *f,
				   int is_reg, uint32_t iblock,
				   const struct chain *partial,
				   int indirect_blks, uint32_t *new_blocks)
{
	struct blk_alloc_info *bi = NULL;
	unsigned long target, count;
	uint32_t goal, cur = 0;
	int index = 0;
	errcode_t err;

	if (is_reg && !f->has_alloc_info) {
		ext2_init_block_alloc_info(&f->bi);
		f->has_alloc_info = 1;
	}
	if (f->has_alloc_info)
		bi = &f->bi;
	goal = ext2_find_goal(fs, f, bi, iblock, partial);

	target = 1 + (unsigned long)indirect_blks;
	for (;;) {
		count = target;
		err = ext2_new_blocks(fs, f->ino, bi, goal, &count, &cur);
		if (err)
			return err;
		target -= count;
		while (index < indirect_blks && count) {
			new_blocks[index++] = cur++;
			count--;
		}
		if (count > 0)
			break;
	}
	new_blocks[index] = cur;
	if (bi) {
		bi->last_alloc_logical_block = iblock;
		bi->last_alloc_physical_block = cur;
	}
	return 0;
}

/* ext4_alloc_branch's allocations: each indirect block on its own
 * (ext4_new_meta_blocks) and the goal of the next; then up to *count data
 * blocks in one request, file data with the inode's preallocation
 * context.  *count is what was obtained. */
static errcode_t ext4_alloc_branch(struct fs_state *fs, struct ifile *f,
				   int is_reg, uint32_t iblock,
				   const struct chain *partial,
				   int indirect_blks, uint32_t *new_blocks,
				   uint32_t *count)
{
	uint32_t goal = ext4_find_near(fs, f, is_reg, partial), one;
	int n;
	errcode_t err;

	for (n = 0; n < indirect_blks; n++) {
		err = ext4_mb_new_block(fs, NULL, f->ino, 0, goal,
					&new_blocks[n]);
		if (err)
			return err;
		goal = new_blocks[n];
	}
	err = ext4_mb_new_blocks(fs, is_reg ? &f->mb : NULL, f->ino, iblock,
				 goal, *count, &new_blocks[n], &one);
	*count = one;
	return err;
}

/* ext4_blks_to_allocate: under a new indirect block, up to its end; else
 * the holes that follow in the same array. */
static uint32_t ext4_blks_to_allocate(const struct chain *partial, int k,
				      uint32_t blks, uint32_t boundary)
{
	uint32_t count = 1;

	if (k > 0)
		return blks < boundary + 1 ? blks : boundary + 1;
	while (count < blks && count <= boundary && partial->p[count] == 0)
		count++;
	return count;
}

/* Link the new chain in (ext2_splice_branch / ext4_splice_branch): the
 * indirect blocks, then @count data blocks from new_blocks[indirect_blks]
 * on. */
static errcode_t ext2_splice_branch(const struct fs_state *fs, struct ifile *f,
				    struct chain *ch, const uint32_t *offsets,
				    int depth, int partial, int indirect_blks,
				    const uint32_t *new_blocks, uint32_t count)
{
	uint32_t apb = apb_of(fs), i;
	int n;

	for (n = 0; n < indirect_blks; n++) {
		int lvl = partial + n;	/* ch[lvl].p points to the new node */
		int leaf = (lvl + 1 == depth - 1);
		struct ind_node *node = ind_new(new_blocks[n], apb, leaf);

		if (!node)
			return ENOMEM;
		*ch[lvl].slot = node;
		*ch[lvl].p = new_blocks[n];
		ch[lvl + 1].p = &node->ptr[offsets[lvl + 1]];
		ch[lvl + 1].start = node->ptr;
		ch[lvl + 1].holder = node;
		ch[lvl + 1].slot = node->child ?
				   &node->child[offsets[lvl + 1]] : NULL;
	}
	for (i = 0; i < count; i++)
		ch[depth - 1].p[i] = new_blocks[indirect_blks] + i;
	f->nblocks += (uint64_t)indirect_blks + count;
	return 0;
}

errcode_t bmap_map_blocks(struct fs_state *fs, struct ifile *f, int is_reg,
			  uint32_t iblock, uint32_t len, fsblk_t *phys,
			  uint32_t *got)
{
	uint32_t apb = apb_of(fs), offsets[4], boundary, new_blocks[4], count = 1;
	struct chain ch[4];
	int depth, partial, indirect_blks;
	errcode_t err;

	if (f->extents)
		return ext_map(fs, f, is_reg, iblock, len, phys, got);
	depth = ext2_block_to_path(apb, iblock, offsets, &boundary);
	if (!depth)
		return ORLOV_ERR_FILE_TOO_BIG;
	partial = ext2_get_branch(fs, f, depth, offsets, ch);
	if (partial == -2)
		return ORLOV_ERR_CORRUPT;
	if (partial < 0) {
		*phys = *ch[depth - 1].p;
		*got = 1;
		return 0;
	}

	indirect_blks = depth - partial - 1;
	if (fs->driver == ALLOC_EXT4) {
		count = ext4_blks_to_allocate(&ch[partial], indirect_blks, len,
					      boundary);
		err = ext4_alloc_branch(fs, f, is_reg, iblock, &ch[partial],
					indirect_blks, new_blocks, &count);
	} else {
		err = ext2_alloc_branch(fs, f, is_reg, iblock, &ch[partial],
					indirect_blks, new_blocks);
	}
	if (!err)
		err = ext2_splice_branch(fs, f, ch, offsets, depth, partial,
					 indirect_blks, new_blocks, count);
	if (!err) {
		*phys = new_blocks[indirect_blks];
		*got = count;
	}
	return err;
}

errcode_t bmap_get_block(struct fs_state *fs, struct ifile *f, int is_reg,
			 uint32_t iblock, fsblk_t *phys)
{
	uint32_t got;

	return bmap_map_blocks(fs, f, is_reg, iblock, 1, phys, &got);
}

errcode_t bmap_attach(const struct fs_state *fs, struct ifile *f, int level,
		      const uint32_t *path, int depth, uint32_t blk,
		      const uint32_t *ptrs)
{
	uint32_t apb = apb_of(fs);
	struct ind_node **slot = &f->ind[level], *node;
	int k;

	/* level 0: ind (1 level), 1: dind (2), 2: tind (3) */
	for (k = 0; k < depth; k++) {
		if (!*slot || !(*slot)->child)
			return ORLOV_ERR_CORRUPT;
		slot = &(*slot)->child[path[k]];
	}
	node = ind_new(blk, apb, depth == level);
	if (!node)
		return ENOMEM;
	memcpy(node->ptr, ptrs, apb * sizeof(uint32_t));
	*slot = node;
	return 0;
}

static errcode_t visit(const struct ind_node *n, uint32_t apb,
		       ind_visit_fn fn, void *ctx)
{
	errcode_t err;
	uint32_t i;

	if (!n)
		return 0;
	err = fn(ctx, n->blk, n->ptr);
	if (err || !n->child)
		return err;
	for (i = 0; i < apb; i++) {
		err = visit(n->child[i], apb, fn, ctx);
		if (err)
			return err;
	}
	return 0;
}

errcode_t bmap_visit_indirect(const struct fs_state *fs, const struct ifile *f,
			      ind_visit_fn fn, void *ctx)
{
	errcode_t err;
	int i;

	for (i = 0; i < 3; i++) {
		err = visit(f->ind[i], apb_of(fs), fn, ctx);
		if (err)
			return err;
	}
	return 0;
}

uint64_t bmap_blocks_needed(uint32_t apb, uint64_t nblocks)
{
	uint64_t total = nblocks, dbl = (uint64_t)apb * apb;

	if (nblocks <= EXT2_NDIR_BLOCKS)
		return total;
	nblocks -= EXT2_NDIR_BLOCKS;
	total += 1;	/* ind */
	if (nblocks <= apb)
		return total;
	nblocks -= apb;
	total += 1;	/* dind */
	if (nblocks <= dbl)
		return total + (nblocks + apb - 1) / apb;
	total += apb;	/* full dind */
	nblocks -= dbl;
	/* tind + its dind-level blocks + ind-level blocks */
	return total + 1 + (nblocks + dbl - 1) / dbl + (nblocks + apb - 1) / apb;
}

uint64_t ext2_max_size(unsigned int bits)
{
	uint64_t ppb = 1ULL << (bits - 2);
	uint64_t res = EXT2_NDIR_BLOCKS + ppb + ppb * ppb + ppb * ppb * ppb;
	uint64_t meta = 1 + (1 + ppb) + (1 + ppb + ppb * ppb);
	/* i_blocks counts sectors in 32 bits, metadata included */
	uint64_t upper = 0xffffffffULL >> (bits - 9);

	if (res + meta > upper) {
		res = upper;
		/* the metadata that addressing @upper blocks takes */
		upper -= EXT2_NDIR_BLOCKS;
		meta = 1;
		upper -= ppb;
		if (upper < ppb * ppb) {
			meta += 1 + (upper + ppb - 1) / ppb;
		} else {
			meta += 1 + ppb;
			upper -= ppb * ppb;
			meta += 1 + (upper + ppb - 1) / ppb +
				(upper + ppb * ppb - 1) / (ppb * ppb);
		}
		res -= meta;
	}
	res <<= bits;
	/* MAX_LFS_FILESIZE of a 64-bit kernel */
	return res > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : res;
}
