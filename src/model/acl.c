// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/acl.h"
#include "lib/orlov_err.h"
#include "lib/util.h"

#define EXT2_ACL_VERSION 1
#define ACL_XATTR_VERSION 2	/* posix_acl_xattr, what getxattr returns */

static int is_long(uint16_t tag)
{
	return tag == ACL_USER || tag == ACL_GROUP;
}

errcode_t acl_from_disk(const unsigned char *v, size_t size, struct acl *acl)
{
	size_t off, n = 0;

	acl->e = NULL;
	acl->n = 0;
	if (size < 4 || get_le32(v) != EXT2_ACL_VERSION)
		return ORLOV_ERR_BAD_XATTR;
	for (off = 4; off < size; n++)
		off += size - off >= 4 && is_long(get_le16(v + off)) ? 8 : 4;
	if (off != size)
		return ORLOV_ERR_BAD_XATTR;
	acl->e = calloc(n ? n : 1, sizeof(*acl->e));
	if (!acl->e)
		return ENOMEM;
	for (off = 4; off < size; acl->n++) {
		struct acl_entry *e = &acl->e[acl->n];

		e->tag = (uint16_t)get_le16(v + off);
		e->perm = (uint16_t)get_le16(v + off + 2);
		e->id = is_long(e->tag) ? get_le32(v + off + 4) : 0xffffffffU;
		off += is_long(e->tag) ? 8 : 4;
	}
	return 0;
}

errcode_t acl_from_xattr(const unsigned char *v, size_t size, struct acl *acl)
{
	size_t i;

	acl->e = NULL;
	acl->n = 0;
	if (size < 4 || (size - 4) % 8 || get_le32(v) != ACL_XATTR_VERSION)
		return ORLOV_ERR_BAD_XATTR;
	acl->n = (size - 4) / 8;
	acl->e = calloc(acl->n ? acl->n : 1, sizeof(*acl->e));
	if (!acl->e)
		return ENOMEM;
	for (i = 0; i < acl->n; i++) {
		const unsigned char *s = v + 4 + 8 * i;

		acl->e[i].tag = (uint16_t)get_le16(s);
		acl->e[i].perm = (uint16_t)get_le16(s + 2);
		acl->e[i].id = get_le32(s + 4);
	}
	return 0;
}

errcode_t acl_to_disk(const struct acl *acl, unsigned char **v, size_t *size)
{
	size_t i, len = 4;
	unsigned char *d, *p;

	for (i = 0; i < acl->n; i++)
		len += is_long(acl->e[i].tag) ? 8 : 4;
	d = malloc(len);
	if (!d)
		return ENOMEM;
	put_le32(d, EXT2_ACL_VERSION);
	for (i = 0, p = d + 4; i < acl->n; i++) {
		put_le16(p, acl->e[i].tag);
		put_le16(p + 2, acl->e[i].perm);
		if (is_long(acl->e[i].tag)) {
			put_le32(p + 4, acl->e[i].id);
			p += 8;
		} else {
			p += 4;
		}
	}
	*v = d;
	*size = len;
	return 0;
}

void acl_release(struct acl *acl)
{
	free(acl->e);
	acl->e = NULL;
	acl->n = 0;
}

int posix_acl_create_masq(struct acl *acl, uint32_t *mode)
{
	struct acl_entry *group_obj = NULL, *mask_obj = NULL;
	uint32_t m = *mode;
	int not_equiv = 0;
	size_t i;

	for (i = 0; i < acl->n; i++) {
		struct acl_entry *pa = &acl->e[i];

		switch (pa->tag) {
		case ACL_USER_OBJ:
			pa->perm &= (uint16_t)((m >> 6) | ~0007U);
			m &= ((uint32_t)pa->perm << 6) | ~0700U;
			break;
		case ACL_USER:
		case ACL_GROUP:
			not_equiv = 1;
			break;
		case ACL_GROUP_OBJ:
			group_obj = pa;
			break;
		case ACL_OTHER:
			pa->perm &= (uint16_t)(m | ~0007U);
			m &= pa->perm | ~0007U;
			break;
		case ACL_MASK:
			mask_obj = pa;
			not_equiv = 1;
			break;
		default:
			return -1;
		}
	}
	if (mask_obj) {
		mask_obj->perm &= (uint16_t)((m >> 3) | ~0007U);
		m &= ((uint32_t)mask_obj->perm << 3) | ~0070U;
	} else {
		if (!group_obj)
			return -1;
		group_obj->perm &= (uint16_t)((m >> 3) | ~0007U);
		m &= ((uint32_t)group_obj->perm << 3) | ~0070U;
	}
	*mode = (*mode & ~0777U) | m;
	return not_equiv;
}

int posix_acl_chmod_masq(struct acl *acl, uint32_t mode)
{
	struct acl_entry *group_obj = NULL, *mask_obj = NULL;
	size_t i;

	for (i = 0; i < acl->n; i++) {
		struct acl_entry *pa = &acl->e[i];

		switch (pa->tag) {
		case ACL_USER_OBJ:
			pa->perm = (uint16_t)((mode & 0700) >> 6);
			break;
		case ACL_USER:
		case ACL_GROUP:
			break;
		case ACL_GROUP_OBJ:
			group_obj = pa;
			break;
		case ACL_MASK:
			mask_obj = pa;
			break;
		case ACL_OTHER:
			pa->perm = (uint16_t)(mode & 0007);
			break;
		default:
			return -1;
		}
	}
	if (mask_obj)
		mask_obj->perm = (uint16_t)((mode & 0070) >> 3);
	else if (group_obj)
		group_obj->perm = (uint16_t)((mode & 0070) >> 3);
	else
		return -1;
	return 0;
}

int posix_acl_equiv_mode(const struct acl *acl)
{
	int not_equiv = 0;
	size_t i;

	for (i = 0; i < acl->n; i++) {
		switch (acl->e[i].tag) {
		case ACL_USER_OBJ:
		case ACL_GROUP_OBJ:
		case ACL_OTHER:
			break;
		case ACL_MASK:
		case ACL_USER:
		case ACL_GROUP:
			not_equiv = 1;
			break;
		default:
			return -1;
		}
	}
	return not_equiv;
}
