/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel modelled, as a release number (--kernel): behaviour that
 * changed between releases is gated on the release where it landed,
 * upstream or in the stable line it was backported to.
 */
#ifndef ORLOV_KVER_H
#define ORLOV_KVER_H

#include <stdint.h>

/* KERNEL_VERSION(): patch levels past 255 clamp to 255, as the kernel's
 * own LINUX_VERSION_CODE does from 4.9.256 and 4.14.256 on. */
#define KVER(a, b, c) (((uint32_t)(a) << 16) | ((uint32_t)(b) << 8) | \
		       ((c) > 255 ? 255u : (uint32_t)(c)))
#define KVER_MAJOR(v) ((v) >> 16)
#define KVER_MINOR(v) (((v) >> 8) & 0xff)
#define KVER_PATCH(v) ((v) & 0xff)

/* What the docs' exactness claims were measured against: Debian 12's
 * kernel (linux-image-6.1.0-57, 6.1.192) and linux-source-6.12 (6.12.118,
 * what t-kernel-612 builds and boots). */
#define KVER_REF_6_1 KVER(6, 1, 192)
#define KVER_REF_6_12 KVER(6, 12, 118)
/* 6.8 (Ubuntu 24.04's base) is closed: its last release. */
#define KVER_LAST_6_8 KVER(6, 8, 12)

/* Every architecture builds with -funsigned-char from 6.2 on: before,
 * x86 hashed attribute names as signed char and arm64 as unsigned. */
#define KVER_UNSIGNED_CHAR KVER(6, 2, 0)
/* ext2 allocates attribute blocks with EXT2_ALLOC_NORESERVE (Ye Bin's
 * "ext2: introduce flag argument for ext2_new_blocks()", 6.6). */
#define KVER_EXT2_XATTR_NORESERVE KVER(6, 6, 0)

/* should_optimize_scan left indirect-mapped inodes to the linear group
 * scan until "ext4: use optimized mballoc scanning regardless of inode
 * format" (6.19; stable 6.1.165 and 6.12.75, never in 6.8). */
static inline int kver_mb_optimize_indirect(uint32_t v)
{
	return (v >= KVER(6, 1, 165) && v < KVER(6, 2, 0)) ||
	       v >= KVER(6, 12, 75);
}

/* ext4_mb_new_inode_pa no longer copies the found extent, its logical
 * start moved, into ac_f_ex, which the ext4_mballoc_alloc tracepoint
 * prints ("ext4: remove repeat assignment to ac_f_ex", 6.4). */
#define KVER_MB_F_EX KVER(6, 4, 0)

/* An inode's preallocations in an rbtree, none trimmed for their number
 * ("ext4: Use rbtrees to manage PAs instead of inode i_prealloc_list",
 * 6.4; before, ext4_mb_trim_inode_pa: model/ext4/mballoc_prealloc.c). */
#define KVER_PA_RBTREE KVER(6, 4, 0)

/* mballoc's criteria of 6.5 (Ojaswin Mujoo's series: CR_BEST_AVAIL_LEN
 * trimming a data request's goal, the fast criteria stepping over free
 * runs shorter than the goal, the criteria named in the tracepoint), in
 * 6.8 and 6.12; the optimize_scan lists still walked in the order groups
 * joined them (model/ext4/mballoc_scan.c). */
#define KVER_MB_65 KVER(6, 5, 0)

/* The 6.12 line's mballoc from 6.12.77 on (its optimize_scan lists as
 * xarrays walked by group number: model/ext4/mballoc.h). */
#define KVER_MB_612 KVER(6, 12, 77)

/* dioread_nolock, the default mount's: at writeback a delayed extent is
 * mapped unwritten and converted when its write completes (any block
 * size from 6.8 on, e89fdcc425b6; before, only blocks of a page). */
static inline int kver_dioread_nolock(uint32_t v, uint32_t block_size)
{
	return block_size == 4096 || (v >= KVER(6, 8, 0) && block_size < 4096);
}

/* --driver ext4 models every release kver_parse takes: the 6.1 line,
 * 6.8 and the 6.12 line. */
static inline int kver_ext4_modelled(uint32_t v)
{
	return v >= KVER(6, 1, 0) && v < KVER(6, 13, 0);
}

/*
 * "6.1", "6.1.164", "6.8", "6.12", "6.12.74", "6.1-arm64" and
 * "6.12-arm64" (also "6.1.N-arm64", "6.12.N-arm64"): the 6.1, 6.8 and
 * 6.12 lines.  A line alone is its reference release (6.8: its last).
 * 6.12-arm64 is the same model as 6.12 (both hash unsigned), *arm64
 * set only to say so.  0, or -1 for anything else.
 */
int kver_parse(const char *s, uint32_t *v, int *arm64);

/* What kver_parse takes, for the one line refusing anything else. */
#define KVER_ACCEPTED "6.1 (6.1.192), 6.1.N, 6.1-arm64, 6.8 (6.8.12), " \
		      "6.8.N, 6.12 (6.12.118), 6.12.N or 6.12-arm64"

#endif
