// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The extent map's growth as fs/ext4/extents.c (Linux 6.1) does it, under
 * the kernel's names (extents.h): the goal, the request's neighbours, the
 * insertion with its merges, splits and growth in depth; the tree's
 * storage and walks are in extents_tree.c.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "model/ext4/extents_tree.h"
#include "model/kver.h"
#include "lib/orlov_err.h"

/* ext4_ext_find_goal: where the extent in the path would put @block if the
 * file were contiguous, else next to the leaf, else the inode's goal. */
static uint64_t ext4_ext_find_goal(const struct ext_tree *t,
				   const struct ext_fs *fs,
				   const struct ext_path *path, uint32_t block)
{
	const struct ext_path *p = &path[path[0].depth];

	if (p->ext) {
		uint64_t pb = ee_pblock(p->ext);
		uint32_t eb = ee_block(p->ext);

		return block > eb ? pb + (block - eb) : pb - (eb - block);
	}
	if (p->node)
		return p->node->blk;
	return ext4_inode_to_goal_block(fs, t->group, t->is_reg);
}

/* ext4_can_extents_be_merged: @e2 continues @e1 logically and physically,
 * within one extent's length. */
static int ext4_can_extents_be_merged(const struct ext3_extent *e1,
				      const struct ext3_extent *e2)
{
	unsigned int l1 = ee_len(e1), l2 = ee_len(e2);

	if (ee_unwritten(e1) != ee_unwritten(e2))
		return 0;
	if (ee_block(e1) + l1 != ee_block(e2))
		return 0;
	if (l1 + l2 > EXT_INIT_MAX_LEN)
		return 0;
	if (ee_unwritten(e1) && l1 + l2 > EXT_UNINIT_MAX_LEN)
		return 0;
	return ee_pblock(e1) + l1 == ee_pblock(e2);
}

static void set_len(struct ext3_extent *e, unsigned int len, int unwritten)
{
	e->ee_len = ext2fs_cpu_to_le16((uint16_t)(unwritten ?
						  len + EXT_INIT_MAX_LEN : len));
}

static int ext4_ext_try_to_merge_right(struct ext_path *leaf,
				       struct ext3_extent *ex)
{
	struct ext3_extent_header *eh = leaf->hdr;
	int done = 0;

	while (ex < EXT_LAST_EXTENT(eh)) {
		if (!ext4_can_extents_be_merged(ex, ex + 1))
			break;
		set_len(ex, ee_len(ex) + ee_len(ex + 1), ee_unwritten(ex));
		if (ex + 1 < EXT_LAST_EXTENT(eh))
			memmove(ex + 1, ex + 2, (size_t)(EXT_LAST_EXTENT(eh) - ex - 1) *
				sizeof(*ex));
		eh_add_entries(eh, -1);
		done = 1;
	}
	return done;
}

/* ext4_ext_try_to_merge_up: a tree of one leaf that fits in the inode goes
 * back into it; the bytes of i_block past the entries stay as they were. */
static void ext4_ext_try_to_merge_up(struct ext_tree *t,
				     const struct ext_alloc_ops *ops,
				     struct ext_path *path)
{
	struct ext_node *leaf = path[1].node;
	uint64_t blk;
	size_t s;

	if (path[0].depth != 1 || eh_entries(path[0].hdr) != 1 ||
	    eh_entries(path[1].hdr) > ext4_ext_space_root())
		return;
	blk = ei_pblock(path[0].idx);
	s = eh_entries(path[1].hdr) * (size_t)EXT_ENTRY_SIZE + EXT_HDR_SIZE;
	memcpy(path[0].hdr, path[1].hdr, s);
	path[0].depth = 0;
	path[0].ext = EXT_FIRST_EXTENT(path[0].hdr) +
		      (path[1].ext - EXT_FIRST_EXTENT(path[1].hdr));
	path[0].idx = NULL;
	path[0].hdr->eh_max =
		ext2fs_cpu_to_le16((uint16_t)ext4_ext_space_root());
	memset(&path[1], 0, sizeof(path[1]));
	ext_node_drop(t, leaf);
	t->nblocks--;
	if (ops->release)
		ops->release(ops->ctx, blk, 1, 1);
}

/* ext4_ext_try_to_merge: with the left neighbour, else the right one. */
static void ext4_ext_try_to_merge(struct ext_tree *t,
				  const struct ext_alloc_ops *ops,
				  struct ext_path *path, struct ext3_extent *ex)
{
	struct ext_path *leaf = &path[path[0].depth];
	int done = 0;

	if (ex > EXT_FIRST_EXTENT(leaf->hdr))
		done = ext4_ext_try_to_merge_right(leaf, ex - 1);
	if (!done)
		ext4_ext_try_to_merge_right(leaf, ex);
	ext4_ext_try_to_merge_up(t, ops, path);
}

/* ext4_ext_correct_indexes: a leaf whose first extent changed moves the
 * index entries above it that start there. */
static errcode_t ext4_ext_correct_indexes(struct ext_path *path)
{
	int depth = path[0].depth, k;
	struct ext_path *leaf = &path[depth];
	__le32 border;

	if (!leaf->ext)
		return ORLOV_ERR_CORRUPT;
	if (depth == 0 || leaf->ext != EXT_FIRST_EXTENT(leaf->hdr))
		return 0;
	border = leaf->ext->ee_block;
	k = depth - 1;
	path[k].idx->ei_block = border;
	while (k--) {
		if (path[k + 1].idx != EXT_FIRST_INDEX(path[k + 1].hdr))
			break;
		path[k].idx->ei_block = border;
	}
	return 0;
}

/* ext4_ext_insert_index: [@logical, @ptr] next to path @curp's index. */
static errcode_t ext4_ext_insert_index(struct ext_path *curp, uint32_t logical,
				       uint64_t ptr)
{
	struct ext3_extent_idx *ix;
	long len;

	if (logical == ei_block(curp->idx) ||
	    eh_entries(curp->hdr) >= eh_max(curp->hdr))
		return ORLOV_ERR_CORRUPT;
	ix = logical > ei_block(curp->idx) ? curp->idx + 1 : curp->idx;
	len = EXT_LAST_INDEX(curp->hdr) - ix + 1;
	if (len > 0)
		memmove(ix + 1, ix, (size_t)len * sizeof(*ix));
	ix->ei_block = ext2fs_cpu_to_le32(logical);
	ei_store_pblock(ix, ptr);
	eh_add_entries(curp->hdr, 1);
	return 0;
}

/* A new tree block's header, as ext4_ext_split and grow_indepth write it. */
static struct ext3_extent_header *node_header(struct ext_node *n,
					      unsigned int max,
					      unsigned int depth)
{
	struct ext3_extent_header *neh = (struct ext3_extent_header *)n->buf;

	neh->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);
	neh->eh_max = ext2fs_cpu_to_le16((uint16_t)max);
	neh->eh_depth = ext2fs_cpu_to_le16((uint16_t)depth);
	neh->eh_entries = 0;
	neh->eh_generation = 0;
	return neh;
}

/* ext4_ext_new_meta_block: a tree block with the goal of the extent
 * being inserted. */
static errcode_t ext4_ext_new_meta_block(struct ext_tree *t,
					 const struct ext_fs *fs,
					 const struct ext_alloc_ops *ops,
					 const struct ext_path *path,
					 const struct ext3_extent *newext,
					 struct ext_node **node)
{
	uint64_t blk;
	errcode_t err;

	err = ops->meta(ops->ctx,
			ext4_ext_find_goal(t, fs, path, ee_block(newext)), 0,
			&blk);
	if (err)
		return err;
	t->nblocks++;
	*node = ext_node_new(t, blk);
	if (!*node) {
		if (ops->release)
			ops->release(ops->ctx, blk, 1, 1);
		t->nblocks--;
		return ENOMEM;
	}
	return 0;
}

/* ext4_ext_split's moves once its blocks are there: the extents right of
 * the path into the new leaf, the indexes right of it into each new index
 * block, then the new subtree's index at level @at. */
static errcode_t split_move(struct ext_tree *t, struct ext_path *path,
			    struct ext_node **nb, int at, __le32 border)
{
	int depth = path[0].depth, a = depth - at, i, k;
	struct ext3_extent_header *neh;
	struct ext3_extent_idx *fidx;
	uint64_t newblock;
	long m;

	newblock = nb[--a]->blk;
	neh = node_header(nb[a], ext4_ext_space_block(t), 0);
	if (eh_entries(path[depth].hdr) != eh_max(path[depth].hdr))
		return ORLOV_ERR_CORRUPT;
	m = EXT_MAX_EXTENT(path[depth].hdr) - path[depth].ext++;
	if (m) {
		memmove(EXT_FIRST_EXTENT(neh), path[depth].ext,
			(size_t)m * EXT_ENTRY_SIZE);
		eh_add_entries(neh, (int)m);
		eh_add_entries(path[depth].hdr, (int)-m);
	}
	for (k = depth - at - 1, i = depth - 1; k--; i--) {
		uint64_t oldblock = newblock;

		newblock = nb[--a]->blk;
		neh = node_header(nb[a], ext4_ext_space_block(t),
				  (unsigned int)(depth - i));
		neh->eh_entries = ext2fs_cpu_to_le16(1);
		fidx = EXT_FIRST_INDEX(neh);
		fidx->ei_block = border;
		ei_store_pblock(fidx, oldblock);
		if (EXT_MAX_INDEX(path[i].hdr) != EXT_LAST_INDEX(path[i].hdr))
			return ORLOV_ERR_CORRUPT;
		m = EXT_MAX_INDEX(path[i].hdr) - path[i].idx++;
		if (m) {
			memmove(++fidx, path[i].idx, (size_t)m * sizeof(*fidx));
			eh_add_entries(neh, (int)m);
			eh_add_entries(path[i].hdr, (int)-m);
		}
	}
	return ext4_ext_insert_index(&path[at], ext2fs_le32_to_cpu(border),
				     newblock);
}

/* ext4_ext_split: a new leaf, and the index blocks between it and level
 * @at (which has a free index), all asked for first, with the same goal;
 * the leaf is the last one asked for. */
static errcode_t ext4_ext_split(struct ext_tree *t, const struct ext_fs *fs,
				const struct ext_alloc_ops *ops,
				struct ext_path *path,
				const struct ext3_extent *newext, int at)
{
	struct ext_node *nb[EXT_TREE_MAX_DEPTH];
	int depth = path[0].depth, a;
	struct ext_path *leaf = &path[depth];
	__le32 border;
	errcode_t err = 0;

	if (!leaf->ext || leaf->ext > EXT_MAX_EXTENT(leaf->hdr))
		return ORLOV_ERR_CORRUPT;
	border = leaf->ext != EXT_MAX_EXTENT(leaf->hdr) ?
		 leaf->ext[1].ee_block : newext->ee_block;
	for (a = 0; a < depth - at && !err; a++)
		err = ext4_ext_new_meta_block(t, fs, ops, path, newext, &nb[a]);
	if (err)
		a--;
	else
		err = split_move(t, path, nb, at, border);
	if (err) {
		while (a--) {
			if (ops->release)
				ops->release(ops->ctx, nb[a]->blk, 1, 1);
			ext_node_drop(t, nb[a]);
			t->nblocks--;
		}
	}
	return err;
}

/* ext4_ext_grow_indepth: the root's entries move to a new block, which
 * the root then indexes alone.  The block is asked for just before the
 * first one the root indexes (that one, if free), or at the inode's goal
 * when the root held the extents. */
static errcode_t ext4_ext_grow_indepth(struct ext_tree *t,
				       const struct ext_fs *fs,
				       const struct ext_alloc_ops *ops)
{
	struct ext3_extent_header *root = ext_root(t), *neh;
	unsigned int depth = eh_depth(root);
	uint64_t goal = 0, blk;
	struct ext_node *n;
	int try_goal = 0;
	errcode_t err;

	if (depth)
		goal = ei_pblock(EXT_FIRST_INDEX(root));
	if (goal > fs->g.first_data_block) {
		try_goal = 1;
		goal--;
	} else {
		goal = ext4_inode_to_goal_block(fs, t->group, t->is_reg);
	}
	err = ops->meta(ops->ctx, goal, try_goal, &blk);
	if (err)
		return err;
	t->nblocks++;
	n = ext_node_new(t, blk);
	if (!n) {
		if (ops->release)
			ops->release(ops->ctx, blk, 1, 1);
		t->nblocks--;
		return ENOMEM;
	}
	memcpy(n->buf, t->i_block, EXT_ROOT_SIZE);
	neh = (struct ext3_extent_header *)n->buf;
	neh->eh_max = ext2fs_cpu_to_le16((uint16_t)ext4_ext_space_block(t));
	neh->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);

	root->eh_entries = ext2fs_cpu_to_le16(1);
	ei_store_pblock(EXT_FIRST_INDEX(root), blk);
	if (depth == 0) {
		root->eh_max =
			ext2fs_cpu_to_le16((uint16_t)ext4_ext_space_root());
		EXT_FIRST_INDEX(root)->ei_block = EXT_FIRST_EXTENT(root)->ee_block;
	}
	root->eh_depth = ext2fs_cpu_to_le16((uint16_t)(depth + 1));
	return 0;
}

static int has_free_index(const struct ext_path *p)
{
	return eh_entries(p->hdr) < eh_max(p->hdr);
}

/* ext4_ext_create_new_leaf: split below the lowest level with a free
 * index, else grow in depth (and split the grown tree unless that was the
 * first growth, which leaves room in the leaf). */
static errcode_t ext4_ext_create_new_leaf(struct ext_tree *t,
					  const struct ext_fs *fs,
					  const struct ext_alloc_ops *ops,
					  struct ext_path *path,
					  const struct ext3_extent *newext)
{
	struct ext_path *curp;
	int depth, i;
	errcode_t err;

	for (;;) {
		i = depth = path[0].depth;
		curp = &path[depth];
		while (i > 0 && !has_free_index(curp)) {
			i--;
			curp--;
		}
		if (has_free_index(curp)) {
			err = ext4_ext_split(t, fs, ops, path, newext, i);
			if (!err)
				err = ext4_find_extent(t, ee_block(newext),
						       path);
			return err;
		}
		err = ext4_ext_grow_indepth(t, fs, ops);
		if (!err)
			err = ext4_find_extent(t, ee_block(newext), path);
		if (err)
			return err;
		depth = path[0].depth;
		if (eh_entries(path[depth].hdr) != eh_max(path[depth].hdr))
			return 0;
	}
}

/* ext4_ext_insert_extent's first step: @newext appended to the extent
 * the path found, or to the one left of it, or prepended to the one
 * right of it.  Returns that extent, or NULL. */
static struct ext3_extent *merge_into(struct ext_path *leaf,
				      const struct ext3_extent *newext)
{
	struct ext3_extent_header *eh = leaf->hdr;
	struct ext3_extent *ex = leaf->ext;
	unsigned int nlen = ee_len(newext);

	if (!ex)
		return NULL;
	if (ex < EXT_LAST_EXTENT(eh) &&
	    ee_block(ex) + ee_len(ex) < ee_block(newext)) {
		ex++;
	} else {
		if (ex > EXT_FIRST_EXTENT(eh) &&
		    ee_block(newext) + nlen < ee_block(ex))
			ex--;
		if (ext4_can_extents_be_merged(ex, newext)) {
			set_len(ex, ee_len(ex) + nlen, ee_unwritten(ex));
			return ex;
		}
	}
	if (ext4_can_extents_be_merged(newext, ex)) {
		ex->ee_block = newext->ee_block;
		ee_store_pblock(ex, ee_pblock(newext));
		set_len(ex, ee_len(ex) + nlen, ee_unwritten(ex));
		return ex;
	}
	return NULL;
}

/* Where a full leaf's new extent goes: the next leaf if it has room and
 * the extent is past this leaf's last one (the path is moved there), else
 * a new leaf. */
static errcode_t make_room(struct ext_tree *t, const struct ext_fs *fs,
			   const struct ext_alloc_ops *ops,
			   struct ext_path *path,
			   const struct ext3_extent *newext)
{
	struct ext_path npath[EXT_PATH_LEN];
	int depth = path[0].depth;
	uint32_t next = EXT_MAX_BLOCKS;
	errcode_t err;

	if (ee_block(newext) > ee_block(EXT_LAST_EXTENT(path[depth].hdr)))
		next = ext4_ext_next_leaf_block(path);
	if (next != EXT_MAX_BLOCKS) {
		err = ext4_find_extent(t, next, npath);
		if (err)
			return err;
		if (eh_entries(npath[depth].hdr) < eh_max(npath[depth].hdr)) {
			memcpy(path, npath, sizeof(npath));
			return 0;
		}
	}
	return ext4_ext_create_new_leaf(t, fs, ops, path, newext);
}

/* @pre_io: EXT4_GET_BLOCKS_PRE_IO (the writeback's unwritten extents
 * with dioread_nolock): nothing merged, neither at insertion nor after;
 * the conversion at the end of their I/O merges them. */
static errcode_t ext4_ext_insert_extent(struct ext_tree *t,
					const struct ext_fs *fs,
					const struct ext_alloc_ops *ops,
					struct ext_path *path,
					const struct ext3_extent *newext, int pre_io)
{
	struct ext3_extent_header *eh;
	struct ext3_extent *nearex;
	int depth = path[0].depth;
	long len;
	errcode_t err;

	nearex = pre_io ? NULL : merge_into(&path[depth], newext);
	if (!nearex) {
		if (eh_entries(path[depth].hdr) >= eh_max(path[depth].hdr)) {
			err = make_room(t, fs, ops, path, newext);
			if (err)
				return err;
			depth = path[0].depth;
		}
		eh = path[depth].hdr;
		nearex = path[depth].ext;
		if (!nearex) {
			nearex = EXT_FIRST_EXTENT(eh);
		} else {
			if (ee_block(newext) > ee_block(nearex))
				nearex++;
			else if (ee_block(newext) == ee_block(nearex))
				return ORLOV_ERR_CORRUPT;
			len = EXT_LAST_EXTENT(eh) - nearex + 1;
			if (len > 0)
				memmove(nearex + 1, nearex,
					(size_t)len * sizeof(*nearex));
		}
		eh_add_entries(eh, 1);
		path[depth].ext = nearex;
		nearex->ee_block = newext->ee_block;
		ee_store_pblock(nearex, ee_pblock(newext));
		nearex->ee_len = newext->ee_len;
	}
	if (!pre_io)
		ext4_ext_try_to_merge(t, ops, path, nearex);
	return ext4_ext_correct_indexes(path);
}

/* ext4_ext_search_left: the last mapped block before *logical, 0 in *phys
 * when there is none. */
static void ext4_ext_search_left(const struct ext_path *path, uint32_t *logical,
				 uint64_t *phys)
{
	const struct ext3_extent *ex = path[path[0].depth].ext;

	*phys = 0;
	if (!ex || *logical < ee_block(ex))
		return;
	*logical = ee_block(ex) + ee_len(ex) - 1;
	*phys = ee_pblock(ex) + ee_len(ex) - 1;
}

/* ext4_ext_search_right: the first mapped block after *logical, down the
 * next index's leftmost branch when the leaf has none. */
static errcode_t ext4_ext_search_right(struct ext_tree *t,
				       const struct ext_path *path,
				       uint32_t *logical, uint64_t *phys)
{
	int pdepth = path[0].depth, depth = pdepth;
	const struct ext3_extent *ex = path[depth].ext;
	struct ext3_extent_header *eh;
	struct ext3_extent_idx *ix;
	struct ext_node *n;
	errcode_t err;

	*phys = 0;
	if (!ex)
		return 0;
	if (*logical >= ee_block(ex)) {
		if (ex == EXT_LAST_EXTENT(path[depth].hdr)) {
			while (--depth >= 0 &&
			       path[depth].idx == EXT_LAST_INDEX(path[depth].hdr))
				;
			if (depth < 0)
				return 0;
			ix = path[depth].idx + 1;
			while (++depth <= pdepth) {
				err = read_extent_tree_block(t, ei_pblock(ix),
						(unsigned int)(pdepth - depth),
						&eh, &n);
				if (err)
					return err;
				ix = EXT_FIRST_INDEX(eh);
			}
			ex = EXT_FIRST_EXTENT(eh);
		} else {
			ex++;
		}
	}
	*logical = ee_block(ex);
	*phys = ee_pblock(ex);
	return 0;
}

/* ext4_ext_check_overlap: the new extent stops where the next mapped
 * block starts. */
static uint32_t ext4_ext_check_overlap(const struct ext_path *path, uint32_t b1,
				       uint32_t len1)
{
	const struct ext3_extent *ex = path[path[0].depth].ext;
	uint32_t b2;

	if (!ex)
		return len1;
	b2 = ee_block(ex);
	if (b2 < b1) {
		b2 = ext4_ext_next_allocated_block(path);
		if (b2 == EXT_MAX_BLOCKS)
			return len1;
	}
	if (b1 + len1 < b1)
		len1 = EXT_MAX_BLOCKS - b1;
	if (b1 + len1 > b2)
		len1 = b2 - b1;
	return len1;
}

/* The allocation half of ext4_ext_map_blocks, from a path to a hole. */
static errcode_t map_new(struct ext_tree *t, const struct ext_fs *fs,
			 const struct ext_alloc_ops *ops, struct ext_path *path,
			 uint32_t lblk, uint32_t len, uint64_t *phys,
			 uint32_t *got)
{
	struct ext_alloc_req ar = { .logical = lblk, .is_data = t->is_reg };
	struct ext3_extent newex;
	uint64_t newblock;
	uint32_t n;
	int uw = fs->unwritten && t->is_reg;
	errcode_t err;

	ar.lleft = lblk;
	ext4_ext_search_left(path, &ar.lleft, &ar.pleft);
	ar.lright = lblk;
	err = ext4_ext_search_right(t, path, &ar.lright, &ar.pright);
	if (err)
		return err;
	if (len > EXT_INIT_MAX_LEN)
		len = EXT_INIT_MAX_LEN;
	if (uw && len > EXT_UNINIT_MAX_LEN)
		len = EXT_UNINIT_MAX_LEN;
	ar.len = ext4_ext_check_overlap(path, lblk, len);
	ar.goal = ext4_ext_find_goal(t, fs, path, lblk);
	err = ops->data(ops->ctx, &ar, &newblock, &n);
	if (err)
		return err;
	if (n > ar.len)
		n = ar.len;
	memset(&newex, 0, sizeof(newex));
	newex.ee_block = ext2fs_cpu_to_le32(lblk);
	ee_store_pblock(&newex, newblock);
	set_len(&newex, n, uw);
	t->nblocks += n;
	err = ext4_ext_insert_extent(t, fs, ops, path, &newex, uw);
	if (err) {
		if (ops->release)
			ops->release(ops->ctx, newblock, n, 0);
		t->nblocks -= n;
		return err;
	}
	*phys = newblock;
	*got = n;
	return 0;
}

errcode_t ext4_ext_convert_unwritten(struct ext_tree *t,
				     const struct ext_alloc_ops *ops)
{
	struct ext_path path[EXT_PATH_LEN];
	uint64_t lblk = 0, p;
	uint32_t next;
	errcode_t err;

	while (lblk < EXT_MAX_BLOCKS) {
		struct ext3_extent *ex;

		err = ext4_find_extent(t, (uint32_t)lblk, path);
		if (err)
			return err;
		ex = path[path[0].depth].ext;
		if (!ex)
			return 0;
		if (lblk >= ee_block(ex) && lblk - ee_block(ex) < ee_len(ex)) {
			if (ee_unwritten(ex)) {
				/* looked up again: merged, it may be
				 * elsewhere now */
				set_len(ex, ee_len(ex), 0);
				ext4_ext_try_to_merge(t, ops, path, ex);
				continue;
			}
			lblk = (uint64_t)ee_block(ex) + ee_len(ex);
			continue;
		}
		next = (uint32_t)lblk;
		err = ext4_ext_search_right(t, path, &next, &p);
		if (err || !p)
			return err;
		lblk = next;
	}
	return 0;
}

errcode_t ext4_ext_map_blocks(struct ext_tree *t, const struct ext_fs *fs,
			      const struct ext_alloc_ops *ops, uint32_t lblk,
			      uint32_t len, uint64_t *phys, uint32_t *got)
{
	struct ext_path path[EXT_PATH_LEN];
	const struct ext3_extent *ex;
	int depth;
	errcode_t err;

	if (!len)
		return EINVAL;
	if (lblk == EXT_MAX_BLOCKS)
		return ORLOV_ERR_FILE_TOO_BIG;
	if (len > EXT_MAX_BLOCKS - lblk)
		len = EXT_MAX_BLOCKS - lblk;
	err = ext4_find_extent(t, lblk, path);
	if (err)
		return err;
	depth = path[0].depth;
	ex = path[depth].ext;
	if (!ex && depth)
		return ORLOV_ERR_CORRUPT;	/* an empty leaf */
	if (ex && lblk >= ee_block(ex) && lblk - ee_block(ex) < ee_len(ex)) {
		uint32_t left = ee_len(ex) - (lblk - ee_block(ex));

		/* converting unwritten extents is not modelled */
		if (ee_unwritten(ex))
			return ORLOV_ERR_UNSUPP_FEATURE;
		*phys = ee_pblock(ex) + (lblk - ee_block(ex));
		*got = left < len ? left : len;
		return 0;
	}
	return map_new(t, fs, ops, path, lblk, len, phys, got);
}

/* ext4_ext_map_blocks's request: EXT4_MB_HINT_DATA (the file's
 * preallocation context) for regular files only, the neighbours for
 * every file (mballoc reads them only for data). */
static errcode_t mb_data(void *ctx, const struct ext_alloc_req *ar,
			 uint64_t *blk, uint32_t *got)
{
	struct ext_mb *m = ctx;
	struct mb_request r = {
		.mi = ar->is_data ? m->mi : NULL,
		.logical = ar->logical, .len = ar->len, .goal = ar->goal,
		.lleft = ar->lleft, .pleft = ar->pleft,
		.lright = ar->lright, .pright = ar->pright, .ino = m->ino,
		.quota_file = m->mi && m->mi->quota_file,
	};

	return ext4_mb_new_blocks_ar(m->fs, &r, blk, got);
}

/* ext4_new_meta_blocks: one block, no EXT4_MB_HINT_DATA, TRY_GOAL only
 * from ext4_ext_grow_indepth. */
static errcode_t ext4_new_meta_blocks(void *ctx, uint64_t goal, int try_goal,
				      uint64_t *blk)
{
	struct ext_mb *m = ctx;
	struct mb_request r = { .len = 1, .goal = goal, .try_goal = try_goal,
				.quota_file = m->mi && m->mi->quota_file,
				.ino = m->ino };
	uint32_t got;

	return ext4_mb_new_blocks_ar(m->fs, &r, blk, &got);
}

static void mb_release(void *ctx, uint64_t blk, uint32_t count, int meta)
{
	struct ext_mb *m = ctx;

	(void)meta;
	ext4_free_blocks(m->fs, m->ino, blk, count);
}

void ext_mb_ops(struct ext_mb *m, struct ext_alloc_ops *ops)
{
	ops->data = mb_data;
	ops->meta = ext4_new_meta_blocks;
	ops->release = mb_release;
	ops->ctx = m;
}

void ext_fs_of(struct ext_fs *e, const struct fs_state *fs,
	       uint32_t flex_size)
{
	e->g = fs->g;
	e->flex_size = flex_size ? flex_size : 1;
	e->delalloc = fs->driver == ALLOC_EXT4 && fs->mb->delalloc;
	e->unwritten = e->delalloc && fs->mb->writeback &&
		       kver_dioread_nolock(fs->kver, fs->g.block_size);
	e->colour = fs->colour;
}
