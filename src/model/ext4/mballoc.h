/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block allocation of the ext4 driver for indirect-mapped (ext2/ext3)
 * images (-t ext2 or -t ext3 on a kernel with CONFIG_EXT4_USE_FOR_EXT2,
 * or -t ext4 with delayed allocation) and for extent-mapped files, read
 * side by side with fs/ext4/mballoc.c of Linux 6.1 (and 6.12, below):
 * ext4_mb_new_blocks()
 * with its locality-group and inode preallocations, the stream goal, the
 * buddy scans by criteria 0-3 and the discards on close and on ENOSPC.
 * An extent-mapped request also carries its neighbours, which trim the
 * normalized range and turn on EXT4_MB_HINT_TRY_GOAL next to them
 * (ext4_mb_find_by_goal), and a tree block of ext4_ext_grow_indepth asks
 * for TRY_GOAL itself; indirect-mapped requests never have either.
 *
 * The buddy is not stored: its maximal aligned free chunks are recomputed
 * from an in-memory bitmap that is the on-disk bitmap plus the space
 * preallocations hold (what ext4_mb_load_buddy sees), per group and only
 * after every change, as mb_mark_used and mb_free_blocks keep it.  With
 * 16 groups or more the kernel turns mb_optimize_scan on: after a few
 * groups in turn, criteria 0 and 1 pick groups from lists by largest free
 * order and by average fragment size, each list in the order groups
 * joined it; those lists are kept here the same way.  Not modelled: RAID
 * stripes, bigalloc, flex_bg.
 */
#ifndef ORLOV_EXT4_MBALLOC_H
#define ORLOV_EXT4_MBALLOC_H

#include "model/fsstate.h"

#define MB_PREALLOC_TB_SIZE 10

/*
 * Linux 6.12's mballoc, as 6.12.77 and later have it (the Debian 13
 * kernels from 6.12.85-1 on); what it changes from 6.1's (mballoc_scan.c):
 * criteria renumbered, with CR_BEST_AVAIL_LEN (6.5) trimming a data
 * request's goal to a power of two down by up to three orders before
 * CR_GOAL_LEN_SLOW; CR_GOAL_LEN_FAST and CR_BEST_AVAIL_LEN stepping over
 * free runs shorter than the goal; with optimize_scan, the goal's group
 * and the three after it in turn (6.1: it and four more), then the lists
 * walked by group number from the next group on (6.12.77's xarrays); the
 * preallocation's logical start placed from the untrimmed goal.  6.4's
 * rbtree of inode preallocations finds the same ones as 6.1's list.
 * 6.5 to 6.12.76 (6.8, Debian 13 at release) have 6.5's criteria with
 * 6.1's group loop: the goal's group and four more in turn, then the
 * lists each walked in joining order (kver.h: KVER_MB_65, KVER_MB_612).
 */

/* An ext4_prealloc_space: inode (logical range of one file) or group
 * (the writer's locality group, used front to back). */
struct mb_inode;

struct mb_pa {
	fsblk_t pstart;
	/* pa_lstart, an ext4_lblk_t: a group preallocation's is its pstart
	 * cut to 32 bits, as the kernel's assignment cuts it */
	uint32_t lstart;
	uint32_t len, free;
	int group_pa;
	struct mb_inode *owner;	/* an inode preallocation's file */
};

/* A growable list of preallocations in the kernel's list order. */
struct mb_pa_list {
	struct mb_pa **pa;
	unsigned int n, cap;
};

/* Per regular file: what ext4_inode_info holds for mballoc. */
struct mb_inode {
	struct mb_pa_list pas;	/* i_prealloc_list, most recently used first */
	uint64_t i_size;	/* i_size when the block is asked for */
	int closed;		/* written back after the last close */
	int quota_file;		/* a hidden quota inode (ext4_is_quota_file) */
};

struct mb_group {
	uint32_t free;		/* bb_free */
	uint32_t fragments;	/* bb_fragments */
	int largest_order;	/* bb_largest_free_order, -1 if none */
	uint32_t counters[16];	/* bb_counters[order] */
	int lfo_list;		/* the largest-free-order list it is on, -1 */
	int avg_order;		/* bb_avg_fragment_size_order, -1 */
	/* its neighbours on those two lists (MB_GNONE: none), so that a
	 * group leaves a list of a hundred thousand at once */
	uint32_t lfo_prev, lfo_next, avg_prev, avg_next;
};

#define MB_GNONE UINT32_MAX

/* One of the optimize_scan lists: groups in the order they joined,
 * linked through their struct mb_group. */
struct mb_glist {
	uint32_t head, tail;	/* MB_GNONE: empty */
};

struct mb_state {
	uint8_t *map;		/* the buddy's order-0 bitmap, all groups */
	struct mb_group *grp;
	uint32_t cpg;		/* clusters (blocks) per group */
	unsigned int max_order;	/* blocksize_bits + 1 */
	struct mb_pa_list lg[MB_PREALLOC_TB_SIZE];	/* the writer's CPU's */
	struct mb_pa_list all;	/* every live one, oldest first (the groups'
				   bb_prealloc_list, discarded in that order) */
	uint32_t last_group, last_start;	/* s_mb_last_group/start */
	uint32_t group_prealloc;	/* s_mb_group_prealloc */
	uint32_t stream_request;	/* s_mb_stream_request */
	int delalloc;			/* mounted with delayed allocation */
	/* the writeback is mapping delayed blocks: their clusters were
	 * claimed when they were delayed, so its requests claim none */
	int writeback;
	/* a journal: freed blocks wait for the transaction's commit
	 * before the buddy has them again (ext4_mb_free_metadata) */
	int journal;
	/* blocks the conversion of unwritten extents frees (a leaf merged
	 * back into the inode): ext4 converts when their I/O completes,
	 * which the writeback's end stands for here (ext4_end_io_frees) */
	struct mb_endio_free {
		uint32_t ino;
		fsblk_t block;
	} *endio;
	size_t nendio, endio_cap;
	struct percpu_counter dirty;	/* s_dirtyclusters_counter */
	int optimize_scan;		/* MB_OPTIMIZE_SCAN */
	unsigned int max_linear_groups;	/* s_mb_max_linear_groups */
	struct mb_glist lfo[16];	/* s_mb_largest_free_orders */
	struct mb_glist avg[16];	/* s_mb_avg_fragment_size */
};

/* After the bitmaps are loaded: every group's buddy loaded in group
 * order, as reading /proc/fs/ext4/DEV/mb_groups after mount does.
 * @rotational: the disk's queue/rotational (4 groups in turn before the
 * optimize_scan lists, else none).  @optimize_scan: the mount's
 * mb_optimize_scan=1 or =0, or the kernel's default without it (on with
 * 16 groups or more, __ext4_fill_super), which mb_state_init takes. */
enum { MB_OPTIMIZE_SCAN_DEFAULT, MB_OPTIMIZE_SCAN_ON, MB_OPTIMIZE_SCAN_OFF };
errcode_t mb_state_init_opt(struct fs_state *fs, int rotational,
			    int optimize_scan);
errcode_t mb_state_init(struct fs_state *fs, int rotational);
void mb_state_free(struct fs_state *fs);

/*
 * ext4_mb_new_blocks() for an indirect-mapped inode: up to @len blocks
 * from @goal (ext4_find_goal's, below 2^32, or the group's first block
 * for an attribute block); @mi and @logical for file data
 * (EXT4_MB_HINT_DATA), NULL for metadata, directories and symlinks; @ino
 * the inode asking (ar->inode, for --trace).  *block is the first block,
 * below 2^32 as the inode's block map needs, *got how many (at least
 * one).  ORLOV_ERR_NO_BLOCKS when the filesystem is full.
 */
errcode_t ext4_mb_new_blocks(struct fs_state *fs, struct mb_inode *mi,
			     uint32_t ino,
			     uint32_t logical, uint32_t goal, uint32_t len,
			     uint32_t *block, uint32_t *got);
/*
 * struct ext4_allocation_request as ext4_ext_map_blocks and
 * ext4_new_meta_blocks fill it.  @mi: a regular file's data
 * (EXT4_MB_HINT_DATA), NULL for tree blocks and other files' blocks.
 * The neighbours: the last mapped block before @logical (@lleft at
 * @pleft) and the first after it (@lright at @pright), 0 in @pleft or
 * @pright for none.  @try_goal: EXT4_MB_HINT_TRY_GOAL from the caller.
 * Block numbers are 64-bit as in the kernel: a goal past the end falls
 * back to the first data block as the kernel's does.  @indirect: the
 * inode is not extent-mapped (an indirect-mapped file or directory, a
 * device node's or a fast symlink's attribute block), so mballoc scans
 * only the groups wholly below block 2^32 (s_blockfile_groups) and,
 * before the "regardless of inode format" backport, not by its lists.
 */
struct mb_request {
	struct mb_inode *mi;
	uint32_t logical, len;
	uint64_t goal;
	uint32_t lleft, lright;
	uint64_t pleft, pright;
	int try_goal;
	int indirect;
	int quota_file;	/* for a quota inode: EXT4_MB_USE_ROOT_BLOCKS */
	uint32_t ino;	/* ar->inode, for --trace only; 0: not said */
};

/* ext4_mb_new_blocks() for a full request (ext4_mb_new_blocks above is
 * it for an indirect-mapped inode, without neighbours nor TRY_GOAL).  ORLOV_ERR_CORRUPT where the
 * kernel would BUG or report corruption: neighbours that do not
 * surround @logical, or one past the end. */
errcode_t ext4_mb_new_blocks_ar(struct fs_state *fs,
				const struct mb_request *ar, uint64_t *block,
				uint32_t *got);
/* One block, as a page-cache write without delayed allocation asks. */
errcode_t ext4_mb_new_block(struct fs_state *fs, struct mb_inode *mi,
			    uint32_t ino,
			    uint32_t logical, uint32_t goal, uint32_t *block);

/* ext4_discard_preallocations(inode, 0): the last writer closes the file. */
void ext4_discard_preallocations(struct fs_state *fs, struct mb_inode *mi);
/* @mi was copied to a new place: its preallocations follow it. */
void mb_inode_moved(struct mb_inode *mi);
/* Forget the file; its preallocations stay until a discard. */
void mb_inode_release(struct mb_inode *mi);

/* ext4_free_blocks(): free in the bitmap and the counts at once, back in
 * the buddy at once without a journal; with one (mb_state.journal) only
 * once the transaction commits (ext4_free_data_in_buddy), which here is
 * after the run: one transaction, the reference run being shorter than
 * the journal's 5-second commit interval. */
void ext4_free_blocks(struct fs_state *fs, uint32_t ino, fsblk_t block,
		      uint32_t count);
/* ext4_free_blocks of one block, once the writeback's I/O completes
 * (ext4_end_io_rsv_work's conversion); at once if no room is left to
 * remember it (only where the trace records it then differs). */
void ext4_free_block_at_io_end(struct fs_state *fs, uint32_t ino,
			       fsblk_t block);
/* The writeback's I/O completed: those blocks freed, in order. */
void ext4_end_io_frees(struct fs_state *fs);

#endif
