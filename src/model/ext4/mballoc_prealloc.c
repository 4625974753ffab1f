// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The preallocations of the ext4 allocator (fs/ext4/mballoc.c): an
 * inode's (a logical range of one file) and the locality group's (the
 * writer's, used front to back), their use, their release into the buddy
 * and their discard on close and on ENOSPC.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "model/ext4/mballoc_int.h"

/* ---- lists of preallocations --------------------------------------- */

static errcode_t pa_list_insert(struct mb_pa_list *l, unsigned int at,
				struct mb_pa *pa)
{
	if (l->n == l->cap) {
		unsigned int cap = l->cap ? 2 * l->cap : 8;
		struct mb_pa **n = realloc(l->pa, cap * sizeof(*n));

		if (!n)
			return ENOMEM;
		l->pa = n;
		l->cap = cap;
	}
	memmove(l->pa + at + 1, l->pa + at, (l->n - at) * sizeof(*l->pa));
	l->pa[at] = pa;
	l->n++;
	return 0;
}

static int pa_list_remove(struct mb_pa_list *l, const struct mb_pa *pa)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (l->pa[i] == pa) {
			memmove(l->pa + i, l->pa + i + 1,
				(l->n - i - 1) * sizeof(*l->pa));
			l->n--;
			return 1;
		}
	return 0;
}

/* ---- preallocations ------------------------------------------------ */

static errcode_t ext4_mb_use_inode_pa(struct alloc_ctx *ac, struct mb_pa *pa)
{
	fsblk_t start = pa->pstart + (ac->o.logical - pa->lstart);
	fsblk_t end = pa->pstart + pa->len;

	if (start + ac->o.len < end)
		end = start + ac->o.len;
	block_to_ex(ac->fs, start, &ac->b);
	ac->b.len = (uint32_t)(end - start);
	ac->status = AC_FOUND;
	ac->pa = pa;
	pa->free -= ac->b.len;
	return 0;
}

static void ext4_mb_use_group_pa(struct alloc_ctx *ac, struct mb_pa *pa)
{
	block_to_ex(ac->fs, pa->pstart, &ac->b);
	ac->b.len = ac->o.len;
	ac->status = AC_FOUND;
	ac->pa = pa;
}

static void ext4_mb_new_group_pa(struct alloc_ctx *ac, struct mb_pa *pa)
{
	ac->f = ac->b;
	pa->pstart = ex_block(ac->fs, &ac->b);
	pa->lstart = (uint32_t)pa->pstart;
	pa->len = pa->free = ac->b.len;
	pa->group_pa = 1;
	/* on the locality group's list at ext4_mb_release_context */
	ext4_mb_use_group_pa(ac, pa);
}

/* A shorter find than asked keeps the asked end, else the asked start,
 * else starts at the request. */
static errcode_t ext4_mb_new_inode_pa(struct alloc_ctx *ac, struct mb_pa *pa)
{
	errcode_t err;

	if (ac->b.len < ac->orig_goal_len) {
		uint32_t goal_end = ac->g.logical + ac->orig_goal_len;
		uint32_t l = goal_end - ac->b.len;

		if (ac->o.logical < l) {
			l = ac->g.logical;
			if (ac->o.logical + ac->o.len > l + ac->b.len)
				l = ac->o.logical;
		}
		ac->b.logical = l;
	}
	/* 6.1 records the moved logical start, 6.4 on the found one */
	if (ac->fs->kver < KVER_MB_F_EX)
		ac->f = ac->b;
	pa->lstart = ac->b.logical;
	pa->pstart = ex_block(ac->fs, &ac->b);
	pa->len = pa->free = ac->b.len;
	pa->owner = ac->mi;
	err = pa_list_insert(&ac->mi->pas, 0, pa);
	if (err)
		return err;	/* freed with the state */
	return ext4_mb_use_inode_pa(ac, pa);
}

errcode_t ext4_mb_new_preallocation(struct alloc_ctx *ac)
{
	struct mb_pa *pa = calloc(1, sizeof(*pa));
	errcode_t err;

	if (!pa)
		return ENOMEM;
	err = pa_list_insert(&ac->mb->all, ac->mb->all.n, pa);
	if (err) {
		free(pa);
		return err;
	}
	if (ac->flags & HINT_GROUP_ALLOC) {
		ext4_mb_new_group_pa(ac, pa);
		return 0;
	}
	return ext4_mb_new_inode_pa(ac, pa);
}

/* ext4_mb_release_inode_pa: what the file did not use goes back, one
 * mb_free_blocks per free run of the on-disk bitmap. */
static uint32_t ext4_mb_release_inode_pa(struct fs_state *fs, struct mb_pa *pa)
{
	struct free_ex ex;
	uint32_t i, end, freed = 0;
	const uint8_t *disk;

	block_to_ex(fs, pa->pstart, &ex);
	disk = group_bbitmap(fs, ex.group);
	end = ex.start + pa->len;
	for (i = ex.start; i < end;) {
		uint32_t next;

		i = find_next_zero_bit(disk, end, i);
		if (i >= end)
			break;
		next = find_next_set_bit(disk, end, i);
		mb_free_blocks(fs, ex.group, i, next - i);
		freed += next - i;
		i = next + 1;
	}
	return freed;
}

static void ext4_mb_release_group_pa(struct fs_state *fs, struct mb_pa *pa)
{
	struct free_ex ex;

	block_to_ex(fs, pa->pstart, &ex);
	mb_free_blocks(fs, ex.group, ex.start, pa->len);
}

static int lg_order(uint32_t n)
{
	int o = fls32(n) - 1;

	return o > MB_PREALLOC_TB_SIZE - 1 ? MB_PREALLOC_TB_SIZE - 1 : o;
}

static int lg_remove(struct mb_state *mb, const struct mb_pa *pa)
{
	int i;

	for (i = 0; i < MB_PREALLOC_TB_SIZE; i++)
		if (pa_list_remove(&mb->lg[i], pa))
			return 1;
	return 0;
}

/* ext4_mb_put_pa's end, or a discard: the preallocation is gone. */
static void pa_forget(struct mb_state *mb, struct mb_pa *pa)
{
	pa_list_remove(&mb->all, pa);
	if (pa->owner)
		pa_list_remove(&pa->owner->pas, pa);
	else
		lg_remove(mb, pa);
	free(pa);
}

/* ext4_mb_discard_lg_preallocations: the oldest of a crowded order go,
 * except the one in use. */
static void ext4_mb_discard_lg_preallocations(struct fs_state *fs, int order,
					      unsigned int total,
					      const struct mb_pa *busy)
{
	struct mb_pa_list *l = &fs->mb->lg[order];
	unsigned int i = 0;

	while (i < l->n) {
		struct mb_pa *pa = l->pa[i];

		if (pa == busy) {
			i++;
			continue;
		}
		ext4_mb_release_group_pa(fs, pa);
		pa_forget(fs->mb, pa);
		if (--total <= 5)
			break;
	}
}

/* ext4_mb_add_n_trim: sorted by free space within the order's list. */
static errcode_t ext4_mb_add_n_trim(struct fs_state *fs, struct mb_pa *pa)
{
	int order = lg_order(pa->free);
	struct mb_pa_list *l = &fs->mb->lg[order];
	unsigned int i, at = l->n, count = 1;
	errcode_t err;

	for (i = 0; i < l->n; i++) {
		if (at == l->n && pa->free < l->pa[i]->free)
			at = i;
		count++;
	}
	err = pa_list_insert(l, at, pa);
	if (err)
		return err;
	if (count > 8)
		ext4_mb_discard_lg_preallocations(fs, order, count, pa);
	return 0;
}

/* ext4_mb_use_preallocated: the file's preallocation holding the block,
 * else the locality group's nearest the goal. */
int ext4_mb_use_preallocated(struct alloc_ctx *ac)
{
	struct mb_state *mb = ac->mb;
	struct mb_pa *cpa = NULL;
	fsblk_t goal;
	unsigned int i, k;

	if (!(ac->flags & HINT_DATA))
		return 0;
	for (i = 0; i < ac->mi->pas.n; i++) {
		struct mb_pa *pa = ac->mi->pas.pa[i];

		if (ac->o.logical < pa->lstart ||
		    ac->o.logical >= pa->lstart + pa->len)
			continue;
		/* an indirect-mapped file holds no block past 2^32 */
		if (ac->ar->indirect && pa->pstart + pa->len > 0xffffffffu)
			continue;
		if (pa->free) {
			ext4_mb_use_inode_pa(ac, pa);
			return 1;
		}
	}
	if (!(ac->flags & HINT_GROUP_ALLOC))
		return 0;
	/* the group preallocation nearest the goal, first of equals */
	goal = ex_block(ac->fs, &ac->g);
	for (i = (unsigned int)lg_order(ac->o.len); i < MB_PREALLOC_TB_SIZE; i++)
		for (k = 0; k < mb->lg[i].n; k++) {
			struct mb_pa *pa = mb->lg[i].pa[k];

			if (pa->free < ac->o.len)
				continue;
			if (!cpa ||
			    labs((long)goal - (long)pa->pstart) <
			    labs((long)goal - (long)cpa->pstart))
				cpa = pa;
		}
	if (!cpa)
		return 0;
	ext4_mb_use_group_pa(ac, cpa);
	return 1;
}

/* Every preallocation in @group, of any file or the locality group,
 * oldest first; what they had free. */
static uint32_t ext4_mb_discard_group_preallocations(struct fs_state *fs,
						     uint32_t group)
{
	struct mb_state *mb = fs->mb;
	uint32_t freed = 0;
	unsigned int k;
	struct free_ex ex;

	for (k = 0; k < mb->all.n;) {
		struct mb_pa *pa = mb->all.pa[k];

		block_to_ex(fs, pa->pstart, &ex);
		if (ex.group != group) {
			k++;
			continue;
		}
		freed += pa->free;
		if (pa->group_pa)
			ext4_mb_release_group_pa(fs, pa);
		else
			ext4_mb_release_inode_pa(fs, pa);
		pa_forget(mb, pa);
	}
	return freed;
}

/* On ENOSPC: group by group from the first, until something is freed. */
uint32_t ext4_mb_discard_preallocations(struct fs_state *fs, uint32_t needed,
					uint64_t *seq)
{
	uint32_t group, freed = 0;

	for (group = 0; group < fs->g.ngroups && freed < needed; group++) {
		uint32_t f = ext4_mb_discard_group_preallocations(fs, group);

		if (f)
			(*seq)++;
		freed += f;
	}
	return freed;
}

/* 6.1's s_mb_max_inode_prealloc; from KVER_PA_RBTREE on none is trimmed */
#define MB_MAX_INODE_PREALLOC 512

/* ext4_mb_trim_inode_pa: a file with more than 512 + 129 preallocations
 * (a sparse file of that many separate ranges, written in one open)
 * loses its least recently used ones down to 512.  ext4_discard_
 * preallocations collects them from the list's tail and releases them in
 * the reverse order, the most recently used of them first. */
static void ext4_mb_trim_inode_pa(struct fs_state *fs, struct mb_inode *mi)
{
	unsigned int max = MB_MAX_INODE_PREALLOC, i;

	if (fs->kver >= KVER_PA_RBTREE || mi->pas.n <= max + (max >> 2) + 1)
		return;
	for (i = max; i < mi->pas.n; i++)
		ext4_mb_release_inode_pa(fs, mi->pas.pa[i]);
	while (mi->pas.n > max)
		pa_forget(fs->mb, mi->pas.pa[mi->pas.n - 1]);
}

errcode_t ext4_mb_release_context(struct alloc_ctx *ac)
{
	struct mb_pa *pa = ac->pa;
	errcode_t err;

	if (!pa)
		return 0;
	if (pa->group_pa) {
		pa->pstart += ac->b.len;
		pa->lstart += ac->b.len;
		pa->free -= ac->b.len;
		pa->len -= ac->b.len;
		if (!pa->free) {
			pa_forget(ac->mb, pa);
			return 0;
		}
		lg_remove(ac->mb, pa);
		return ext4_mb_add_n_trim(ac->fs, pa);
	}
	if (!pa->free) {
		pa_forget(ac->mb, pa);
		return 0;
	}
	pa_list_remove(&ac->mi->pas, pa);
	err = pa_list_insert(&ac->mi->pas, 0, pa);
	/* only a new inode preallocation adds one to the file's count */
	if (!err)
		ext4_mb_trim_inode_pa(ac->fs, ac->mi);
	return err;
}

void ext4_discard_preallocations(struct fs_state *fs, struct mb_inode *mi)
{
	while (mi->pas.n) {
		ext4_mb_release_inode_pa(fs, mi->pas.pa[0]);
		pa_forget(fs->mb, mi->pas.pa[0]);
	}
}

void mb_inode_moved(struct mb_inode *mi)
{
	unsigned int i;

	for (i = 0; i < mi->pas.n; i++)
		mi->pas.pa[i]->owner = mi;
}

void mb_inode_release(struct mb_inode *mi)
{
	unsigned int i;

	/* what is left stays the filesystem's until a discard (or the
	 * end: mb_state_free frees every preallocation) */
	for (i = 0; i < mi->pas.n; i++)
		mi->pas.pa[i]->owner = NULL;
	free(mi->pas.pa);
	memset(mi, 0, sizeof(*mi));
}
