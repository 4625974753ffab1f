// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xattr.h"
#include "orlov_err.h"
#include "util.h"

#define HDR_SIZE 32
#define ENTRY_SIZE 16
#define PAD4(n) (((n) + 3) & ~(size_t)3)

/* Name indexes of fs/ext2/xattr.h */
#define IDX_USER 1
#define IDX_ACL_ACCESS 2
#define IDX_ACL_DEFAULT 3
#define IDX_TRUSTED 4
#define IDX_SECURITY 6

/* posix_acl_xattr (what getxattr returns) and ext2's disk form. */
#define ACL_XATTR_VERSION 2
#define EXT2_ACL_VERSION 1
#define ACL_USER 0x02
#define ACL_GROUP 0x08

struct ent {
	int index;
	const char *name;	/* without its prefix */
	size_t name_len;
	unsigned char *value;
	size_t size;
	int owned;
};





static int classify(const char *full, struct ent *e)
{
	static const struct {
		const char *prefix;
		int index;
	} map[] = {
		{ "user.", IDX_USER },
		{ "trusted.", IDX_TRUSTED },
		{ "security.", IDX_SECURITY },
	};
	size_t i;

	if (!strcmp(full, "system.posix_acl_access")) {
		e->index = IDX_ACL_ACCESS;
		e->name = "";
		return 0;
	}
	if (!strcmp(full, "system.posix_acl_default")) {
		e->index = IDX_ACL_DEFAULT;
		e->name = "";
		return 0;
	}
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		size_t pl = strlen(map[i].prefix);

		if (!strncmp(full, map[i].prefix, pl) && full[pl]) {
			e->index = map[i].index;
			e->name = full + pl;
			return 0;
		}
	}
	return -1;
}

/* posix_acl_xattr -> ext2 disk ACL: short entries for the owner, group,
 * mask and other tags, long ones (with an id) for named users/groups. */
static errcode_t acl_to_disk(const unsigned char *v, size_t size,
			     unsigned char **out, size_t *out_size)
{
	size_t n, i, len = 4;
	unsigned char *d, *p;

	if (size < 4 || (size - 4) % 8 || get_le32(v) != ACL_XATTR_VERSION)
		return ORLOV_ERR_BAD_XATTR;
	n = (size - 4) / 8;
	for (i = 0; i < n; i++) {
		uint32_t tag = get_le16(v + 4 + 8 * i);

		len += (tag == ACL_USER || tag == ACL_GROUP) ? 8 : 4;
	}
	d = malloc(len);
	if (!d)
		return ENOMEM;
	put_le32(d, EXT2_ACL_VERSION);
	p = d + 4;
	for (i = 0; i < n; i++) {
		const unsigned char *s = v + 4 + 8 * i;
		uint32_t tag = get_le16(s);

		put_le16(p, tag);
		put_le16(p + 2, get_le16(s + 2));
		if (tag == ACL_USER || tag == ACL_GROUP) {
			put_le32(p + 4, get_le32(s + 4));
			p += 8;
		} else {
			p += 4;
		}
	}
	*out = d;
	*out_size = len;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	/* The order ext2_xattr_set keeps: index, name length, name. */
	if (x->index != y->index)
		return x->index - y->index;
	if (x->name_len != y->name_len)
		return x->name_len < y->name_len ? -1 : 1;
	return memcmp(x->name, y->name, x->name_len);
}

#define NAME_HASH_SHIFT 5
#define VALUE_HASH_SHIFT 16
#define BLOCK_HASH_SHIFT 16

uint32_t xattr_entry_hash(const char *name, size_t name_len,
			  const unsigned char *value, size_t value_size)
{
	uint32_t hash = 0;
	size_t i;

	/* The kernel hashes the name as (signed) char. */
	for (i = 0; i < name_len; i++)
		hash = (hash << NAME_HASH_SHIFT) ^
		       (hash >> (32 - NAME_HASH_SHIFT)) ^
		       (uint32_t)(int)(signed char)name[i];
	for (i = 0; i < PAD4(value_size); i += 4) {
		unsigned char w[4] = { 0, 0, 0, 0 };
		size_t k;

		for (k = 0; k < 4 && i + k < value_size; k++)
			w[k] = value[i + k];
		hash = (hash << VALUE_HASH_SHIFT) ^
		       (hash >> (32 - VALUE_HASH_SHIFT)) ^ get_le32(w);
	}
	return hash;
}

uint32_t xattr_block_hash(const unsigned char *block)
{
	return get_le32(block + 16);
}

errcode_t xattr_build_block(const struct src_xattr *xattrs, size_t n,
			    unsigned char *block, uint32_t block_size,
			    const char **bad)
{
	struct ent *ents;
	size_t i, need = HDR_SIZE + 4, voff;
	uint32_t bhash = 0;
	int zero_hash = 0;
	unsigned char *p;
	errcode_t err = 0;

	ents = calloc(n ? n : 1, sizeof(*ents));
	if (!ents)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		struct ent *e = &ents[i];

		if (classify(xattrs[i].name, e)) {
			*bad = xattrs[i].name;
			err = ORLOV_ERR_BAD_XATTR;
			goto out;
		}
		e->name_len = strlen(e->name);
		if (e->name_len > 255) {
			*bad = xattrs[i].name;
			err = ORLOV_ERR_BAD_XATTR;
			goto out;
		}
		if (e->index == IDX_ACL_ACCESS || e->index == IDX_ACL_DEFAULT) {
			err = acl_to_disk(xattrs[i].value, xattrs[i].size,
					  &e->value, &e->size);
			if (err) {
				*bad = xattrs[i].name;
				goto out;
			}
			e->owned = 1;
		} else {
			e->value = xattrs[i].value;
			e->size = xattrs[i].size;
		}
		need += PAD4(ENTRY_SIZE + e->name_len) + PAD4(e->size);
	}
	if (need > block_size) {
		err = ORLOV_ERR_XATTR_TOO_BIG;
		goto out;
	}
	qsort(ents, n, sizeof(*ents), ent_cmp);

	memset(block, 0, block_size);
	put_le32(block, EXT2_XATTR_MAGIC);
	put_le32(block + 4, 1);	/* h_refcount */
	put_le32(block + 8, 1);	/* h_blocks */
	p = block + HDR_SIZE;
	voff = block_size;
	for (i = 0; i < n; i++) {
		struct ent *e = &ents[i];
		uint32_t h;

		voff -= PAD4(e->size);
		if (e->size)
			memcpy(block + voff, e->value, e->size);
		h = xattr_entry_hash(e->name, e->name_len, e->value, e->size);
		p[0] = (unsigned char)e->name_len;
		p[1] = (unsigned char)e->index;
		put_le16(p + 2, e->size ? (uint32_t)voff : 0);
		put_le32(p + 4, 0);	/* e_value_block */
		put_le32(p + 8, (uint32_t)e->size);
		put_le32(p + 12, h);
		memcpy(p + ENTRY_SIZE, e->name, e->name_len);
		p += PAD4(ENTRY_SIZE + e->name_len);
		/* ext2_xattr_rehash: any zero entry hash zeroes the block's */
		if (!h)
			zero_hash = 1;
		bhash = (bhash << BLOCK_HASH_SHIFT) ^
			(bhash >> (32 - BLOCK_HASH_SHIFT)) ^ h;
	}
	put_le32(block + 16, zero_hash ? 0 : bhash);
out:
	for (i = 0; i < n; i++)
		if (ents[i].owned)
			free(ents[i].value);
	free(ents);
	return err;
}
