// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "model/fsstate.h"

errcode_t fs_state_init(struct fs_state *fs, const struct fs_geom *g)
{
	uint32_t n = g->ngroups;

	memset(fs, 0, sizeof(*fs));
	fs->g = *g;
	fs->kver = KVER_REF_6_1;	/* until the options say otherwise */
	/* ext4_fill_flex_info ignores what it cannot shift by */
	if (fs->g.log_groups_per_flex > 31)
		fs->g.log_groups_per_flex = 0;
	if (fs->g.log_groups_per_flex && n)
		fs->flex = calloc(fs_flex_group(fs, n - 1) + 1,
				  sizeof(*fs->flex));
	/* Round up to 8 bytes so that word-wise scans never run off the end. */
	fs->bytes_per_group = ((g->blocks_per_group + 63) / 64) * 8;
	fs->ibytes_per_group = ((g->inodes_per_group + 63) / 64) * 8;
	fs->free_inodes = calloc(n, sizeof(uint32_t));
	fs->free_blocks = calloc(n, sizeof(uint32_t));
	fs->used_dirs = calloc(n, sizeof(uint32_t));
	fs->debts = calloc(n, 1);
	fs->bbitmap = calloc(n, fs->bytes_per_group);
	fs->ibitmap = calloc(n, fs->ibytes_per_group);
	fs->rsv.cap = 8;
	fs->rsv.win = calloc(fs->rsv.cap, sizeof(*fs->rsv.win));
	if (!fs->free_inodes || !fs->free_blocks || !fs->used_dirs ||
	    !fs->debts || !fs->bbitmap || !fs->ibitmap || !fs->rsv.win ||
	    (fs->g.log_groups_per_flex && n && !fs->flex)) {
		fs_state_free(fs);
		return ENOMEM;
	}
	/* ext2_fill_super inserts a dummy window [0,0] as the tree's head. */
	fs->rsv.win[0] = &fs->rsv.head;
	fs->rsv.n = 1;
	return 0;
}

void fs_state_free(struct fs_state *fs)
{
	free(fs->free_inodes);
	free(fs->free_blocks);
	free(fs->used_dirs);
	free(fs->debts);
	free(fs->flex);
	free(fs->bbitmap);
	free(fs->ibitmap);
	free(fs->rsv.win);
	free(fs->ext4);
	memset(fs, 0, sizeof(*fs));
}

void fs_state_sum(struct fs_state *fs)
{
	uint32_t i;

	fs->freei.count = fs->freeb.count = fs->dirs.count = 0;
	fs->freei.pcpu = fs->freeb.pcpu = fs->dirs.pcpu = 0;
	for (i = 0; i < fs->g.ngroups; i++) {
		fs->freei.count += fs->free_inodes[i];
		fs->freeb.count += fs->free_blocks[i];
		fs->dirs.count += fs->used_dirs[i];
	}
	if (!fs->flex)
		return;
	memset(fs->flex, 0,
	       (fs_flex_group(fs, fs->g.ngroups - 1) + 1) * sizeof(*fs->flex));
	for (i = 0; i < fs->g.ngroups; i++)
		fs_flex_add(fs, i, (int32_t)fs->free_inodes[i],
			    fs->free_blocks[i], (int32_t)fs->used_dirs[i]);
}

int32_t percpu_batch_for(unsigned int cpus)
{
	/* compute_batch_value(): max(32, nr * 2) over the online CPUs. */
	if (cpus == CPUS_UP)
		return 0;
	return cpus > 16 ? (int32_t)(2 * cpus) : 32;
}

void fs_state_set_cpus(struct fs_state *fs, unsigned int cpus)
{
	int32_t b = percpu_batch_for(cpus);

	fs->freei.batch = fs->freeb.batch = fs->dirs.batch = b;
}

fsblk_t group_first_block(const struct fs_state *fs, uint32_t group)
{
	return fs->g.first_data_block + (fsblk_t)group * fs->g.blocks_per_group;
}

fsblk_t group_last_block(const struct fs_state *fs, uint32_t group)
{
	if (group == fs->g.ngroups - 1)
		return fs->g.blocks_count - 1;
	return group_first_block(fs, group) + fs->g.blocks_per_group - 1;
}

uint32_t count_zero_bits(const uint8_t *map, uint32_t size)
{
	uint32_t i, used = 0;

	for (i = 0; i + 64 <= size; i += 64) {
		uint64_t w;

		memcpy(&w, map + (i >> 3), 8);
		used += (uint32_t)__builtin_popcountll(w);
	}
	for (; i + 8 <= size; i += 8)
		used += (uint32_t)__builtin_popcount(map[i >> 3]);
	for (; i < size; i++)
		used += (uint32_t)bit_test(map, i);
	return size - used;
}

/* The first bit equal to @set in [start, size), or size: an aligned
 * word without one is stepped over at once (a free group's bitmap is
 * mostly zero words, a full one's all-ones words). */
static uint32_t find_next(const uint8_t *map, uint32_t size, uint32_t start,
			  int set)
{
	uint64_t skip = set ? 0 : UINT64_MAX;
	uint32_t i = start;

	while (i < size) {
		if ((i & 63) == 0 && i + 64 <= size) {
			uint64_t w;

			memcpy(&w, map + (i >> 3), 8);
			if (w == skip) {
				i += 64;
				continue;
			}
		}
		if (bit_test(map, i) == set)
			return i;
		i++;
	}
	return size;
}

uint32_t find_next_zero_bit(const uint8_t *map, uint32_t size, uint32_t start)
{
	return find_next(map, size, start, 0);
}

uint32_t find_next_set_bit(const uint8_t *map, uint32_t size, uint32_t start)
{
	return find_next(map, size, start, 1);
}

int block_in_use(const struct fs_state *fs, fsblk_t blk)
{
	fsblk_t rel = blk - fs->g.first_data_block;

	return bit_test(group_bbitmap(fs, (uint32_t)(rel / fs->g.blocks_per_group)),
			(uint32_t)(rel % fs->g.blocks_per_group));
}
