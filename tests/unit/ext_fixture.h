/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the extent map's unit tests share: one block mapped, and the
 * extents of a tree in order. */
#ifndef ORLOV_EXT_FIXTURE_H
#define ORLOV_EXT_FIXTURE_H

#include "model/ext4/extents_tree.h"

static inline uint64_t map1(struct ext_tree *t, const struct ext_fs *fs,
		     const struct ext_alloc_ops *o, uint32_t lb)
{
	uint64_t p = 0;
	uint32_t got = 0;
	errcode_t err = ext4_ext_map_blocks(t, fs, o, lb, 1, &p, &got);

	return err || got != 1 ? 0 : p;
}

/* The @i-th extent of the tree, leaves left to right. */
static inline int nth_extent(struct ext_tree *t, unsigned int i,
		      struct ext3_extent *out)
{
	struct ext_path path[EXT_PATH_LEN];
	uint32_t lb = 0;
	unsigned int k = 0;

	for (;;) {
		const struct ext_path *leaf;
		const struct ext3_extent *ex;

		if (ext4_find_extent(t, lb, path))
			return 0;
		leaf = &path[path[0].depth];
		for (ex = leaf->ext; ex && ex <= EXT_LAST_EXTENT(leaf->hdr);
		     ex++, k++) {
			if (k == i) {
				*out = *ex;
				return 1;
			}
		}
		lb = ext4_ext_next_leaf_block(path);
		if (lb == EXT_MAX_BLOCKS)
			return 0;
	}
}

#endif
