// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include "lib/hash.h"
#include "model/ialloc.h"
#include "model/ext4_ialloc.h"

uint32_t ialloc_random_start(uint64_t *rng, uint32_t ngroups)
{
	/* scaled as prandom_u32_max() scales */
	uint64_t z = splitmix64(rng);

	return (uint32_t)(((z & 0xffffffffU) * ngroups) >> 32);
}

int ext2_ialloc_find_group(const struct fs_state *fs, struct ialloc_policy *p,
			   const struct ialloc_parent *parent, int is_dir,
			   const char *name, int len, struct orlov_figures *f)
{
	uint32_t start = 0;

	if (!is_dir)
		return find_group_other(fs, parent->group, parent->ino, f);
	if (p->oldalloc)
		return find_group_dir(fs, parent->group, f);
	if (parent->topdir && p->topdir_hash)
		start = dirhash_half_md4(p->seed, name, len) % fs->g.ngroups;
	else if (parent->topdir)
		start = ialloc_random_start(&p->rng, fs->g.ngroups);
	return find_group_orlov(fs, parent->group, parent->topdir, start, f);
}

int ext4_ialloc_find_group(const struct fs_state *fs, struct ialloc_policy *p,
			   const struct ialloc_parent *parent, int is_dir,
			   const char *name, int len, struct orlov_figures *f)
{
	if (!is_dir)
		return ext4_find_group_other(fs, parent->group, parent->ino,
					     parent->last_alloc_group, f);
	if (p->oldalloc)
		return find_group_dir(fs, parent->group, f);
	return ext4_find_group_orlov(fs, parent->group,
				     parent->last_alloc_group, parent->topdir,
				     dirhash_half_md4(p->seed, name, len), f);
}
