// SPDX-License-Identifier: GPL-2.0-or-later
/* The extent map model: goals, requests, merges, holes, the tree's growth
 * (new leaf, split, grow in depth, fold back into the inode); its bytes
 * read back by libext2fs are t-extents-e2fs.c's. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>

#include "model/ext4/extents_tree.h"
#include "model/bmap.h"
#include "lib/orlov_err.h"
#include "tap.h"
#include "fixture.h"
#include "ext_fixture.h"

#define FAKE_BLOCKS (1u << 20)
#define LOG_MAX 4096

/* One request as the allocator saw it. */
struct req {
	char kind;		/* 'd' data, 'm' tree block */
	uint64_t goal, got;
	uint32_t len, n;
	int try_goal;
	struct ext_alloc_req ar;
};

/* A first-fit allocator from the goal on that logs every request.  With
 * @scatter, data skips a block after each run, so that no two runs are
 * physically contiguous. */
struct fake {
	unsigned char *used;
	uint64_t first, cursor;
	int scatter;
	struct req log[LOG_MAX];
	int nlog;
	uint64_t released[16];
	int nreleased;
};

static uint64_t first_free(struct fake *f, uint64_t from)
{
	uint64_t b;

	if (from < f->first || from >= FAKE_BLOCKS)
		from = f->first;
	for (b = from; b < FAKE_BLOCKS; b++)
		if (!f->used[b])
			return b;
	for (b = f->first; b < from; b++)
		if (!f->used[b])
			return b;
	return 0;
}

static struct req *log_req(struct fake *f, char kind)
{
	struct req *r = &f->log[f->nlog < LOG_MAX ? f->nlog++ : LOG_MAX - 1];

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	return r;
}

static errcode_t fake_data(void *ctx, const struct ext_alloc_req *ar,
			   uint64_t *blk, uint32_t *got)
{
	struct fake *f = ctx;
	struct req *r = log_req(f, 'd');
	uint64_t b = first_free(f, f->scatter ? f->cursor : ar->goal);
	uint32_t n = 0;

	if (!b)
		return ORLOV_ERR_NO_BLOCKS;
	while (n < ar->len && b + n < FAKE_BLOCKS && !f->used[b + n])
		f->used[b + n++] = 1;
	r->ar = *ar;
	r->goal = ar->goal;
	r->len = ar->len;
	r->got = *blk = b;
	r->n = *got = n;
	f->cursor = b + n + 1;
	return 0;
}

static errcode_t fake_meta(void *ctx, uint64_t goal, int try_goal,
			   uint64_t *blk)
{
	struct fake *f = ctx;
	struct req *r = log_req(f, 'm');
	uint64_t b = first_free(f, goal);

	if (!b)
		return ORLOV_ERR_NO_BLOCKS;
	f->used[b] = 1;
	r->goal = goal;
	r->try_goal = try_goal;
	r->got = *blk = b;
	r->len = r->n = 1;
	return 0;
}

static void fake_release(void *ctx, uint64_t blk, uint32_t count, int meta)
{
	struct fake *f = ctx;

	(void)meta;
	while (count--)
		f->used[blk + count] = 0;
	if (f->nreleased < 16)
		f->released[f->nreleased++] = blk;
}

static void fake_init(struct fake *f, uint64_t first, int scatter)
{
	unsigned char *used = f->used;

	memset(f, 0, sizeof(*f));
	f->used = used ? used : malloc(FAKE_BLOCKS);
	if (!f->used)
		exit(99);
	memset(f->used, 0, FAKE_BLOCKS);
	f->first = f->cursor = first;
	f->scatter = scatter;
}

static struct ext_alloc_ops ops_of(struct fake *f)
{
	struct ext_alloc_ops o = {
		.data = fake_data, .meta = fake_meta, .release = fake_release,
		.ctx = f,
	};
	return o;
}

/* 8 groups of 8192 blocks of 1 KiB, flex groups of 16, writer colour 3 */
static const struct ext_fs fs1k = {
	.g = { .first_data_block = 1, .blocks_count = 8 * 8192 + 1,
	       .blocks_per_group = 8192, .block_size = 1024 },
	.flex_size = 16, .delalloc = 0, .colour = 3,
};

static const struct ext3_extent_header *root_hdr(const struct ext_tree *t)
{
	return (const struct ext3_extent_header *)t->i_block;
}

static void test_goal_block(void)
{
	struct ext_fs fs = fs1k;

	is_int(ext4_inode_to_goal_block(&fs, 5, 1), 1 + 8192 + 3 * 512,
	       "a regular file's goal: its flex group's second group, coloured");
	is_int(ext4_inode_to_goal_block(&fs, 5, 0), 1 + 3 * 512,
	       "a directory's goal: its flex group's first group");
	fs.delalloc = 1;
	is_int(ext4_inode_to_goal_block(&fs, 5, 1), 1 + 8192,
	       "with delayed allocation the colour is left out");
	fs.delalloc = 0;
	fs.flex_size = 2;
	is_int(ext4_inode_to_goal_block(&fs, 5, 1), 1 + 5 * 8192 + 3 * 512,
	       "flex groups under 4: the inode's own group");
	fs.g.blocks_count = 7 * 8192 + 1 + 1000;
	is_int(ext4_inode_to_goal_block(&fs, 7, 1), 1 + 7 * 8192 + 3 * (999 / 16),
	       "in a short last group the colour scales to what is left");
}

/* Appends one block at a time, as a write without delayed allocation. */
static void test_appends_merge(struct fake *f)
{
	struct ext_alloc_ops o = ops_of(f);
	struct ext_tree t;
	struct ext3_extent ex;
	uint64_t p0, goal = ext4_inode_to_goal_block(&fs1k, 0, 1);
	uint32_t lb;
	int ok = 1;

	fake_init(f, 1, 0);
	ext4_ext_tree_init(&t, 1024, 0, 1);
	is_int(eh_max(root_hdr(&t)), 4, "an empty root has room for 4 extents");
	p0 = map1(&t, &fs1k, &o, 0);
	is_int(f->log[0].goal, goal, "the first block's goal is the inode's");
	is_int(p0, goal, "and the allocator gave it");
	is_int(f->log[0].ar.pleft, 0, "no left neighbour");
	is_int(f->log[0].ar.pright, 0, "no right neighbour");
	is_int(f->log[0].ar.is_data, 1, "a regular file's data request");
	for (lb = 1; lb < 10; lb++)
		ok &= map1(&t, &fs1k, &o, lb) == p0 + lb;
	tap_ok(ok, "each next block follows the last");
	is_int(f->log[1].goal, p0 + 1, "the goal continues the extent");
	is_int(f->log[1].ar.lleft, 0, "the left neighbour's logical block");
	is_int(f->log[1].ar.pleft, p0, "and its physical block");
	is_int(eh_entries(root_hdr(&t)), 1, "ten appends make one extent");
	tap_ok(nth_extent(&t, 0, &ex) && ee_len(&ex) == 10 &&
	       ee_pblock(&ex) == p0, "of ten blocks from the first");
	is_int(t.nblocks, 10, "ten blocks held");
	ext_tree_release(&t);
	ext4_ext_tree_init(&t, 1024, 5, 0);
	f->nlog = 0;
	map1(&t, &fs1k, &o, 0);
	tap_ok(f->log[0].goal == ext4_inode_to_goal_block(&fs1k, 5, 0) &&
	       !f->log[0].ar.is_data,
	       "a directory's block: its own goal, not a data request");
	ext_tree_release(&t);
}

/* An unwritten extent (fallocate) read from an image is a hole to the
 * reader, and writing into it is refused: its conversion is not
 * modelled. */
static void test_unwritten(struct fake *f)
{
	struct ext_alloc_ops o = ops_of(f);
	struct ext_tree t, u;
	struct ext3_extent *ex;
	uint64_t phys;
	uint32_t len, got;

	fake_init(f, 1, 0);
	ext4_ext_tree_init(&u, 1024, 0, 1);
	ext_root(&u)->eh_entries = ext2fs_cpu_to_le16(1);
	ex = EXT_FIRST_EXTENT(ext_root(&u));
	ee_store_pblock(ex, 5000);
	ex->ee_len = ext2fs_cpu_to_le16(EXT_INIT_MAX_LEN + 5);
	is_int(ext_tree_load(&t, 1024, 0, 1, u.i_block), 0, "the root loads");
	tap_ok(!ext_lookup(&t, 2, &phys, &len) && phys == 0 && len == 3,
	       "an unwritten extent looks up as a hole");
	is_int(ext4_ext_map_blocks(&t, &fs1k, &o, 2, 1, &phys, &got),
	       ORLOV_ERR_UNSUPP_FEATURE, "writing into it is refused");
	ext_tree_release(&t);
	ext_tree_release(&u);
}

static void test_hole(struct fake *f)
{
	struct ext_alloc_ops o = ops_of(f);
	struct ext_tree t;
	struct ext3_extent ex;
	uint64_t p0, p, phys;
	uint32_t lb, len, got;
	int ok = 1;

	fake_init(f, 1, 0);
	ext4_ext_tree_init(&t, 1024, 0, 1);
	for (lb = 0; lb < 3; lb++)
		p0 = map1(&t, &fs1k, &o, lb) - lb;
	f->nlog = 0;
	p = map1(&t, &fs1k, &o, 10);
	is_int(f->log[0].goal, p0 + 10, "past a hole the goal keeps the offset");
	is_int(p, p0 + 10, "so the file stays contiguous on disk");
	is_int(eh_entries(root_hdr(&t)), 2, "a hole makes a second extent");
	tap_ok(!ext_lookup(&t, 5, &phys, &len) && phys == 0 && len == 5,
	       "the hole reads as a hole up to the next extent");
	tap_ok(!ext_lookup(&t, 11, &phys, &len) && phys == 0 &&
	       len == EXT_MAX_BLOCKS - 11, "past the last extent: no end");
	f->nlog = 0;
	tap_ok(!ext4_ext_map_blocks(&t, &fs1k, &o, 3, 100, &phys, &got) &&
	       got == 7 && phys == p0 + 3, "a request into the hole stops at its end");
	is_int(f->log[0].len, 7, "the request is capped to the hole");
	is_int(f->log[0].ar.lleft, 2, "left neighbour: the last block before");
	is_int(f->log[0].ar.pleft, p0 + 2, "at its physical block");
	is_int(f->log[0].ar.lright, 10, "right neighbour: the first block after");
	is_int(f->log[0].ar.pright, p0 + 10, "at its physical block");
	is_int(eh_entries(root_hdr(&t)), 1, "filling the hole merges both sides");
	tap_ok(nth_extent(&t, 0, &ex) && ee_len(&ex) == 11, "into 11 blocks");
	tap_ok(!ext4_ext_map_blocks(&t, &fs1k, &o, 2, 50, &phys, &got) &&
	       phys == p0 + 2 && got == 9, "mapped blocks come back as they are");
	for (lb = 0; lb < 11; lb++)
		ok &= !ext_lookup(&t, lb, &phys, &len) && phys == p0 + lb &&
		      len == 11 - lb;
	tap_ok(ok, "every block looks up");
	ext_tree_release(&t);
	ext4_ext_tree_init(&t, 1024, 0, 1);
	f->nlog = 0;
	tap_ok(!ext4_ext_map_blocks(&t, &fs1k, &o, 0, 40000, &phys, &got) &&
	       got == 32768, "a long request maps one extent's worth");
	is_int(f->log[0].len, 32768, "capped to EXT_INIT_MAX_LEN");
	ext_tree_release(&t);
}

/* Four scattered extents fill the root; the fifth moves them into a leaf
 * asked for at the inode's goal, after the data block. */
static void test_grow_depth1(struct fake *f)
{
	struct ext_alloc_ops o = ops_of(f);
	struct ext_tree t;
	uint32_t before[EXT2_N_BLOCKS];
	const struct ext3_extent_header *leaf;
	const struct ext3_extent_idx *ix;
	uint64_t leafblk;
	int i;

	fake_init(f, 1, 1);
	ext4_ext_tree_init(&t, 1024, 0, 1);
	for (i = 0; i < 4; i++)
		map1(&t, &fs1k, &o, (uint32_t)(2 * i));
	is_int(eh_entries(root_hdr(&t)), 4, "four extents fill the root");
	is_int(ext_tree_depth(&t), 0, "still depth 0");
	memcpy(before, t.i_block, sizeof(before));
	f->nlog = 0;
	map1(&t, &fs1k, &o, 8);
	is_int(f->nlog, 2, "the fifth extent: two requests");
	tap_ok(f->log[0].kind == 'd' && f->log[1].kind == 'm',
	       "data first, then the tree block");
	is_int(f->log[1].goal, ext4_inode_to_goal_block(&fs1k, 0, 1),
	       "the new leaf's goal is the inode's goal");
	is_int(f->log[1].try_goal, 0, "without TRY_GOAL");
	is_int(ext_tree_depth(&t), 1, "the tree is one level deep");
	is_int(eh_entries(root_hdr(&t)), 1, "the root holds one index");
	ix = EXT_FIRST_INDEX(root_hdr(&t));
	leafblk = f->log[1].got;
	is_int(ei_pblock(ix), leafblk, "to the new leaf");
	is_int(ei_block(ix), 0, "from logical block 0");
	tap_ok(!memcmp((const char *)t.i_block + 24, (const char *)before + 24, 36),
	       "the root keeps the moved extents' bytes past its one index");
	is_int(t.n, 1, "one tree block");
	leaf = (const struct ext3_extent_header *)t.node[0]->buf;
	is_int(eh_entries(leaf), 5, "the leaf holds the five extents");
	is_int(eh_max(leaf), (1024 - 12) / 12, "a 1 KiB leaf has room for 84");
	is_int(eh_depth(leaf), 0, "and is a leaf");
	is_int(t.nblocks, 6, "five data blocks and the leaf");
	ext_tree_release(&t);
}

/* A 1-level tree whose only leaf is full: an extent past its end starts a
 * new leaf; one inside it splits it. */
static void fill_leaf(struct ext_tree *t, struct fake *f, uint32_t n)
{
	struct ext_alloc_ops o = ops_of(f);
	uint32_t i;

	for (i = 0; i < n; i++)
		map1(t, &fs1k, &o, 2 * i);
}

static void test_new_leaf(struct fake *f)
{
	struct ext_alloc_ops o = ops_of(f);
	struct ext_tree t;
	const struct ext3_extent_header *root;
	struct ext3_extent last;
	uint64_t p;

	fake_init(f, 1, 1);
	ext4_ext_tree_init(&t, 1024, 0, 1);
	fill_leaf(&t, f, 84);
	root = root_hdr(&t);
	is_int(eh_entries((struct ext3_extent_header *)t.node[0]->buf), 84,
	       "84 extents fill the leaf");
	nth_extent(&t, 83, &last);
	f->nlog = 0;
	p = map1(&t, &fs1k, &o, 200);
	tap_ok(f->nlog == 2 && f->log[0].kind == 'd' && f->log[1].kind == 'm',
	       "the 85th extent: its data, then a new leaf");
	is_int(f->log[1].goal, ee_pblock(&last) + (200 - ee_block(&last)),
	       "the new leaf's goal: where the last extent would put block 200");
	is_int(ext_tree_depth(&t), 1, "no deeper");
	is_int(eh_entries(root), 2, "the root indexes two leaves");
	is_int(ei_block(EXT_FIRST_INDEX(root) + 1), 200,
	       "the second from the new extent on");
	is_int(eh_entries((struct ext3_extent_header *)t.node[1]->buf), 1,
	       "the new leaf holds the new extent alone");
	is_int(eh_entries((struct ext3_extent_header *)t.node[0]->buf), 84,
	       "the old one stays full");
	nth_extent(&t, 84, &last);
	is_int(ee_pblock(&last), p, "and it is the 85th extent");
	f->nlog = 0;
	map1(&t, &fs1k, &o, 180);
	is_int(f->nlog, 1, "an extent between the two leaves: no tree block");
	is_int(eh_entries((struct ext3_extent_header *)t.node[1]->buf), 2,
	       "it goes to the front of the next leaf, which has room");
	is_int(ei_block(EXT_FIRST_INDEX(root) + 1), 180,
	       "whose index now starts at it");
	ext_tree_release(&t);
}

static void test_split(struct fake *f)
{
	struct ext_alloc_ops o = ops_of(f);
	struct ext_tree t;
	const struct ext3_extent_header *root, *l0, *l1;
	struct ext3_extent ex;
	uint64_t phys;
	uint32_t len, i;
	int ok = 1;

	fake_init(f, 1, 1);
	ext4_ext_tree_init(&t, 1024, 0, 1);
	fill_leaf(&t, f, 84);
	nth_extent(&t, 0, &ex);
	f->nlog = 0;
	map1(&t, &fs1k, &o, 1);
	is_int(f->log[1].goal, ee_pblock(&ex) + 1,
	       "the split's leaf goal: block 1 after the first extent");
	root = root_hdr(&t);
	l0 = (const struct ext3_extent_header *)t.node[0]->buf;
	l1 = (const struct ext3_extent_header *)t.node[1]->buf;
	is_int(eh_entries(root), 2, "a split adds a leaf");
	is_int(ei_block(EXT_FIRST_INDEX(root) + 1), 2,
	       "which starts at the extent right of the path");
	is_int(eh_entries(l1), 83, "the 83 extents right of it move");
	is_int(eh_entries(l0), 2, "the old leaf keeps the first and the new one");
	for (i = 0; i < 84; i++)
		ok &= !ext_lookup(&t, 2 * i, &phys, &len) && phys && len == 1;
	ok &= !ext_lookup(&t, 1, &phys, &len) && phys == f->log[0].got;
	tap_ok(ok, "every block still looks up");
	ext_tree_release(&t);
}

/* Depth 1 with four full-ish leaves, then depth 2: the new top block is
 * asked for just before the first leaf, with TRY_GOAL. */
static void test_grow_depth2(struct fake *f)
{
	struct ext_alloc_ops o = ops_of(f);
	struct ext_tree t;
	uint64_t first_leaf = 0, phys;
	uint32_t i, n, len;
	int ok = 1, grew = -1;

	fake_init(f, 1, 1);
	ext4_ext_tree_init(&t, 1024, 0, 1);
	for (n = 0; n < 400 && grew < 0; n++) {
		if (ext_tree_depth(&t) == 1 && eh_entries(root_hdr(&t)) == 1)
			first_leaf = ei_pblock(EXT_FIRST_INDEX(root_hdr(&t)));
		f->nlog = 0;
		map1(&t, &fs1k, &o, 2 * n);
		if (ext_tree_depth(&t) == 2)
			grew = (int)n;
	}
	is_int(grew, 84 * 4, "depth 2 at the extent that finds four "
	       "leaves with the last one full");
	tap_ok(f->nlog == 3 && f->log[1].kind == 'm' && f->log[2].kind == 'm',
	       "two tree blocks: the new top index, then a new leaf");
	is_int(f->log[1].goal, first_leaf - 1,
	       "the index block's goal: just before the first leaf");
	is_int(f->log[1].try_goal, 1, "with TRY_GOAL");
	is_int(eh_entries(root_hdr(&t)), 1, "the root holds one index");
	for (; n < 400; n++)
		map1(&t, &fs1k, &o, 2 * n);
	for (i = 0; i < 400; i++)
		ok &= !ext_lookup(&t, 2 * i, &phys, &len) && phys && len == 1;
	tap_ok(ok, "400 extents at depth 2 all look up");
	is_int(t.nblocks, 400 + t.n, "blocks held: data and tree");
	ext_tree_release(&t);
}

/* A full root, and an extent that continues its right neighbour but not
 * its left one: the tree grows, then the merge leaves four extents and
 * the leaf goes back into the inode. */
static void test_merge_up(struct fake *f)
{
	struct ext_alloc_ops o = ops_of(f);
	struct ext_tree t;
	struct ext3_extent ex;
	uint64_t g;

	fake_init(f, 1, 0);
	ext4_ext_tree_init(&t, 1024, 0, 1);
	g = map1(&t, &fs1k, &o, 0);
	map1(&t, &fs1k, &o, 2);
	map1(&t, &fs1k, &o, 4);
	memset(f->used + g + 5, 1, 5);
	is_int(map1(&t, &fs1k, &o, 6), g + 10, "block 6 lands past a used run");
	f->used[g + 9] = 0;
	is_int(eh_entries(root_hdr(&t)), 4, "four extents in the root");
	f->nlog = 0;
	is_int(map1(&t, &fs1k, &o, 5), g + 9,
	       "block 5 lands right before block 6, away from block 4");
	tap_ok(f->nlog == 2 && f->log[1].kind == 'm', "the tree grew for it");
	is_int(f->nreleased, 1, "then gave its leaf back");
	is_int(f->released[0], f->log[1].got, "the one it had just taken");
	is_int(ext_tree_depth(&t), 0, "depth 0 again");
	is_int(eh_entries(root_hdr(&t)), 4, "four extents");
	tap_ok(nth_extent(&t, 3, &ex) && ee_block(&ex) == 5 && ee_len(&ex) == 2,
	       "the last one from block 5, of two blocks");
	is_int(t.n, 0, "no tree block");
	is_int(t.nblocks, 5, "five data blocks held");
	ext_tree_release(&t);
}

/* ext4's writeback on a dioread_nolock mount: a new extent is unwritten,
 * so it does not merge with the written one it continues; a fifth extent
 * grows the tree; once the writes complete the conversion merges them and
 * folds the tree back into the inode, giving its block back. */
static void test_convert(struct fake *f)
{
	struct ext_alloc_ops o = ops_of(f);
	struct ext_fs uw = fs1k;
	struct ext_tree t;
	struct ext3_extent ex;
	uint64_t g, leaf;
	int i, unwritten = 0;

	uw.unwritten = 1;
	fake_init(f, 1, 0);
	ext4_ext_tree_init(&t, 1024, 0, 1);
	g = map1(&t, &fs1k, &o, 0);
	map1(&t, &fs1k, &o, 2);
	map1(&t, &fs1k, &o, 4);
	map1(&t, &fs1k, &o, 6);
	is_int(eh_entries(root_hdr(&t)), 4, "four written extents, the root full");
	f->nlog = 0;
	is_int(map1(&t, &uw, &o, 7), g + 7, "block 7 right after block 6");
	tap_ok(f->nlog == 2 && f->log[1].kind == 'm',
	       "unwritten, it does not merge: the tree grew");
	leaf = f->log[1].got;
	is_int(ext_tree_depth(&t), 1, "depth 1");
	tap_ok(nth_extent(&t, 4, &ex) && ee_unwritten(&ex) && ee_block(&ex) == 7,
	       "the fifth extent, unwritten");
	f->nreleased = 0;
	is_int(ext4_ext_convert_unwritten(&t, &o), 0, "the writes complete");
	is_int(ext_tree_depth(&t), 0, "merged, the tree folded back");
	tap_ok(f->nreleased == 1 && f->released[0] == leaf, "its leaf given back");
	tap_ok(nth_extent(&t, 3, &ex) && ee_block(&ex) == 6 && ee_len(&ex) == 2 &&
	       !ee_unwritten(&ex), "the last extent: blocks 6 and 7, written");
	for (i = 0; nth_extent(&t, (unsigned int)i, &ex); i++)
		unwritten += ee_unwritten(&ex);
	is_int(unwritten, 0, "nothing left unwritten");
	is_int(t.nblocks, 5, "five data blocks held");
	ext_tree_release(&t);
}

/* Two trees hold the same bytes, root and blocks. */
static int same_trees(const struct ext_tree *a, const struct ext_tree *b)
{
	size_t i, j;

	if (memcmp(a->i_block, b->i_block, sizeof(a->i_block)) || a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++) {
		for (j = 0; j < b->n && b->node[j]->blk != a->node[i]->blk; j++)
			;
		if (j == b->n ||
		    memcmp(a->node[i]->buf, b->node[j]->buf, a->block_size))
			return 0;
	}
	return 1;
}

/* A tree read back from its bytes (root, then the blocks it asks for)
 * grows as the one that wrote them. */
static void test_load(struct fake *f)
{
	struct fake *g = calloc(1, sizeof(*g));
	struct ext_alloc_ops o = ops_of(f), og;
	struct ext_tree a, b;
	uint64_t blk;
	unsigned int depth;
	uint32_t i;
	size_t k;
	int ok = 1, asked = 0;

	if (!g)
		exit(99);
	fake_init(f, 1, 1);
	ext4_ext_tree_init(&a, 1024, 0, 1);
	fill_leaf(&a, f, 400);
	is_int(ext_tree_load(&b, 1024, 0, 1, a.i_block), 0, "the root loads");
	while (ext_tree_wanted(&b, &blk, &depth) && asked++ < 100) {
		for (k = 0; k < a.n && a.node[k]->blk != blk; k++)
			;
		ok &= k < a.n && depth == eh_depth((struct ext3_extent_header *)
						   a.node[k]->buf);
		if (k == a.n || ext_tree_attach(&b, blk, a.node[k]->buf))
			break;
	}
	tap_ok(ok && (size_t)asked == a.n && b.n == a.n,
	       "each tree block asked for once, with its depth");
	tap_ok(ext_tree_attach(&b, a.node[0]->blk, a.node[0]->buf) ==
	       ORLOV_ERR_CORRUPT, "a block attached twice is refused");
	g->used = malloc(FAKE_BLOCKS);
	if (!g->used)
		exit(99);
	memcpy(g->used, f->used, FAKE_BLOCKS);
	g->first = f->first;
	g->cursor = f->cursor;
	g->scatter = 1;
	og = ops_of(g);
	b.nblocks = a.nblocks;
	for (i = 400; i < 700; i++) {
		ok &= map1(&a, &fs1k, &o, 2 * i) != 0;
		ok &= map1(&b, &fs1k, &og, 2 * i) != 0;
	}
	tap_ok(ok && same_trees(&a, &b) && a.nblocks == b.nblocks,
	       "300 more extents leave both trees byte for byte the same");
	ext_tree_release(&b);
	a.i_block[0] = 0;
	tap_ok(ext_tree_load(&b, 1024, 0, 1, a.i_block) == ORLOV_ERR_CORRUPT,
	       "a root without the magic is refused");
	ext_tree_release(&a);
	ext_tree_release(&b);
	free(g->used);
	free(g);
}

static void test_sizes(void)
{
	is_int(ext_blocks_needed(1024, 10), 10, "a small file: no tree block");
	is_int(ext_blocks_needed(1024, 4 * 32768ULL), 4 * 32768ULL,
	       "four full extents fit in the root");
	is_int(ext_blocks_needed(1024, 5 * 32768ULL), 5 * 32768ULL + 1,
	       "a fifth needs a leaf");
	is_int(ext_blocks_needed(1024, 336 * 32768ULL), 336 * 32768ULL + 4,
	       "four full leaves still hang from the root");
	is_int(ext_blocks_needed(1024, 337 * 32768ULL), 337 * 32768ULL + 6,
	       "a fifth leaf needs an index block");
	is_int(ext4_max_size(10, 0), ((1ULL << 31) - 1) << 10,
	       "1 KiB blocks without huge_file: i_blocks limits the size");
	is_int(ext4_max_size(12, 1), ((1ULL << 32) - 1) << 12,
	       "4 KiB blocks with huge_file: 2^32 - 1 blocks");
}

/* 4 groups of 8192 blocks of 1 KiB, the first 300 of each in use, with
 * mballoc's state (as in t-mballoc). */
static int mb_fixture(struct fs_state *fs)
{
	memset(fs, 0, sizeof(*fs));
	fixture_state(fs, 4, 2048, 8192, 300);
	return mb_state_init(fs, 1) == 0;
}

/* Through the mballoc model, a small file lands where the indirect map
 * puts it with the same requests; a tree block is metadata, marked in
 * the bitmap. */
static void test_mballoc(void)
{
	struct fs_state a, b;
	struct ifile f;
	struct mb_inode mi;
	struct ext_mb m = { .fs = &a, .mi = &mi };
	struct ext_alloc_ops o;
	struct ext_fs efs;
	struct ext_tree t;
	uint64_t p;
	fsblk_t pb;
	uint32_t lb;
	int ok;

	if (!mb_fixture(&a) || !mb_fixture(&b)) {
		tap_ok(0, "two mballoc states");
		return;
	}
	memset(&mi, 0, sizeof(mi));
	ext_mb_ops(&m, &o);
	a.colour = b.colour = 7;
	ext_fs_of(&efs, &a, 1);
	tap_ok(efs.g.blocks_per_group == 8192 && efs.g.first_data_block == 1 &&
	       efs.colour == 7 && efs.flex_size == 1,
	       "the geometry and the writer's colour come from the state");
	ext4_ext_tree_init(&t, 1024, 1, 1);
	ifile_init(&f, 2049, 2048);
	ok = 1;
	for (lb = 0; lb < 12; lb++) {
		mi.i_size = f.mb.i_size = (uint64_t)lb * 1024;
		p = map1(&t, &efs, &o, lb);
		ok &= p && !bmap_get_block(&b, &f, 1, lb, &pb) && p == pb;
	}
	tap_ok(ok, "twelve appended blocks land as the indirect map's do");
	is_int(eh_entries(root_hdr(&t)), 1, "in one extent");
	for (lb = 20; lb < 30; lb += 2) {
		mi.i_size = (uint64_t)lb * 1024;
		map1(&t, &efs, &o, lb);
	}
	tap_ok(ext_tree_depth(&t) == 1 && t.n == 1 &&
	       block_in_use(&a, (uint32_t)t.node[0]->blk),
	       "a sparse tail grows the tree; its leaf is in use in the bitmap");
	is_int(t.nblocks, 12 + 5 + 1, "blocks held: data and the leaf");
	ext_tree_release(&t);
	ext4_discard_preallocations(&a, &mi);
	mb_inode_release(&mi);
	ifile_release(&b, &f);
	mb_state_free(&a);
	fs_state_free(&a);
	mb_state_free(&b);
	fs_state_free(&b);
}

int main(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	if (!f)
		return 99;
	test_goal_block();
	test_appends_merge(f);
	test_hole(f);
	test_unwritten(f);
	test_grow_depth1(f);
	test_new_leaf(f);
	test_split(f);
	test_grow_depth2(f);
	test_merge_up(f);
	test_convert(f);
	test_load(f);
	test_sizes();
	test_mballoc();
	free(f->used);
	free(f);
	return tap_done();
}
