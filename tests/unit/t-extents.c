// SPDX-License-Identifier: GPL-2.0-or-later
/* The extent map model: goals, requests, merges, holes, the tree's growth
 * (new leaf, split, grow in depth, fold back into the inode), and its
 * bytes read back by libext2fs. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>

#include "model/ext_tree.h"
#include "model/bmap.h"
#include "lib/orlov_err.h"
#include "tap.h"
#include "fixture.h"

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
	.first_data_block = 1, .blocks_count = 8 * 8192 + 1,
	.blocks_per_group = 8192, .block_size = 1024, .flex_size = 16,
	.delalloc = 0, .colour = 3,
};

static uint64_t map1(struct ext_tree *t, const struct ext_fs *fs,
		     const struct ext_alloc_ops *o, uint32_t lb)
{
	uint64_t p = 0;
	uint32_t got = 0;
	errcode_t err = ext_map_blocks(t, fs, o, lb, 1, &p, &got);

	return err || got != 1 ? 0 : p;
}

static const struct ext3_extent_header *root_hdr(const struct ext_tree *t)
{
	return (const struct ext3_extent_header *)t->i_block;
}

/* The @i-th extent of the tree, leaves left to right. */
static int nth_extent(struct ext_tree *t, unsigned int i,
		      struct ext3_extent *out)
{
	struct ext_path path[EXT_PATH_LEN];
	uint32_t lb = 0;
	unsigned int k = 0;

	for (;;) {
		const struct ext_path *leaf;
		const struct ext3_extent *ex;

		if (ext_find_extent(t, lb, path))
			return 0;
		leaf = &path[path[0].depth];
		for (ex = leaf->ext; ex && ex <= EXT_LAST_EXTENT(leaf->hdr);
		     ex++, k++) {
			if (k == i) {
				*out = *ex;
				return 1;
			}
		}
		lb = ext_next_leaf_block(path);
		if (lb == EXT_MAX_BLOCKS)
			return 0;
	}
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
	fs.blocks_count = 7 * 8192 + 1 + 1000;
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
	ext_tree_init(&t, 1024, 0, 1);
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
	ext_tree_init(&t, 1024, 5, 0);
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
	ext_tree_init(&u, 1024, 0, 1);
	ext_root(&u)->eh_entries = ext2fs_cpu_to_le16(1);
	ex = EXT_FIRST_EXTENT(ext_root(&u));
	ee_store_pblock(ex, 5000);
	ex->ee_len = ext2fs_cpu_to_le16(EXT_INIT_MAX_LEN + 5);
	is_int(ext_tree_load(&t, 1024, 0, 1, u.i_block), 0, "the root loads");
	tap_ok(!ext_lookup(&t, 2, &phys, &len) && phys == 0 && len == 3,
	       "an unwritten extent looks up as a hole");
	is_int(ext_map_blocks(&t, &fs1k, &o, 2, 1, &phys, &got),
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
	ext_tree_init(&t, 1024, 0, 1);
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
	tap_ok(!ext_map_blocks(&t, &fs1k, &o, 3, 100, &phys, &got) &&
	       got == 7 && phys == p0 + 3, "a request into the hole stops at its end");
	is_int(f->log[0].len, 7, "the request is capped to the hole");
	is_int(f->log[0].ar.lleft, 2, "left neighbour: the last block before");
	is_int(f->log[0].ar.pleft, p0 + 2, "at its physical block");
	is_int(f->log[0].ar.lright, 10, "right neighbour: the first block after");
	is_int(f->log[0].ar.pright, p0 + 10, "at its physical block");
	is_int(eh_entries(root_hdr(&t)), 1, "filling the hole merges both sides");
	tap_ok(nth_extent(&t, 0, &ex) && ee_len(&ex) == 11, "into 11 blocks");
	tap_ok(!ext_map_blocks(&t, &fs1k, &o, 2, 50, &phys, &got) &&
	       phys == p0 + 2 && got == 9, "mapped blocks come back as they are");
	for (lb = 0; lb < 11; lb++)
		ok &= !ext_lookup(&t, lb, &phys, &len) && phys == p0 + lb &&
		      len == 11 - lb;
	tap_ok(ok, "every block looks up");
	ext_tree_release(&t);
	ext_tree_init(&t, 1024, 0, 1);
	f->nlog = 0;
	tap_ok(!ext_map_blocks(&t, &fs1k, &o, 0, 40000, &phys, &got) &&
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
	ext_tree_init(&t, 1024, 0, 1);
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
	ext_tree_init(&t, 1024, 0, 1);
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
	ext_tree_init(&t, 1024, 0, 1);
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
	ext_tree_init(&t, 1024, 0, 1);
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
	ext_tree_init(&t, 1024, 0, 1);
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
	ext_tree_init(&a, 1024, 0, 1);
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
	uint32_t lb, pb;
	int ok;

	if (!mb_fixture(&a) || !mb_fixture(&b)) {
		tap_ok(0, "two mballoc states");
		return;
	}
	memset(&mi, 0, sizeof(mi));
	ext_mb_ops(&m, &o);
	a.colour = b.colour = 7;
	ext_fs_of(&efs, &a, 1);
	tap_ok(efs.blocks_per_group == 8192 && efs.first_data_block == 1 &&
	       efs.colour == 7 && efs.flex_size == 1,
	       "the geometry and the writer's colour come from the state");
	ext_tree_init(&t, 1024, 1, 1);
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
	ext4_discard_inode_pa(&a, &mi);
	mb_inode_release(&mi);
	ifile_release(&b, &f);
	mb_state_free(&a);
	fs_state_free(&a);
	mb_state_free(&b);
	fs_state_free(&b);
}

/* The allocator is libext2fs's: blocks marked in the image's bitmap. */
static errcode_t e2_data(void *ctx, const struct ext_alloc_req *ar,
			 uint64_t *blk, uint32_t *got)
{
	ext2_filsys fs = ctx;
	blk64_t b;
	uint32_t n = 0;
	errcode_t err = ext2fs_new_block2(fs, ar->goal, NULL, &b);

	if (err)
		return err;
	while (n < ar->len && b + n < ext2fs_blocks_count(fs->super) &&
	       !ext2fs_test_block_bitmap2(fs->block_map, b + n))
		ext2fs_block_alloc_stats2(fs, b + n++, +1);
	*blk = b;
	*got = n;
	return 0;
}

static errcode_t e2_meta(void *ctx, uint64_t goal, int try_goal, uint64_t *blk)
{
	ext2_filsys fs = ctx;
	blk64_t b;
	errcode_t err = ext2fs_new_block2(fs, goal, NULL, &b);

	(void)try_goal;
	if (!err) {
		ext2fs_block_alloc_stats2(fs, b, +1);
		*blk = b;
	}
	return err;
}

static void e2_release(void *ctx, uint64_t blk, uint32_t count, int meta)
{
	(void)meta;
	while (count--)
		ext2fs_block_alloc_stats2(ctx, blk + count, -1);
}

struct e2_write {
	ext2_filsys fs;
	ext2_ino_t ino;
	unsigned char *buf;
	int tails_free;
};

/* What the image will do with each tree block: the checksum in its tail,
 * then the write. */
static errcode_t e2_write_block(void *ctx, uint64_t blk, const void *buf)
{
	struct e2_write *w = ctx;
	const struct ext3_extent_header *eh = buf;
	size_t tail = EXT_HDR_SIZE + (size_t)eh_max(eh) * EXT_ENTRY_SIZE;
	static const unsigned char zero[4];
	errcode_t err;

	if (tail + 4 <= w->fs->blocksize &&
	    !memcmp(zero, (const char *)buf + tail, 4))
		w->tails_free++;
	memcpy(w->buf, buf, w->fs->blocksize);
	err = ext2fs_extent_block_csum_set(w->fs, w->ino,
					   (struct ext3_extent_header *)w->buf);
	return err ? err : io_channel_write_blk64(w->fs->io, blk, 1, w->buf);
}

static ext2_filsys e2_image(const char *path, unsigned int bits)
{
	struct ext2_super_block sb;
	ext2_filsys fs;
	unsigned int i;

	memset(&sb, 0, sizeof(sb));
	ext2fs_blocks_count_set(&sb, 16384);
	sb.s_log_block_size = bits - 10;
	sb.s_inodes_count = 512;
	sb.s_rev_level = EXT2_DYNAMIC_REV;
	sb.s_inode_size = 256;
	ext2fs_set_feature_extents(&sb);
	ext2fs_set_feature_metadata_csum(&sb);
	if (ext2fs_initialize(path, EXT2_FLAG_RW | EXT2_FLAG_64BITS, &sb,
			      unix_io_manager, &fs))
		return NULL;
	for (i = 0; i < sizeof(fs->super->s_uuid); i++)
		fs->super->s_uuid[i] = (unsigned char)(i * 17 + 1);
	fs->super->s_checksum_type = EXT2_CRC32C_CHKSUM;
	ext2fs_init_csum_seed(fs);
	if (ext2fs_allocate_tables(fs)) {
		ext2fs_free(fs);
		return NULL;
	}
	/* the reserved inodes, as mke2fs marks them */
	for (i = 1; i < EXT2_FIRST_INO(fs->super); i++)
		if (i != EXT2_ROOT_INO)
			ext2fs_inode_alloc_stats2(fs, i, +1, 0);
	if (ext2fs_mkdir(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, NULL) ||
	    ext2fs_mkdir(fs, EXT2_ROOT_INO, 0, "lost+found")) {
		ext2fs_free(fs);
		return NULL;
	}
	return fs;
}

/* An inode with the model's tree written as the image will write it. */
static errcode_t e2_put_file(ext2_filsys fs, ext2_ino_t ino,
			     const struct ext_tree *t, uint64_t size,
			     int *tails_free)
{
	struct ext2_inode inode;
	struct e2_write w = { .fs = fs, .ino = ino };
	errcode_t err;

	w.buf = calloc(1, fs->blocksize);
	if (!w.buf)
		return ENOMEM;
	memset(&inode, 0, sizeof(inode));
	inode.i_mode = LINUX_S_IFREG | 0644;
	inode.i_links_count = 1;
	inode.i_flags = EXT4_EXTENTS_FL;
	ext_tree_encode_root(t, inode.i_block);
	inode.i_size = (uint32_t)size;
	inode.i_blocks = (uint32_t)(t->nblocks * (fs->blocksize / 512));
	err = ext2fs_write_new_inode(fs, ino, &inode);
	if (!err)
		err = ext_tree_visit(t, e2_write_block, &w);
	if (!err)
		err = ext2fs_link(fs, EXT2_ROOT_INO, "f", ino, EXT2_FT_REG_FILE);
	if (!err)
		ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
	*tails_free = w.tails_free;
	free(w.buf);
	return err;
}

/* Every leaf extent libext2fs reads equals the model's, in order. */
static int e2_same_extents(ext2_filsys fs, ext2_ino_t ino, struct ext_tree *t,
			   unsigned int *count)
{
	ext2_extent_handle_t h;
	struct ext2fs_extent e;
	struct ext3_extent ex;
	int op = EXT2_EXTENT_ROOT, same = 1;
	errcode_t err;

	*count = 0;
	if (ext2fs_extent_open2(fs, ino, NULL, &h))
		return 0;
	while (!(err = ext2fs_extent_get(h, op, &e))) {
		op = EXT2_EXTENT_NEXT;
		if (!(e.e_flags & EXT2_EXTENT_FLAGS_LEAF) ||
		    (e.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT))
			continue;
		same &= nth_extent(t, (*count)++, &ex) &&
			e.e_lblk == ee_block(&ex) && e.e_pblk == ee_pblock(&ex) &&
			e.e_len == ee_len(&ex);
	}
	ext2fs_extent_free(h);
	return same && err == EXT2_ET_EXTENT_NO_NEXT;
}

/* A sparse file of @n one-block extents in a metadata_csum image of
 * blocks of 1 << @bits bytes made here; libext2fs reads the tree back and
 * e2fsck finds nothing wrong. */
static void test_libext2fs(unsigned int bits, uint32_t n, int depth)
{
	char path[] = "/tmp/t-extents.XXXXXX";
	struct ext_alloc_ops o = {
		.data = e2_data, .meta = e2_meta, .release = e2_release,
	};
	struct ext_fs efs = { .colour = 3, .flex_size = 16 };
	struct ext_tree t;
	ext2_filsys fs;
	ext2_ino_t ino = 12;
	unsigned int count = 0;
	int fd = mkstemp(path), ok = 1, tails = 0, rc;
	uint32_t i;
	char cmd[128];

	/* sparse zeros: the inode tables read back empty */
	if (fd < 0 || ftruncate(fd, (off_t)16384 << bits) || close(fd) ||
	    !(fs = e2_image(path, bits))) {
		tap_ok(0, "a small ext4 image made with libext2fs");
		return;
	}
	o.ctx = fs;
	efs.first_data_block = fs->super->s_first_data_block;
	efs.blocks_count = ext2fs_blocks_count(fs->super);
	efs.blocks_per_group = EXT2_BLOCKS_PER_GROUP(fs->super);
	efs.block_size = fs->blocksize;
	ext_tree_init(&t, fs->blocksize, 0, 1);
	for (i = 0; i < n && ok; i++)
		ok = map1(&t, &efs, &o, 2 * i) != 0;
	tap_ok(ok && ext_tree_depth(&t) == depth,
	       "%u one-block extents in %u-byte blocks: depth %d", n,
	       fs->blocksize, depth);
	is_int(e2_put_file(fs, ino, &t, (uint64_t)(2 * n - 1) << bits, &tails), 0,
	       "the tree written with its checksums");
	is_int(tails, (int)t.n, "every tree block leaves its tail free");
	tap_ok(e2_same_extents(fs, ino, &t, &count),
	       "libext2fs reads the same extents, checksums verified");
	is_int(count, n, "all of them");
	for (i = 0; i < 2 * n; i++) {
		blk64_t pb = 0;
		uint64_t phys;
		uint32_t len;

		ok &= !ext2fs_bmap2(fs, ino, NULL, NULL, 0, i, NULL, &pb) &&
		      !ext_lookup(&t, i, &phys, &len) && pb == phys;
	}
	tap_ok(ok, "and maps every block as the model does");
	ext2fs_close_free(&fs);
	snprintf(cmd, sizeof(cmd),
		 "PATH=$PATH:/sbin:/usr/sbin e2fsck -fn %s >/dev/null 2>&1", path);
	rc = system(cmd);
	is_int(rc, 0, "e2fsck -fn: clean");
	if (!getenv("T_EXTENTS_KEEP"))
		unlink(path);
	ext_tree_release(&t);
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
	test_load(f);
	test_sizes();
	test_mballoc();
	test_libext2fs(10, 400, 2);
	test_libext2fs(12, 1000, 1);
	free(f->used);
	free(f);
	return tap_done();
}
