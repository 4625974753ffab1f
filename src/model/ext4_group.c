// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "model/ext4_group.h"

errcode_t ext4_groups_init(struct fs_state *fs)
{
	struct ext4_groups *e;

	e = calloc(1, sizeof(*e) + fs->g.ngroups * sizeof(e->g[0]));
	if (!e)
		return ENOMEM;
	e->ngroups = fs->g.ngroups;
	fs->ext4 = e;
	return 0;
}

void ext4_groups_loaded(struct fs_state *fs)
{
	uint32_t i;

	for (i = 0; i < fs->ext4->ngroups; i++) {
		fs->ext4->g[i].free_inodes = fs->free_inodes[i];
		fs->ext4->g[i].free_blocks = fs->free_blocks[i];
	}
}

/* The highest inode in use in group @i, 1-based; 0 when none. */
static uint32_t last_inode(const struct fs_state *fs, uint32_t i)
{
	const uint8_t *map = group_ibitmap(fs, i);
	uint32_t n = fs->g.inodes_per_group;

	while (n && !bit_test(map, n - 1))
		n--;
	return n;
}

void ext4_group_after(const struct fs_state *fs, uint32_t i,
		      uint16_t *flags, uint32_t *itable_unused)
{
	const struct ext4_group *g = &fs->ext4->g[i];
	uint32_t ipg = fs->g.inodes_per_group, used, ino;
	int took_inode = fs->free_inodes[i] < g->free_inodes;

	*flags = g->flags;
	*itable_unused = g->itable_unused;
	/* __ext4_new_inode initialises the block bitmap of the group it
	 * takes an inode in, mballoc that of the group it takes blocks in */
	if (took_inode || fs->free_blocks[i] < g->free_blocks)
		*flags &= (uint16_t)~EXT2_BG_BLOCK_UNINIT;
	if (!took_inode)
		return;
	used = ipg - g->itable_unused;
	if (g->flags & EXT2_BG_INODE_UNINIT) {
		*flags &= (uint16_t)~EXT2_BG_INODE_UNINIT;
		used = 0;
	}
	ino = last_inode(fs, i);
	if (ino > used)
		*itable_unused = ipg - ino;
}
