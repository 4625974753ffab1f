/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The allocator state of one filesystem, as the driver (ext2, or ext4 on
 * an ext2/ext3 image) holds it in memory after a fresh mount: per-group
 * descriptor counters, the three percpu counters (free inodes, free
 * blocks, directories), the Orlov debts (zero at mount), ext4's flex
 * groups' sums (with flex_bg), the bitmaps, the reservation windows (ext2)
 * or mballoc's state (ext4), the htree hash settings.  The image layer loads it and stores it back once at the end;
 * in between only the model changes it.
 */
#ifndef ORLOV_FSSTATE_H
#define ORLOV_FSSTATE_H

#include <stdint.h>
#include <stdio.h>
#include <ext2fs/ext2_types.h>
#include <et/com_err.h>
#include "model/kver.h"

struct mb_state;
struct dir_spill;

/* ext4_fsblk_t: a physical block number.  Images of more than 2^32
 * blocks (64bit, extent-mapped files) have them past 32 bits; group
 * numbers and offsets inside a group stay 32-bit, as in the kernel. */
typedef uint64_t fsblk_t;

struct fs_geom {
	uint32_t ngroups;
	uint32_t inodes_per_group;
	uint32_t blocks_per_group;
	uint32_t inodes_count;
	fsblk_t blocks_count;
	uint32_t first_data_block;
	uint32_t first_ino;
	uint32_t block_size;
	uint32_t inode_size;
	/* s_log_groups_per_flex as ext4_fill_flex_info keeps it: 0 without
	 * flex_bg, or out of 1..31 (fs_state_init clears those) */
	uint32_t log_groups_per_flex;
	int metadata_csum;	/* ext4_has_metadata_csum: directory tails */
	int extents;		/* ext4_has_feature_extents: new inodes'
				   blocks are mapped by extents */
	int inline_data;	/* ext4_has_feature_inline_data: new inodes
				   get EXT4_STATE_MAY_INLINE_DATA */
};

/* struct flex_groups of ext4.h: the sums over one flex group, kept by
 * every inode and block allocation and free (atomic_t / atomic64_t). */
struct flex_groups {
	int64_t free_clusters;
	int32_t free_inodes;
	int32_t used_dirs;
};

/* One reservation window; the head node is the kernel's dummy [0,0]. */
struct rsv_window {
	uint32_t start;		/* 0 with end 0: not allocated */
	uint32_t end;
	uint32_t goal_size;
	uint32_t alloc_hit;
};

/* The kernel's per-filesystem red-black tree of windows.  Only one writer
 * runs at a time, so the tree never holds more than a handful of windows;
 * a sorted array of pointers is the same ordered set, simpler. */
struct rsv_tree {
	struct rsv_window **win;
	unsigned int n, cap;
	struct rsv_window head;
};

/*
 * lib/percpu_counter.c as one writer sees it that never leaves its CPU (the
 * only deterministic case on an SMP kernel): @count is fbc->count, what
 * percpu_counter_read_positive() returns to every reader; @pcpu is the
 * writer's CPU's share not yet folded into it.  An add folds when the
 * share would reach @batch in size, percpu_counter_batch being
 * max(32, 2 * online CPUs).  @batch 0 is a uniprocessor kernel
 * (CONFIG_SMP off), whose counters are plain exact integers: every add
 * folds at once.
 */
struct percpu_counter {
	int64_t count;
	int64_t pcpu;
	int32_t batch;
};

/* percpu_counter_add(); _inc, _dec and _sub are adds of 1, -1 and -n. */
static inline void percpu_counter_add(struct percpu_counter *c, int64_t amount)
{
	int64_t n = c->pcpu + amount;

	if (n >= c->batch || -n >= c->batch) {
		c->count += n;
		c->pcpu = 0;
	} else {
		c->pcpu = n;
	}
}

static inline int64_t percpu_counter_read_positive(const struct percpu_counter *c)
{
	return c->count > 0 ? c->count : 0;
}

/* The exact value: what the group descriptors add up to. */
static inline int64_t percpu_counter_sum(const struct percpu_counter *c)
{
	return c->count + c->pcpu;
}

/* --cpus: the kernel the layout must match. */
#define CPUS_UP 0	/* uniprocessor build, exact counters */
int32_t percpu_batch_for(unsigned int cpus);

/* Whose allocators write the image, whatever its features: ext2's
 * (reservation windows) or ext4's (mballoc), which also mounts ext2 and
 * ext3 images (CONFIG_EXT4_USE_FOR_EXT2). */
enum alloc_driver { ALLOC_EXT2, ALLOC_EXT4 };

struct fs_state {
	struct fs_geom g;
	enum alloc_driver driver;	/* ext4's from mb_state_init on */
	uint32_t *free_inodes;	/* bg_free_inodes_count */
	uint32_t *free_blocks;	/* bg_free_blocks_count */
	uint32_t *used_dirs;	/* bg_used_dirs_count */
	uint8_t *debts;		/* s_debts[] */
	struct flex_groups *flex;	/* s_flex_groups[], or NULL */
	struct percpu_counter freei;	/* s_freeinodes_counter */
	struct percpu_counter freeb;	/* s_freeblocks_counter */
	struct percpu_counter dirs;	/* s_dirs_counter */
	uint8_t *bbitmap;	/* block bitmaps, bytes_per_group each */
	uint8_t *ibitmap;	/* inode bitmaps, ibytes_per_group each */
	uint32_t bytes_per_group, ibytes_per_group;
	struct rsv_tree rsv;
	unsigned int colour;	/* pid % 16 of the kernel's writer */
	uint32_t kver;		/* the release modelled (kver.h): its gates */
	struct mb_state *mb;	/* ext4's mballoc (ext4/mballoc.h), or NULL */
	/* ext4 with dir_index: directories past one block get an htree */
	struct dx_hash_cfg {
		int enabled;
		int def_version;	/* s_def_hash_version */
		int unsigned_adj;	/* s_hash_unsigned: 0 or 3 */
		uint32_t seed[4];
		/* casefold: s_encoding's table, and EXT4_ENC_STRICT_MODE_FL
		 * (invalid names refused in casefolded directories) */
		const struct ext2fs_nls_table *encoding;
		int strict;
	} dx;
	FILE *trace;		/* --trace, or NULL */
	/* where directories' blocks go past their budget (dirblocks.h);
	 * NULL: they stay in memory */
	const struct dir_spill *dspill;
	struct ext4_groups *ext4;	/* lazy init (ext4/ialloc.h), or NULL */
};

errcode_t fs_state_init(struct fs_state *fs, const struct fs_geom *g);
void fs_state_free(struct fs_state *fs);
/* Recompute totals from the per-group counters, as ext2_fill_super's
 * percpu_counter_init() does: exact, nothing left on any CPU; and the
 * flex groups' sums, as ext4_fill_flex_info does. */
void fs_state_sum(struct fs_state *fs);
/* The counters' batch for a kernel with @cpus online CPUs, or CPUS_UP. */
void fs_state_set_cpus(struct fs_state *fs, unsigned int cpus);

/* From this flex_size on (ext4.h), ext4 leaves the first group of a flex
 * group to directories and special files: regular files' blocks start
 * in its second. */
#define EXT4_FLEX_SIZE_DIR_ALLOC_SCHEME 4

/* ext4_flex_group() and ext4_flex_bg_size(): 1 without flex_bg.  The
 * kernel's callers hold the size in an int (negative at log 31). */
static inline uint32_t fs_flex_group(const struct fs_state *fs, uint32_t group)
{
	return group >> fs->g.log_groups_per_flex;
}

static inline uint32_t fs_flex_size(const struct fs_state *fs)
{
	return 1u << fs->g.log_groups_per_flex;
}

/* Group @group's changes into its flex group's sums (nothing without
 * flex_bg), as each allocation and free of the ext4 driver adds them. */
static inline void fs_flex_add(struct fs_state *fs, uint32_t group,
			       int32_t inodes, int64_t clusters, int32_t dirs)
{
	struct flex_groups *fg;

	if (!fs->flex)
		return;
	fg = &fs->flex[fs_flex_group(fs, group)];
	fg->free_inodes += inodes;
	fg->free_clusters += clusters;
	fg->used_dirs += dirs;
}

fsblk_t group_first_block(const struct fs_state *fs, uint32_t group);
fsblk_t group_last_block(const struct fs_state *fs, uint32_t group);

/* No block of group @g in use, by its count (the loader checked the
 * counts against the bitmaps, the allocators keep them together): its
 * bitmap is all zeros, which need be neither copied nor read.  A short
 * last group, its tail marked in use, never is. */
static inline int group_all_free(const struct fs_state *fs, uint32_t g)
{
	return fs->free_blocks[g] == fs->g.blocks_per_group;
}

static inline uint8_t *group_bbitmap(const struct fs_state *fs, uint32_t g)
{
	return fs->bbitmap + (size_t)g * fs->bytes_per_group;
}

static inline uint8_t *group_ibitmap(const struct fs_state *fs, uint32_t g)
{
	return fs->ibitmap + (size_t)g * fs->ibytes_per_group;
}

static inline int bit_test(const uint8_t *map, uint32_t nr)
{
	return (map[nr >> 3] >> (nr & 7)) & 1;
}

/* Returns the old value, like ext2_set_bit_atomic. */
static inline int bit_set(uint8_t *map, uint32_t nr)
{
	int old = bit_test(map, nr);

	map[nr >> 3] |= (uint8_t)(1u << (nr & 7));
	return old;
}

static inline void bit_clear(uint8_t *map, uint32_t nr)
{
	map[nr >> 3] &= (uint8_t)~(1u << (nr & 7));
}

/* Zero bits in [0, size). */
uint32_t count_zero_bits(const uint8_t *map, uint32_t size);

/* First zero bit in [start, size), or size. */
uint32_t find_next_zero_bit(const uint8_t *map, uint32_t size, uint32_t start);
/* First set bit in [start, size), or size. */
uint32_t find_next_set_bit(const uint8_t *map, uint32_t size, uint32_t start);

int block_in_use(const struct fs_state *fs, fsblk_t blk);

#endif
