// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <string.h>

#include "lib/xattr_name.h"

static const struct {
	unsigned int index;
	const char *prefix;
	int whole;	/* the whole name, not a prefix */
	int ext2;	/* ext2_xattr_set takes it (a handler of fs/ext2) */
} xattr_names[] = {
	{ EXT2_XATTR_INDEX_USER, "user.", 0, 1 },
	{ EXT2_XATTR_INDEX_POSIX_ACL_ACCESS, "system.posix_acl_access", 1, 1 },
	{ EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT, "system.posix_acl_default", 1, 1 },
	{ EXT2_XATTR_INDEX_TRUSTED, "trusted.", 0, 1 },
	{ EXT2_XATTR_INDEX_SECURITY, "security.", 0, 1 },
	{ EXT4_XATTR_INDEX_SYSTEM, "system.", 0, 0 },
	{ EXT4_XATTR_INDEX_RICHACL, "system.richacl", 1, 0 },
};

#define NNAMES (sizeof(xattr_names) / sizeof(xattr_names[0]))

int xattr_name_index(const char *full, const char **rest)
{
	size_t i;

	for (i = 0; i < NNAMES; i++) {
		size_t pl = strlen(xattr_names[i].prefix);

		if (!xattr_names[i].ext2 ||
		    strncmp(full, xattr_names[i].prefix, pl))
			continue;
		/* a prefix needs a name after it; a whole name nothing */
		if (xattr_names[i].whole ? full[pl] != 0 : full[pl] == 0)
			continue;
		*rest = full + pl;
		return (int)xattr_names[i].index;
	}
	return 0;
}

const char *xattr_index_prefix(unsigned int index, int *is_acl)
{
	size_t i;

	*is_acl = 0;
	for (i = 0; i < NNAMES; i++)
		if (xattr_names[i].index == index) {
			*is_acl = index == EXT2_XATTR_INDEX_POSIX_ACL_ACCESS ||
				  index == EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT;
			return xattr_names[i].prefix;
		}
	return NULL;
}
