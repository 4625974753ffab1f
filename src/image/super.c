// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the open image's superblock says that the model follows (the
 * directory hash, filetype, the default mount options for attributes
 * and ACLs), and the two features the run turns on.
 */
#include "config.h"

#include "image/image_int.h"

void image_hash_seed(const struct image *img, uint32_t seed[4])
{
	const unsigned char *s = (const unsigned char *)img->fs->super->s_hash_seed;
	int i;

	for (i = 0; i < 4; i++)
		seed[i] = (uint32_t)s[4 * i] | (uint32_t)s[4 * i + 1] << 8 |
			  (uint32_t)s[4 * i + 2] << 16 | (uint32_t)s[4 * i + 3] << 24;
}

int image_has_filetype(const struct image *img)
{
	return ext2fs_has_feature_filetype(img->fs->super);
}

int image_has_dir_nlink(const struct image *img)
{
	return ext2fs_has_feature_dir_nlink(img->fs->super);
}

int image_has_journal(const struct image *img)
{
	return ext2fs_has_feature_journal(img->fs->super);
}

int image_has_huge_file(const struct image *img)
{
	return ext2fs_has_feature_huge_file(img->fs->super);
}

int image_dir_hash(const struct image *img, int *def_version, int *unsigned_adj)
{
	struct ext2_super_block *sb = img->fs->super;

	*def_version = sb->s_def_hash_version;
	/* ext4_fill_super: s_hash_unsigned is 3 with the unsigned flag */
	*unsigned_adj = (sb->s_flags & EXT2_FLAGS_UNSIGNED_HASH) ? 3 : 0;
	return ext2fs_has_feature_dir_index(sb);
}

const struct ext2fs_nls_table *image_encoding(const struct image *img,
					     int *strict)
{
	struct ext2_super_block *sb = img->fs->super;

	*strict = ext2fs_has_feature_casefold(sb) &&
		  (sb->s_encoding_flags & EXT4_ENC_STRICT_MODE_FL);
	/* ext2fs_open2 loads it with the casefold feature, else NULL */
	return ext2fs_has_feature_casefold(sb) ? img->fs->encoding : NULL;
}

void image_set_large_file(struct image *img)
{
	ext2fs_set_feature_large_file(img->fs->super);
}

int image_user_xattr(const struct image *img)
{
	return !!(img->fs->super->s_default_mount_opts & EXT2_DEFM_XATTR_USER);
}

int image_posix_acl(const struct image *img)
{
	/* IS_POSIXACL after a mount without acl/noacl options */
	return !!(img->fs->super->s_default_mount_opts & EXT2_DEFM_ACL);
}

void image_set_ext_attr(struct image *img)
{
	/* ext2_xattr_update_super_block, on the first new attribute block */
	ext2fs_set_feature_xattr(img->fs->super);
}
