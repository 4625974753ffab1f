// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ext4_mb_new_blocks() as the ext4 driver of Linux 6.1 runs it for an
 * indirect-mapped or extent-mapped inode: a block at a time without
 * delayed allocation, a run at writeback with it (mballoc.h).  Names
 * follow fs/ext4/mballoc.c so that the two can be read side by side.
 * This file is the allocator: the request, its normalization and the
 * goal; the group scans by criteria are in mballoc_scan.c, the buddy in
 * mballoc_buddy.c, the preallocations in mballoc_prealloc.c.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "model/ext4/mballoc_int.h"
#include "lib/orlov_err.h"

/* ---- the request --------------------------------------------------- */

static void ext4_mb_group_or_file(struct alloc_ctx *ac)
{
	uint32_t bs = ac->fs->g.block_size;
	uint64_t size, isize;
	int inode_pa;

	if (!(ac->flags & HINT_DATA))
		return;
	size = (uint64_t)ac->o.logical + ac->o.len;
	isize = (ac->mi->i_size + bs - 1) / bs;
	/* no inode preallocation for a closed file's last blocks */
	inode_pa = !(size == isize && ac->mi->closed);
	if (isize > size)
		size = isize;
	if (size > ac->mb->stream_request || !ac->mb->group_prealloc) {
		ac->flags |= inode_pa ? STREAM_ALLOC : HINT_NOPREALLOC;
		return;
	}
	ac->flags |= HINT_GROUP_ALLOC;
}

#define KiB(n) ((uint64_t)(n) << 10)
#define MiB(n) ((uint64_t)(n) << 20)
#define NRL_CHECK_SIZE(req, size, max, chunk) ((req) <= (size) || (max) <= (chunk))
#define MB_EXT_MAX_BLOCKS 0xffffffffu	/* ext4's EXT_MAX_BLOCKS */

/* The first part of ext4_mb_normalize_request: the file's size
 * predicted from its table, in blocks, and where that range starts. */
static uint64_t mb_predict_size(const struct alloc_ctx *ac,
				unsigned int bsbits, uint64_t *start)
{
	uint64_t size, start_off = 0, max = 2u << bsbits;
	uint32_t logical = ac->o.logical;

	size = ((uint64_t)logical + ac->o.len) << bsbits;
	if (size < ac->mi->i_size)
		size = ac->mi->i_size;
	if (size <= MiB(1)) {
		/* the next power of two from 16 KiB up */
		uint64_t p = KiB(16);

		while (p < size)
			p <<= 1;
		size = p;
	} else if (NRL_CHECK_SIZE(size, MiB(4), max, 2048)) {
		start_off = ((uint64_t)logical >> (21 - bsbits)) << 21;
		size = MiB(2);
	} else if (NRL_CHECK_SIZE(size, MiB(8), max, 4096)) {
		start_off = ((uint64_t)logical >> (22 - bsbits)) << 22;
		size = MiB(4);
	} else if (NRL_CHECK_SIZE((uint64_t)ac->o.len, MiB(8) >> bsbits, max,
				  8192)) {
		start_off = ((uint64_t)logical >> (23 - bsbits)) << 23;
		size = MiB(8);
	} else {
		start_off = (uint64_t)logical << bsbits;
		size = (uint64_t)ac->o.len << bsbits;
	}
	*start = start_off >> bsbits;
	return size >> bsbits;
}

/* The goal moved next to a neighbour (ext4_get_group_no_and_offset),
 * with EXT4_MB_HINT_TRY_GOAL.  A block past the end is what the kernel's
 * ext4_mb_find_by_goal reports as corruption (no such group). */
static errcode_t mb_goal_at(struct alloc_ctx *ac, uint64_t block)
{
	if (block >= ac->fs->g.blocks_count)
		return ORLOV_ERR_CORRUPT;
	block_to_ex(ac->fs, block, &ac->g);
	ac->flags |= HINT_TRY_GOAL;
	return 0;
}

static void ext4_mb_normalize_group_request(struct alloc_ctx *ac)
{
	ac->g.len = ac->mb->group_prealloc;
}

/* ext4_mb_normalize_request of Linux 6.1 (not the later fixes of its
 * neighbour trims): the predicted range, cut at the mapped blocks either
 * side (an extent-mapped file's neighbours), at a group's length and at
 * the file's other preallocations; then, when the range ends against a
 * neighbour, the goal is next to it, the left one winning. */
static errcode_t ext4_mb_normalize_request(struct alloc_ctx *ac)
{
	const struct fs_state *fs = ac->fs;
	const struct mb_request *ar = ac->ar;
	unsigned int bsbits = (unsigned int)__builtin_ctz(fs->g.block_size);
	uint64_t size, start, end;
	uint32_t logical = ac->o.logical;
	unsigned int i;
	errcode_t err = 0;

	if (!(ac->flags & HINT_DATA) || (ac->flags & HINT_NOPREALLOC))
		return 0;
	if (ac->flags & HINT_GROUP_ALLOC) {
		ext4_mb_normalize_group_request(ac);
		return 0;
	}
	/* neighbours that do not surround the request: the kernel BUGs */
	if ((ar->pleft && ar->lleft >= logical) ||
	    (ar->pright && ar->lright <= logical))
		return ORLOV_ERR_CORRUPT;
	size = mb_predict_size(ac, bsbits, &start);
	if (start < logical - logical % fs->g.blocks_per_group)
		start = logical - logical % fs->g.blocks_per_group;
	if (start + size > MB_EXT_MAX_BLOCKS)
		size = MB_EXT_MAX_BLOCKS - start;
	if (ar->pleft && start <= ar->lleft) {
		size -= (uint64_t)ar->lleft + 1 - start;
		start = (uint64_t)ar->lleft + 1;
	}
	if (ar->pright && start + size - 1 >= ar->lright)
		size -= start + size - ar->lright;
	if (size > fs->g.blocks_per_group)
		size = fs->g.blocks_per_group;
	end = start + size;
	/* not over the file's other preallocations */
	for (i = 0; i < ac->mi->pas.n; i++) {
		const struct mb_pa *pa = ac->mi->pas.pa[i];
		uint64_t pa_end = (uint64_t)pa->lstart + pa->len;

		if (pa->lstart >= end || pa_end <= start)
			continue;
		if (pa_end <= logical)
			start = pa_end;
		else if (pa->lstart > logical)
			end = pa->lstart;
	}
	size = end - start;
	ac->g.logical = (uint32_t)start;
	ac->g.len = ac->orig_goal_len = (uint32_t)size;
	if (ar->pright && ar->lright == end && ar->pright >= size &&
	    ar->pright - size >= fs->g.first_data_block)
		err = mb_goal_at(ac, ar->pright - size);
	if (!err && ar->pleft && ar->lleft + 1 == start &&
	    ar->pleft + 1 < fs->g.blocks_count)
		err = mb_goal_at(ac, ar->pleft + 1);
	return err;
}

static void ext4_mb_mark_diskspace_used(struct alloc_ctx *ac)
{
	struct fs_state *fs = ac->fs;

	set_range(group_bbitmap(fs, ac->b.group), ac->b.start, ac->b.len);
	fs->free_blocks[ac->b.group] -= ac->b.len;
	percpu_counter_add(&fs->freeb, -(int64_t)ac->b.len);
	fs_flex_add(fs, ac->b.group, 0, -(int64_t)ac->b.len, 0);
}

/* ---- --trace: ext4's own tracepoints (doc/trace-format.md) ---------- */

/* show_mballoc_flags: the names, then what is left in hex, as the
 * kernel's __print_flags writes them. */
static void show_mballoc_flags(FILE *f, unsigned int flags)
{
	static const struct { unsigned int bit; const char *name; } names[] = {
		{ HINT_MERGE, "HINT_MERGE" }, { 0x2, "HINT_RESV" },
		{ 0x4, "HINT_MDATA" }, { HINT_FIRST, "HINT_FIRST" },
		{ 0x10, "HINT_BEST" }, { HINT_DATA, "HINT_DATA" },
		{ HINT_NOPREALLOC, "HINT_NOPREALLOC" },
		{ HINT_GROUP_ALLOC, "HINT_GRP_ALLOC" },
		{ 0x100, "HINT_GOAL_ONLY" }, { HINT_TRY_GOAL, "HINT_TRY_GOAL" },
		{ DELALLOC_RESV, "DELALLOC_RESV" },
		{ STREAM_ALLOC, "STREAM_ALLOC" }, { USE_ROOT_BLKS, "USE_ROOT_BLKS" },
		{ USE_RESV, "USE_RESV" }, { 0x4000, "STRICT_CHECK" },
	};
	const char *sep = "";
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].bit) {
			fprintf(f, "%s%s", sep, names[i].name);
			flags &= ~names[i].bit;
			sep = "|";
		}
	if (flags)
		fprintf(f, "%s0x%x", sep, flags);
}

static void trace_ex(FILE *f, const char *what, const struct free_ex *ex,
		     uint32_t logical)
{
	fprintf(f, " %s %u/%u/%u@%u", what, ex->group, ex->start, ex->len,
		logical);
}

/* ext4_mb_collect_stats's record: ext4_mballoc_prealloc when a
 * preallocation served the request, else ext4_mballoc_alloc.  A
 * preallocation leaves ac_b_ex's logical block at the request's. */
static void trace_mballoc(const struct alloc_ctx *ac, int prealloc)
{
	/* 6.12's show_criteria */
	static const char *const cr_names[] = {
		"CR_POWER2_ALIGNED", "CR_GOAL_LEN_FAST", "CR_BEST_AVAIL_LEN",
		"CR_GOAL_LEN_SLOW", "CR_ANY_FREE",
	};
	FILE *f = ac->fs->trace;

	fprintf(f, "ext4_mballoc_%s: inode %u", prealloc ? "prealloc" : "alloc",
		ac->ar->ino);
	trace_ex(f, "orig", &ac->o, ac->o.logical);
	if (prealloc) {
		trace_ex(f, "result", &ac->b, ac->o.logical);
		putc('\n', f);
		return;
	}
	trace_ex(f, "goal", &ac->g, ac->g.logical);
	trace_ex(f, "result", &ac->f, ac->f.logical);
	fprintf(f, " blks %u grps %u cr ", ac->found, ac->groups);
	/* past CR_ANY_FREE when its full scan failed and ext4_mb_try_best_found
	 * took the best extent: __print_symbolic prints the number */
	if (ac->fs->kver >= KVER_MB_65 && ac->cr < 5)
		fputs(cr_names[ac->cr], f);
	else if (ac->fs->kver >= KVER_MB_65)
		fprintf(f, "0x%x", ac->cr);
	else
		fprintf(f, "%u", ac->cr);
	fputs(" flags ", f);
	/* the tracepoint keeps ac_flags in a __u16: CR1_OPTIMIZED is cut */
	show_mballoc_flags(f, ac->flags & 0xffff);
	fprintf(f, " tail %u broken %u\n", ac->tail,
		ac->buddy ? 1u << ac->buddy : 0);
}

/* The caller's ar->flags: data of a regular file, at writeback with
 * delayed allocation its reservation (ext4_ext_map_blocks,
 * ext4_ind_map_blocks), TRY_GOAL for a new tree root; a quota file's
 * block may take the root's reserve (ext4_mb_new_blocks) and the
 * reserved clusters (ext4_quota_write's METADATA_NOFAIL). */
static unsigned int ar_flags(const struct fs_state *fs,
			     const struct mb_request *ar)
{
	unsigned int flags = ar->try_goal ? HINT_TRY_GOAL : 0;

	if (ar->mi)
		flags |= HINT_DATA |
			 (fs->mb->writeback ? DELALLOC_RESV | USE_RESV : 0);
	if (ar->quota_file)
		flags |= USE_ROOT_BLKS;
	if (ar->quota_file && ar->mi)
		flags = (flags & ~DELALLOC_RESV) | USE_RESV;
	return flags;
}

static void trace_ext4_allocate_blocks(const struct fs_state *fs,
				       const struct mb_request *ar,
				       uint64_t block, uint32_t got)
{
	fprintf(fs->trace, "ext4_allocate_blocks: ino %u flags ", ar->ino);
	show_mballoc_flags(fs->trace, ar_flags(fs, ar));
	fprintf(fs->trace,
		" len %u block %llu lblk %u goal %llu lleft %u lright %u pleft %llu pright %llu\n",
		got, (unsigned long long)block, ar->logical,
		(unsigned long long)ar->goal, ar->lleft, ar->lright,
		(unsigned long long)ar->pleft, (unsigned long long)ar->pright);
}

/* @len: the request's, capped to a group. */
static void ext4_mb_initialize_context(struct alloc_ctx *ac,
				       struct fs_state *fs,
				       const struct mb_request *ar,
				       uint32_t len)
{
	uint64_t goal = ar->goal;

	memset(ac, 0, sizeof(*ac));
	ac->fs = fs;
	ac->mb = fs->mb;
	ac->mi = ar->mi;
	ac->ar = ar;
	if (goal < fs->g.first_data_block || goal >= fs->g.blocks_count)
		goal = fs->g.first_data_block;
	block_to_ex(fs, goal, &ac->o);
	ac->o.logical = ar->logical;
	ac->o.len = len;
	ac->g = ac->o;
	ac->orig_goal_len = len;
	ac->flags = ar_flags(fs, ar);
	ac->status = AC_CONTINUE;
	ext4_mb_group_or_file(ac);
}

errcode_t ext4_mb_new_blocks_ar(struct fs_state *fs,
				const struct mb_request *ar, uint64_t *block,
				uint32_t *got)
{
	struct alloc_ctx ac;
	int retries = 0, strict = 0;
	uint64_t seq;
	uint32_t len = ar->len, claim;
	int prealloc;
	errcode_t err;

	if (!len)
		return EINVAL;
	/* ext4_claim_free_clusters: root may use every free cluster */
	if (percpu_counter_sum(&fs->freeb) < 1)
		return ORLOV_ERR_NO_BLOCKS;
	/* A request that was not delayed counts its clusters as dirty
	 * until it is done.  Nothing reads the counter in between, but on
	 * an SMP kernel the add and the sub each may fold the writer's
	 * share into what ext4_nonda_switch reads next. */
	claim = fs->mb->delalloc && !fs->mb->writeback ? len : 0;
	percpu_counter_add(&fs->mb->dirty, claim);
	if (len > fs->g.blocks_per_group)
		len = fs->g.blocks_per_group;

	ext4_mb_initialize_context(&ac, fs, ar, len);

	prealloc = ext4_mb_use_preallocated(&ac);
	if (!prealloc) {
		err = ext4_mb_normalize_request(&ac);
		if (err)
			return err;
		for (;;) {
			seq = ac.seq;
			err = ext4_mb_regular_allocator(&ac);
			if (err)
				return err;
			if (ac.status == AC_FOUND || ++retries >= 3)
				break;
			/* ext4_mb_discard_preallocations_should_retry */
			if (ext4_mb_discard_preallocations(fs, ac.o.len,
							   &ac.seq))
				continue;
			if (strict && ac.seq == seq)
				break;
			strict = 1;
		}
		if (ac.status != AC_FOUND)
			return ORLOV_ERR_NO_BLOCKS;
	}
	ext4_mb_mark_diskspace_used(&ac);
	*block = ex_block(fs, &ac.b);
	*got = ac.b.len;
	err = ext4_mb_release_context(&ac);
	percpu_counter_add(&fs->mb->dirty, -(int64_t)claim);
	if (!err && fs->trace) {
		trace_mballoc(&ac, prealloc);
		trace_ext4_allocate_blocks(fs, ar, *block, *got);
	}
	return err;
}

errcode_t ext4_mb_new_blocks(struct fs_state *fs, struct mb_inode *mi,
			     uint32_t ino,
			     uint32_t logical, uint32_t goal, uint32_t len,
			     uint32_t *block, uint32_t *got)
{
	struct mb_request ar = {
		.mi = mi, .logical = logical, .len = len, .goal = goal,
		.ino = ino, .indirect = 1,
		.quota_file = mi && mi->quota_file,
	};
	uint64_t b;
	errcode_t err = ext4_mb_new_blocks_ar(fs, &ar, &b, got);

	/* The group scan keeps such an inode below 2^32, but 6.1's
	 * optimize_scan lists do not: the kernel would cut the number
	 * (and corrupt the image) where the tool stops. */
	if (!err && b + *got - 1 > UINT32_MAX)
		err = ORLOV_ERR_INDIRECT_HIGH;
	if (!err)
		*block = (uint32_t)b;
	return err;
}

errcode_t ext4_mb_new_block(struct fs_state *fs, struct mb_inode *mi,
			    uint32_t ino,
			    uint32_t logical, uint32_t goal, uint32_t *block)
{
	uint32_t got;

	return ext4_mb_new_blocks(fs, mi, ino, logical, goal, 1, block, &got);
}

void ext4_free_blocks(struct fs_state *fs, uint32_t ino, fsblk_t block,
		      uint32_t count)
{
	struct free_ex ex;
	uint32_t i;

	/* the callers free single blocks, in use and in one group */
	block_to_ex(fs, block, &ex);
	/* the inode's mode and the caller's flags are not known here
	 * (doc/trace-format.md) */
	if (fs->trace)
		fprintf(fs->trace,
			"ext4_free_blocks: ino %u mode 00 block %llu count %u flags \n",
			ino, (unsigned long long)block, count);
	for (i = 0; i < count; i++)
		bit_clear(group_bbitmap(fs, ex.group), ex.start + i);
	if (!fs->mb->journal)
		mb_free_blocks(fs, ex.group, ex.start, count);
	fs->free_blocks[ex.group] += count;
	/* one counter update per call, as ext4_free_blocks makes */
	percpu_counter_add(&fs->freeb, count);
	fs_flex_add(fs, ex.group, 0, count, 0);
}

void ext4_free_block_at_io_end(struct fs_state *fs, uint32_t ino,
			       fsblk_t block)
{
	struct mb_state *mb = fs->mb;

	if (mb->nendio == mb->endio_cap) {
		size_t cap = mb->endio_cap ? mb->endio_cap * 2 : 8;
		void *p = realloc(mb->endio, cap * sizeof(*mb->endio));

		if (!p) {
			ext4_free_blocks(fs, ino, block, 1);
			return;
		}
		mb->endio = p;
		mb->endio_cap = cap;
	}
	mb->endio[mb->nendio].ino = ino;
	mb->endio[mb->nendio++].block = block;
}

void ext4_end_io_frees(struct fs_state *fs)
{
	struct mb_state *mb = fs->mb;
	size_t i;

	for (i = 0; i < mb->nendio; i++)
		ext4_free_blocks(fs, mb->endio[i].ino, mb->endio[i].block, 1);
	mb->nendio = 0;
}

errcode_t mb_state_init_opt(struct fs_state *fs, int rotational,
			    int optimize_scan)
{
	struct mb_state *mb = calloc(1, sizeof(*mb));
	uint32_t g, n = fs->g.ngroups;
	int i;

	if (!mb)
		return ENOMEM;
	fs->mb = mb;
	/* zero pages until written: only groups with a block in use are
	 * copied (an empty group's bitmap is all zero, load checked it) */
	mb->map = calloc(n, fs->bytes_per_group);
	mb->grp = calloc(n, sizeof(*mb->grp));
	if (!mb->map || !mb->grp)
		goto nomem;
	for (i = 0; i < 16; i++)
		mb->lfo[i].head = mb->lfo[i].tail =
			mb->avg[i].head = mb->avg[i].tail = MB_GNONE;
	for (g = 0; g < n; g++)
		if (!group_all_free(fs, g))
			memcpy(gmap(fs, g), group_bbitmap(fs, g),
			       fs->bytes_per_group);
	mb->cpg = fs->g.blocks_per_group;
	mb->max_order = (unsigned int)__builtin_ctz(fs->g.block_size) + 1;
	mb->group_prealloc = 512;
	mb->stream_request = 16;
	mb->optimize_scan = optimize_scan == MB_OPTIMIZE_SCAN_DEFAULT ?
			    n >= 16 : optimize_scan == MB_OPTIMIZE_SCAN_ON;
	mb->dirty.batch = fs->freeb.batch;
	mb->max_linear_groups = rotational ? 4 : 0;
	for (g = 0; g < n; g++)
		ext4_mb_init_group(fs, g, group_all_free(fs, g));
	/* ext4_mb_init is the ext4 driver's mount: its allocators from now */
	fs->driver = ALLOC_EXT4;
	return 0;
nomem:
	mb_state_free(fs);
	return ENOMEM;
}

errcode_t mb_state_init(struct fs_state *fs, int rotational)
{
	return mb_state_init_opt(fs, rotational, MB_OPTIMIZE_SCAN_DEFAULT);
}

void mb_state_free(struct fs_state *fs)
{
	struct mb_state *mb = fs->mb;
	unsigned int k;
	int i;

	if (!mb)
		return;
	for (k = 0; k < mb->all.n; k++)
		free(mb->all.pa[k]);
	free(mb->all.pa);
	for (i = 0; i < MB_PREALLOC_TB_SIZE; i++)
		free(mb->lg[i].pa);
	free(mb->map);
	free(mb->grp);
	free(mb->endio);
	free(mb);
	fs->mb = NULL;
}
