/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One extended attribute as a source yields it (by full name, the value
 * as the host has it): what the walker, the archive reader and the model's
 * xattr_to_disk share.
 */
#ifndef ORLOV_SRC_XATTR_H
#define ORLOV_SRC_XATTR_H

#include <stddef.h>

struct src_xattr {
	char *name;		/* full name, "user.foo", "system.posix_acl_access" */
	unsigned char *value;
	size_t size;
};

#endif
