// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The extent tree's storage and its walks (extents_tree.h): the root in
 * i_block, the tree blocks by number, ext4_find_extent and the look-ups
 * around a path.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/ext4/extents_tree.h"
#include "lib/orlov_err.h"

static void root_init(struct ext_tree *t, uint32_t block_size, uint32_t group,
		      int is_reg)
{
	memset(t, 0, sizeof(*t));
	t->block_size = block_size;
	t->group = group;
	t->is_reg = is_reg;
}

void ext4_ext_tree_init(struct ext_tree *t, uint32_t block_size, uint32_t group,
			int is_reg)
{
	struct ext3_extent_header *eh;

	root_init(t, block_size, group, is_reg);
	eh = ext_root(t);
	eh->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);
	eh->eh_max = ext2fs_cpu_to_le16((uint16_t)ext4_ext_space_root());
}

/* __ext4_ext_check's limits on one node's header. */
static int header_ok(const struct ext3_extent_header *eh, unsigned int depth,
		     unsigned int max)
{
	return ext2fs_le16_to_cpu(eh->eh_magic) == EXT3_EXT_MAGIC &&
	       eh_depth(eh) == depth && eh_max(eh) <= max && eh_max(eh) &&
	       eh_entries(eh) <= eh_max(eh) && (!depth || eh_entries(eh));
}

errcode_t ext_tree_load(struct ext_tree *t, uint32_t block_size,
			uint32_t group, int is_reg,
			const uint32_t i_block[EXT2_N_BLOCKS])
{
	struct ext3_extent_header *eh;

	root_init(t, block_size, group, is_reg);
	memcpy(t->i_block, i_block, sizeof(t->i_block));
	eh = ext_root(t);
	if (eh_depth(eh) > EXT_TREE_MAX_DEPTH ||
	    !header_ok(eh, eh_depth(eh), ext4_ext_space_root()))
		return ORLOV_ERR_CORRUPT;
	return 0;
}

static struct ext_node *node_find(const struct ext_tree *t, uint64_t blk)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->node[i]->blk == blk)
			return t->node[i];
	return NULL;
}

struct ext_node *ext_node_new(struct ext_tree *t, uint64_t blk)
{
	struct ext_node *n;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4;
		struct ext_node **p = realloc(t->node, cap * sizeof(*p));

		if (!p)
			return NULL;
		t->node = p;
		t->cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (n)
		n->buf = calloc(1, t->block_size);
	if (!n || !n->buf) {
		free(n);
		return NULL;
	}
	n->blk = blk;
	t->node[t->n++] = n;
	return n;
}

void ext_node_drop(struct ext_tree *t, struct ext_node *node)
{
	size_t i;

	for (i = 0; i < t->n && t->node[i] != node; i++)
		;
	if (i == t->n)
		return;
	memmove(&t->node[i], &t->node[i + 1], (t->n - i - 1) * sizeof(*t->node));
	t->n--;
	free(node->buf);
	free(node);
}

errcode_t ext_tree_attach(struct ext_tree *t, uint64_t blk, const void *buf)
{
	struct ext_node *n;

	if (node_find(t, blk))
		return ORLOV_ERR_CORRUPT;
	n = ext_node_new(t, blk);
	if (!n)
		return ENOMEM;
	memcpy(n->buf, buf, t->block_size);
	return 0;
}

void ext_tree_release(struct ext_tree *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->node[i]->buf);
		free(t->node[i]);
	}
	free(t->node);
	t->node = NULL;
	t->n = t->cap = 0;
}

int ext_tree_depth(const struct ext_tree *t)
{
	return (int)eh_depth((const struct ext3_extent_header *)t->i_block);
}

void ext_tree_encode_root(const struct ext_tree *t,
			  uint32_t i_block[EXT2_N_BLOCKS])
{
	memcpy(i_block, t->i_block, sizeof(t->i_block));
}

errcode_t ext_tree_visit(const struct ext_tree *t, ext_visit_fn fn, void *ctx)
{
	errcode_t err;
	size_t i;

	for (i = 0; i < t->n; i++) {
		err = fn(ctx, t->node[i]->blk, t->node[i]->buf);
		if (err)
			return err;
	}
	return 0;
}

errcode_t read_extent_tree_block(struct ext_tree *t, uint64_t blk,
				 unsigned int depth,
				 struct ext3_extent_header **hdr,
				 struct ext_node **node)
{
	struct ext_node *n = node_find(t, blk);

	if (!n)
		return ORLOV_ERR_CORRUPT;	/* never attached */
	*hdr = (struct ext3_extent_header *)n->buf;
	*node = n;
	return header_ok(*hdr, depth, ext4_ext_space_block(t)) ? 0 :
								ORLOV_ERR_CORRUPT;
}

/* ext4_ext_binsearch_idx: the last index starting at or before @block,
 * else the first. */
static void ext4_ext_binsearch_idx(struct ext_path *p, uint32_t block)
{
	struct ext3_extent_idx *l = EXT_FIRST_INDEX(p->hdr) + 1;
	struct ext3_extent_idx *r = EXT_LAST_INDEX(p->hdr), *m;

	while (l <= r) {
		m = l + (r - l) / 2;
		if (block < ei_block(m))
			r = m - 1;
		else
			l = m + 1;
	}
	p->idx = l - 1;
}

/* ext4_ext_binsearch: the same over a leaf's extents; none if empty. */
static void ext4_ext_binsearch(struct ext_path *p, uint32_t block)
{
	struct ext3_extent *l, *r, *m;

	if (!eh_entries(p->hdr))
		return;
	l = EXT_FIRST_EXTENT(p->hdr) + 1;
	r = EXT_LAST_EXTENT(p->hdr);
	while (l <= r) {
		m = l + (r - l) / 2;
		if (block < ee_block(m))
			r = m - 1;
		else
			l = m + 1;
	}
	p->ext = l - 1;
}

errcode_t ext4_find_extent(struct ext_tree *t, uint32_t block,
			   struct ext_path *path)
{
	struct ext3_extent_header *eh = ext_root(t);
	struct ext_node *node;
	int depth = (int)eh_depth(eh), i, ppos = 0;
	errcode_t err;

	if (depth > EXT_TREE_MAX_DEPTH)
		return ORLOV_ERR_CORRUPT;
	memset(path, 0, EXT_PATH_LEN * sizeof(*path));
	path[0].hdr = eh;
	for (i = depth; i; ppos++) {
		ext4_ext_binsearch_idx(&path[ppos], block);
		path[ppos].depth = i;
		err = read_extent_tree_block(t, ei_pblock(path[ppos].idx),
					     (unsigned int)--i, &eh, &node);
		if (err)
			return err;
		path[ppos + 1].hdr = eh;
		path[ppos + 1].node = node;
	}
	path[ppos].depth = 0;
	ext4_ext_binsearch(&path[ppos], block);
	return 0;
}

uint32_t ext4_ext_next_allocated_block(const struct ext_path *path)
{
	int depth = path[0].depth;

	if (depth == 0 && !path[0].ext)
		return EXT_MAX_BLOCKS;
	for (; depth >= 0; depth--) {
		const struct ext_path *p = &path[depth];

		if (depth == path[0].depth) {
			if (p->ext && p->ext != EXT_LAST_EXTENT(p->hdr))
				return ee_block(p->ext + 1);
		} else if (p->idx != EXT_LAST_INDEX(p->hdr)) {
			return ei_block(p->idx + 1);
		}
	}
	return EXT_MAX_BLOCKS;
}

uint32_t ext4_ext_next_leaf_block(const struct ext_path *path)
{
	int depth = path[0].depth;

	if (depth == 0)
		return EXT_MAX_BLOCKS;
	for (depth--; depth >= 0; depth--)
		if (path[depth].idx != EXT_LAST_INDEX(path[depth].hdr))
			return ei_block(path[depth].idx + 1);
	return EXT_MAX_BLOCKS;
}

uint32_t ext4_ext_find_hole(const struct ext_path *path, uint32_t *lblk)
{
	const struct ext3_extent *ex = path[path[0].depth].ext;

	if (!ex) {
		*lblk = 0;
		return EXT_MAX_BLOCKS;
	}
	if (*lblk < ee_block(ex))
		return ee_block(ex) - *lblk;
	*lblk = ee_block(ex) + ee_len(ex);
	return ext4_ext_next_allocated_block(path) - *lblk;
}

errcode_t ext_lookup(const struct ext_tree *t, uint32_t lblk, uint64_t *phys,
		     uint32_t *len)
{
	struct ext_path path[EXT_PATH_LEN];
	const struct ext3_extent *ex;
	uint32_t start = lblk, hole;
	errcode_t err;

	/* a look-up changes nothing: the path only points into the tree */
	err = ext4_find_extent((struct ext_tree *)t, lblk, path);
	if (err)
		return err;
	ex = path[path[0].depth].ext;
	if (ex && lblk >= ee_block(ex) && lblk - ee_block(ex) < ee_len(ex) &&
	    !ee_unwritten(ex)) {
		*phys = ee_pblock(ex) + (lblk - ee_block(ex));
		*len = ee_len(ex) - (lblk - ee_block(ex));
		return 0;
	}
	*phys = 0;
	if (ex && lblk >= ee_block(ex) && lblk - ee_block(ex) < ee_len(ex)) {
		/* unwritten: reads as zeros, a hole to the reader */
		*len = ee_len(ex) - (lblk - ee_block(ex));
		return 0;
	}
	hole = ext4_ext_find_hole(path, &start);
	*len = hole - (lblk - start);
	return 0;
}

/* Depth-first from @eh (at @depth > 0): the first index whose block is
 * not attached. */
static int wanted_below(const struct ext_tree *t,
			const struct ext3_extent_header *eh, unsigned int depth,
			uint64_t *blk, unsigned int *blk_depth)
{
	const struct ext3_extent_idx *ix = EXT_FIRST_INDEX(eh);
	const struct ext_node *n;
	unsigned int i;

	for (i = 0; i < eh_entries(eh); i++, ix++) {
		n = node_find(t, ei_pblock(ix));
		if (!n) {
			*blk = ei_pblock(ix);
			*blk_depth = depth - 1;
			return 1;
		}
		if (depth > 1 &&
		    eh_depth((const struct ext3_extent_header *)n->buf) ==
		    depth - 1 &&
		    wanted_below(t, (const struct ext3_extent_header *)n->buf,
				 depth - 1, blk, blk_depth))
			return 1;
	}
	return 0;
}

int ext_tree_wanted(const struct ext_tree *t, uint64_t *blk,
		    unsigned int *depth)
{
	const struct ext3_extent_header *eh =
		(const struct ext3_extent_header *)t->i_block;

	if (!eh_depth(eh) || eh_depth(eh) > EXT_TREE_MAX_DEPTH)
		return 0;
	return wanted_below(t, eh, eh_depth(eh), blk, depth);
}

uint64_t ext_blocks_needed(uint32_t block_size, uint64_t nblocks)
{
	uint64_t n = (nblocks + EXT_INIT_MAX_LEN - 1) / EXT_INIT_MAX_LEN;
	uint64_t total = nblocks, cap = (block_size - EXT_HDR_SIZE) / EXT_ENTRY_SIZE;

	/* a level of blocks for each level that does not fit in the root */
	while (n > ext4_ext_space_root()) {
		n = (n + cap - 1) / cap;
		total += n;
	}
	return total;
}

uint64_t ext4_max_size(unsigned int bits, int huge_file)
{
	uint64_t upper = INT64_MAX;	/* MAX_LFS_FILESIZE, 64-bit */
	uint64_t res = ((1ULL << 32) - 1) << bits;

	/* i_blocks counts 512-byte sectors in 32 bits without huge_file */
	if (!huge_file)
		upper = (((1ULL << 32) - 1) >> (bits - 9)) << bits;
	return res < upper ? res : upper;
}
