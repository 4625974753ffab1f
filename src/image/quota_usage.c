// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The usage the run's inodes charge to their owners, counted as the
 * staged inodes change.  With quota on, ext4 charges each inode to its
 * owner's dquots (dquot_alloc_inode, inode_add_bytes through
 * dquot_alloc_block) and moves it whole at a chown (dquot_transfer): at
 * the end an owner's usage is the sum over its inodes of one inode and
 * i_blocks in bytes, which is also what e2fsck counts.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "image/image_int.h"
#include "model/quota_tree.h"
#include "lib/util.h"

uint32_t quota_inum(struct ext2_super_block *sb, int type)
{
	if (!ext2fs_has_feature_quota(sb))
		return 0;
	return type == QT_USR ? sb->s_usr_quota_inum :
	       type == QT_GRP ? sb->s_grp_quota_inum : sb->s_prj_quota_inum;
}

int image_quota_on(const struct image *img, int type)
{
	return quota_inum(img->fs->super, type) != 0;
}

/* The position of (@type, @id) in the charges, added if new. */
static errcode_t charge_of(struct quota_charges *qc, int type, uint32_t id,
			   struct quota_charge **out)
{
	uint64_t key = (uint64_t)type << 32 | id;
	size_t pos;
	errcode_t err;

	if (!keymap_get(&qc->map, key, &pos)) {
		if (grow_array(&qc->v, &qc->cap, qc->n + 1, sizeof(*qc->v), 16))
			return ENOMEM;
		pos = qc->n;
		err = keymap_add(&qc->map, key, pos);
		if (err)
			return err;
		memset(&qc->v[pos], 0, sizeof(qc->v[pos]));
		qc->v[pos].type = (uint32_t)type;
		qc->v[pos].id = id;
		qc->n++;
	}
	*out = &qc->v[pos];
	return 0;
}

uint32_t image_inode_projid(const struct image *img,
			    const struct ext2_inode_large *in)
{
	/* the field where the inode has room for it, as e2fsck counts it
	 * too (mke2fs gives project images 256-byte inodes) */
	size_t end = offsetof(struct ext2_inode_large, i_projid) +
		     sizeof(in->i_projid);

	if (!ext2fs_has_feature_project(img->fs->super) ||
	    EXT2_INODE_SIZE(img->fs->super) <= EXT2_GOOD_OLD_INODE_SIZE ||
	    EXT2_GOOD_OLD_INODE_SIZE + (size_t)in->i_extra_isize < end)
		return 0;
	return in->i_projid;
}

/* One inode's charge, @sign 1 (added) or -1 (taken off). */
static errcode_t charge(struct image *img, const struct ext2_inode_large *in,
			int sign)
{
	uint32_t id[QT_NTYPES] = { inode_uid(*in), inode_gid(*in),
				   image_inode_projid(img, in) };
	struct quota_charge *c;
	errcode_t err;
	int t;

	for (t = QT_USR; t < QT_NTYPES; t++) {
		if (!image_quota_on(img, t))
			continue;
		err = charge_of(&img->qc, t, id[t], &c);
		if (err)
			return err;
		c->inodes += sign;
		/* i_blocks in bytes, as inode_get_bytes gives it to the
		 * quota code (huge_file's units included) */
		c->space += sign * (int64_t)(512 *
			ext2fs_get_stat_i_blocks(img->fs, (struct ext2_inode *)in));
	}
	return 0;
}

errcode_t quota_charge_staged(struct image *img, uint32_t ino,
			      const struct ext2_inode_large *old,
			      const struct ext2_inode_large *in)
{
	struct ext2_inode_large disk;
	errcode_t err;

	/* the quota files themselves (the project one an ordinary inode
	 * number, mke2fs's first free) and the other reserved inodes are
	 * charged to nobody (S_NOQUOTA, and e2fsck skips them) */
	if (!ext2fs_has_feature_quota(img->fs->super) ||
	    (ino < EXT2_FIRST_INO(img->fs->super) && ino != EXT2_ROOT_INO) ||
	    ino == quota_inum(img->fs->super, QT_PRJ))
		return 0;
	if (!old && ext2fs_test_inode_bitmap2(img->fs->inode_map, ino)) {
		err = ext2fs_read_inode_full(img->fs, ino,
					     (struct ext2_inode *)&disk,
					     sizeof(disk));
		if (err)
			return err;
		old = &disk;
	}
	err = old && old->i_links_count ? charge(img, old, -1) : 0;
	return err ? err : charge(img, in, 1);
}

const struct quota_charge *image_quota_charges(const struct image *img,
					       size_t *n)
{
	*n = img->qc.n;
	return img->qc.v;
}

void quota_charges_free(struct quota_charges *qc)
{
	keymap_free(&qc->map);
	free(qc->v);
	memset(qc, 0, sizeof(*qc));
}
