// SPDX-License-Identifier: GPL-2.0-or-later
/* --label and --uuid on an existing image (naming.h). */
#include "config.h"

#include <string.h>
#include <uuid/uuid.h>

#include "image/naming.h"
#include "image/image_int.h"
#include "lib/orlov_err.h"

int naming_uuid_valid(const char *arg)
{
	uuid_t u;

	return !strcmp(arg, "random") || !strcmp(arg, "time") ||
	       !strcmp(arg, "clear") || !uuid_parse(arg, u);
}

/* The 16 bytes @arg names, drawn now for random and time. */
static errcode_t new_uuid(const char *arg, unsigned char u[16])
{
	if (!strcmp(arg, "random"))
		uuid_generate(u);
	else if (!strcmp(arg, "time"))
		uuid_generate_time(u);
	else if (!strcmp(arg, "clear"))
		uuid_clear(u);
	else if (uuid_parse(arg, u))
		return ORLOV_ERR_USAGE;
	return 0;
}

errcode_t image_set_naming(struct image *img, const char *label,
			   const char *uuid)
{
	ext2_filsys fs = img->fs;
	struct ext2_super_block *sb = fs->super;
	unsigned char u[16];
	dgrp_t g;
	errcode_t err;

	/* tune2fs -U rewrites every checksummed block then, which this
	 * tool's commit does not: refused before anything changes */
	if (uuid && ext2fs_has_feature_metadata_csum(sb) &&
	    !ext2fs_has_feature_csum_seed(sb))
		return ORLOV_ERR_UUID_CSUM;
	err = uuid ? new_uuid(uuid, u) : 0;
	if (err)
		return err;
	if (label) {
		/* strncpy's padding: the field is 16 bytes, NUL-filled */
		memset(sb->s_volume_name, 0, sizeof(sb->s_volume_name));
		memcpy(sb->s_volume_name, label,
		       strnlen(label, sizeof(sb->s_volume_name)));
	}
	if (uuid) {
		memcpy(sb->s_uuid, u, sizeof(sb->s_uuid));
		/* the seed stays s_checksum_seed with metadata_csum_seed */
		ext2fs_init_csum_seed(fs);
		/* uninit_bg's crc16 covers the UUID: every descriptor anew,
		 * all of which the commit's flush writes */
		for (g = 0; g < fs->group_desc_count; g++)
			ext2fs_group_desc_csum_set(fs, g);
	}
	ext2fs_mark_super_dirty(fs);
	return 0;
}
