/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_POPULATE_H
#define ORLOV_POPULATE_H

#include "populate/opts.h"
#include "populate/resolve.h"
#include "lib/errctx.h"

struct populate_result {
	/* On error: what was being done and where (a source or image path). */
	struct errctx ec;
	/* On success: the summary line's figures. */
	uint64_t entries, bytes;
	uint32_t groups_used;
	double seconds;
	/* The first pass's bound, what was free, and what the write pass
	 * took (a dry run's figures are the real run's). */
	uint64_t need_inodes, need_blocks;
	uint64_t free_inodes, free_blocks;
	uint64_t inodes_used, blocks_used;
	uint32_t block_size;
	/* The filesystem's size (--dry-run --create: what would be made). */
	uint64_t fs_blocks, fs_inodes;
	/* --delalloc: how many times delayed data reached half the free
	 * space and was written back there, as ext4_nonda_switch does. */
	unsigned int writebacks;
	/* The first file written back in part while it was being written,
	 * under dioread_nolock, whose later blocks were then written without
	 * delay (unwritten extents at write_begin: not modelled, see
	 * data.c), or NULL. */
	char *unwritten_at;
	/* No mount table to check IMAGE against (warned about, as mke2fs). */
	int mount_unknown;
	/* An image file written in place for want of a copy: why. */
	const char *in_place_why;
	/* Copies of IMAGE that killed runs had left, removed. */
	unsigned int stale_removed;
	/* Rollback files of killed copies into the disk image, applied. */
	unsigned int rollback_applied;
	/* Files whose set-ID bits an owner mapping cleared (meta_apply),
	 * and the first of them (its source path), or NULL. */
	unsigned int setid_cleared;
	char *setid_first;
	/* The driver, delayed allocation and kernel release the run was
	 * made with, and whether each was given (populate_resolve_mount). */
	struct populate_choice chosen;
};

/* The loop: walk -> choose inode -> write entry -> choose blocks -> copy.
 * @o as populate_resolve() left it. */
errcode_t populate(const struct populate_opts *o, struct populate_result *res);
void populate_result_free(struct populate_result *res);

#endif
