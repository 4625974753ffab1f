// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "model/xattr.h"
#include "model/acl.h"
#include "lib/orlov_err.h"
#include "lib/util.h"

#define HDR_SIZE 32
#define ENTRY_SIZE 16
#define PAD4(n) (((n) + 3) & ~(size_t)3)

#define IDX_USER EXT2_XATTR_INDEX_USER
#define IDX_ACL_ACCESS EXT2_XATTR_INDEX_POSIX_ACL_ACCESS
#define IDX_ACL_DEFAULT EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT
#define IDX_TRUSTED EXT2_XATTR_INDEX_TRUSTED
#define IDX_SECURITY EXT2_XATTR_INDEX_SECURITY


static int classify(const char *full, struct xattr_disk *e)
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

/* ext2_xattr_cmp_entry: the order of the entry table (index, name
 * length, name), negative when (index, name) goes before @entry. */
static int cmp_entry(int index, const char *name, size_t name_len,
		     const unsigned char *entry)
{
	if (index != entry[1])
		return index - entry[1];
	if (name_len != entry[0])
		return (int)name_len - entry[0];
	return memcmp(name, entry + ENTRY_SIZE, name_len);
}

static int disk_cmp(const void *a, const void *b)
{
	const struct xattr_disk *x = a, *y = b;
	unsigned char e[ENTRY_SIZE + 255];

	e[0] = (unsigned char)y->name_len;
	e[1] = (unsigned char)y->index;
	memcpy(e + ENTRY_SIZE, y->name, y->name_len);
	return cmp_entry(x->index, x->name, x->name_len, e);
}

void xattr_disk_sort(struct xattr_disk *d, size_t n)
{
	qsort(d, n, sizeof(*d), disk_cmp);
}

errcode_t xattr_to_disk(const struct src_xattr *x, struct xattr_disk *d)
{
	errcode_t err;

	memset(d, 0, sizeof(*d));
	if (classify(x->name, d))
		return ORLOV_ERR_BAD_XATTR;
	d->name_len = strlen(d->name);
	if (d->name_len > 255)
		return ORLOV_ERR_BAD_XATTR;
	if (d->index == IDX_ACL_ACCESS || d->index == IDX_ACL_DEFAULT) {
		struct acl acl;

		/* ext2 keeps its own compact form (fs/ext2/acl.c) */
		err = acl_from_xattr(x->value, x->size, &acl);
		if (!err)
			err = acl_to_disk(&acl, &d->value, &d->size);
		acl_free(&acl);
		if (err)
			return err;
		d->owned = 1;
	} else {
		d->value = x->value;
		d->size = x->size;
	}
	return 0;
}

void xattr_disk_free(struct xattr_disk *d)
{
	if (d->owned)
		free(d->value);
	d->value = NULL;
	d->owned = 0;
}

#define BLOCK_HASH_SHIFT 16

uint32_t xattr_entry_hash(const char *name, size_t name_len,
			  const unsigned char *value, size_t value_size,
			  enum name_hash nh)
{
	/* libext2fs's, over an entry in host order with the name after it
	 * (the value it reads in 4-byte words, pad included, as the kernel) */
	union {
		struct ext2_ext_attr_entry e;
		unsigned char b[sizeof(struct ext2_ext_attr_entry) + 256];
	} u;

	memset(&u.e, 0, sizeof(u.e));
	u.e.e_name_len = (__u8)name_len;
	u.e.e_value_size = (__u32)value_size;
	memcpy(u.b + sizeof(u.e), name, name_len & 0xff);
	return nh == NAME_HASH_SIGNED ?
	       ext2fs_ext_attr_hash_entry_signed(&u.e, (void *)value) :
	       ext2fs_ext_attr_hash_entry(&u.e, (void *)value);
}

uint32_t xattr_block_hash(const unsigned char *block)
{
	/* h_hash follows h_magic, h_refcount and h_blocks */
	return get_le32(block + 12);
}

uint32_t xattr_block_refcount(const unsigned char *block)
{
	return get_le32(block + 4);
}

void xattr_block_set_refcount(unsigned char *block, uint32_t refs)
{
	put_le32(block + 4, refs);
}

void xattr_block_init(unsigned char *block, uint32_t block_size)
{
	memset(block, 0, block_size);
	put_le32(block, EXT2_XATTR_MAGIC);
	put_le32(block + 4, 1);	/* h_refcount */
	put_le32(block + 8, 1);	/* h_blocks */
}

#define IS_LAST(e) (get_le32(e) == 0)
#define NEXT(e) ((e) + PAD4(ENTRY_SIZE + (e)[0]))

int xattr_block_is_empty(const unsigned char *block)
{
	return IS_LAST(block + HDR_SIZE);
}

/* ext2_xattr_hash_entry: whatever @e points to, the terminator included */
static void hash_entry(unsigned char *block, unsigned char *e,
		       enum name_hash nh)
{
	/* a value kept in another block (e_value_block) is not hashed */
	uint32_t size = get_le32(e + 4) ? 0 : get_le32(e + 8);

	put_le32(e + 12, xattr_entry_hash((const char *)e + ENTRY_SIZE, e[0],
					  block + get_le16(e + 2), size, nh));
}

/* ext2_xattr_rehash: @here's hash, then the block's from every entry's */
static void rehash(unsigned char *block, unsigned char *here,
		   enum name_hash nh)
{
	unsigned char *e;
	uint32_t hash = 0;

	hash_entry(block, here, nh);
	for (e = block + HDR_SIZE; !IS_LAST(e); e = NEXT(e)) {
		uint32_t h = get_le32(e + 12);

		if (!h) {
			/* an entry hashing to 0 keeps the block unshared */
			hash = 0;
			break;
		}
		hash = (hash << BLOCK_HASH_SHIFT) ^
		       (hash >> (32 - BLOCK_HASH_SHIFT)) ^ h;
	}
	put_le32(block + 12, hash);
}

errcode_t xattr_block_set(unsigned char *block, uint32_t block_size,
			  const struct xattr_disk *d, int remove,
			  enum name_hash nh)
{
	size_t min_offs = block_size, free_space, need;
	unsigned char *here = NULL, *last, *e;
	int not_found = 1;

	if (!remove && d->size > block_size)
		return ORLOV_ERR_XATTR_TOO_BIG;
	/* Find the entry, or where it goes to keep the table sorted. */
	for (last = block + HDR_SIZE; !IS_LAST(last); last = NEXT(last)) {
		if (get_le32(last + 8)) {
			size_t offs = get_le16(last + 2);

			if (offs < min_offs)
				min_offs = offs;
		}
		if (not_found > 0) {
			not_found = cmp_entry(d->index, d->name, d->name_len, last);
			if (not_found <= 0)
				here = last;
		}
	}
	if (not_found > 0)
		here = last;
	free_space = min_offs - (size_t)(last - block) - 4;
	if (not_found) {
		if (remove)
			return 0;
	} else {
		free_space += PAD4(get_le32(here + 8)) +
			      PAD4(ENTRY_SIZE + d->name_len);
	}
	need = PAD4(ENTRY_SIZE + d->name_len) + (remove ? 0 : PAD4(d->size));
	if (free_space < need)
		return ORLOV_ERR_XATTR_TOO_BIG;

	if (not_found) {
		size_t len = PAD4(ENTRY_SIZE + d->name_len);

		memmove(here + len, here, (size_t)(last - here));
		memset(here, 0, len);
		here[0] = (unsigned char)d->name_len;
		here[1] = (unsigned char)d->index;
		memcpy(here + ENTRY_SIZE, d->name, d->name_len);
	} else {
		uint32_t old = get_le32(here + 8);

		if (old) {
			size_t offs = get_le16(here + 2), size = PAD4(old);
			unsigned char *first_val = block + min_offs;

			if (!remove && size == PAD4(d->size)) {
				/* Same padded size: the value is replaced
				 * where it stands. */
				put_le32(here + 8, (uint32_t)d->size);
				memset(block + offs + size - 4, 0, 4);
				memcpy(block + offs, d->value, d->size);
				goto rehash;
			}
			/* Close the gap of the old value; every offset
			 * below it moves up, zero ones (no value) too. */
			memmove(first_val + size, first_val,
				(size_t)(block + offs - first_val));
			memset(first_val, 0, size);
			min_offs += size;
			for (e = block + HDR_SIZE; !IS_LAST(e); e = NEXT(e)) {
				size_t o = get_le16(e + 2);

				if (o < offs)
					put_le16(e + 2, (uint32_t)(o + size));
			}
			put_le16(here + 2, 0);
		}
		if (remove) {
			size_t len = PAD4(ENTRY_SIZE + d->name_len);

			last -= len;
			memmove(here, here + len, (size_t)(last - here));
			memset(last, 0, len);
		}
	}
	if (!remove) {
		put_le32(here + 8, (uint32_t)d->size);
		if (d->size) {
			size_t size = PAD4(d->size);
			unsigned char *val = block + min_offs - size;

			put_le16(here + 2, (uint32_t)(val - block));
			memset(val + size - 4, 0, 4);
			memcpy(val, d->value, d->size);
		}
	}
rehash:
	if (!xattr_block_is_empty(block))
		rehash(block, here, nh);
	return 0;
}

const unsigned char *xattr_block_get(const unsigned char *block, int index,
				     const char *name, size_t name_len,
				     size_t *size)
{
	const unsigned char *e;

	for (e = block + HDR_SIZE; !IS_LAST(e); e = NEXT(e)) {
		if (!cmp_entry(index, name, name_len, e)) {
			*size = get_le32(e + 8);
			return block + get_le16(e + 2);
		}
	}
	return NULL;
}

int xattr_block_valid(const unsigned char *block, uint32_t block_size)
{
	const unsigned char *e;

	if (get_le32(block) != EXT2_XATTR_MAGIC || get_le32(block + 8) != 1)
		return 0;
	for (e = block + HDR_SIZE; e + 4 <= block + block_size && !IS_LAST(e);
	     e = NEXT(e)) {
		size_t offs = get_le16(e + 2), size = get_le32(e + 8);

		if (e + PAD4(ENTRY_SIZE + e[0]) + 4 > block + block_size ||
		    get_le32(e + 4) || offs + size > block_size)
			return 0;
	}
	return e + 4 <= block + block_size;
}

int xattr_block_has(const unsigned char *block, const struct xattr_disk *d)
{
	const unsigned char *e;

	for (e = block + HDR_SIZE; !IS_LAST(e); e = NEXT(e))
		if (!cmp_entry(d->index, d->name, d->name_len, e))
			return 1;
	return 0;
}

int xattr_block_cmp(const unsigned char *a, const unsigned char *b)
{
	const unsigned char *x = a + HDR_SIZE, *y = b + HDR_SIZE;

	/* ext2_xattr_cmp: the same entries and values, wherever they lie */
	for (; !IS_LAST(x); x = NEXT(x), y = NEXT(y)) {
		uint32_t size = get_le32(x + 8);

		if (IS_LAST(y))
			return 1;
		if (get_le32(x + 12) != get_le32(y + 12) || x[1] != y[1] ||
		    x[0] != y[0] || size != get_le32(y + 8) ||
		    memcmp(x + ENTRY_SIZE, y + ENTRY_SIZE, x[0]))
			return 1;
		if (memcmp(a + get_le16(x + 2), b + get_le16(y + 2), size))
			return 1;
	}
	return !IS_LAST(y);
}

errcode_t xattr_build_block(const struct src_xattr *xattrs, size_t n,
			    unsigned char *block, uint32_t block_size,
			    enum name_hash nh, const char **bad)
{
	struct xattr_disk *d;
	errcode_t err = 0;
	size_t i, done = 0;

	d = calloc(n ? n : 1, sizeof(*d));
	if (!d)
		return ENOMEM;
	for (; done < n; done++) {
		err = xattr_to_disk(&xattrs[done], &d[done]);
		if (err) {
			*bad = xattrs[done].name;
			goto out;
		}
	}
	/* Set one by one in table order, as the replay does. */
	xattr_disk_sort(d, n);
	xattr_block_init(block, block_size);
	for (i = 0; !err && i < n; i++)
		err = xattr_block_set(block, block_size, &d[i], 0, nh);
out:
	for (i = 0; i < done; i++)
		xattr_disk_free(&d[i]);
	free(d);
	return err;
}

/* ---- ext4's in-inode attributes ----------------------------------------- */

/* The entry for (@index, @name) in an unsorted in-inode table, or the
 * table's end. */
static unsigned char *ibody_find(unsigned char *first, const unsigned char *end,
				 int index, const char *name, size_t name_len,
				 int *found)
{
	unsigned char *e;

	*found = 0;
	for (e = first; e + 4 <= end && !IS_LAST(e); e = NEXT(e))
		if (!cmp_entry(index, name, name_len, e)) {
			*found = 1;
			return e;
		}
	return e;
}

const unsigned char *xattr_ibody_get(const unsigned char *tail, size_t tail_size,
				     int index, const char *name,
				     size_t name_len, size_t *size)
{
	unsigned char *first = (unsigned char *)tail + 4, *e;
	int found;

	if (get_le32(tail) != EXT2_XATTR_MAGIC)
		return NULL;
	e = ibody_find(first, tail + tail_size, index, name, name_len, &found);
	if (!found)
		return NULL;
	*size = get_le32(e + 8);
	return first + get_le16(e + 2);
}

errcode_t xattr_ibody_set(unsigned char *tail, size_t tail_size,
			  const struct xattr_disk *d, int remove)
{
	unsigned char *first = tail + 4, *end = tail + tail_size, *here, *last, *e;
	size_t min_offs = tail_size - 4, old_size = 0, new_size, free_space;
	size_t len = PAD4(ENTRY_SIZE + d->name_len);
	int found;

	if (get_le32(tail) != EXT2_XATTR_MAGIC)
		memset(first, 0, 4);	/* an empty table */
	here = ibody_find(first, end, d->index, d->name, d->name_len, &found);
	if (!found && remove)
		return 0;
	if (found)
		old_size = PAD4(get_le32(here + 8));
	new_size = remove ? 0 : PAD4(d->size);
	if (new_size && new_size == old_size) {
		/* the value is replaced where it stands */
		unsigned char *val = first + get_le16(here + 2);

		put_le32(here + 8, (uint32_t)d->size);
		memset(val, 0, new_size);
		memcpy(val, d->value, d->size);
		goto done;
	}
	for (last = first; !IS_LAST(last); last = NEXT(last))
		if (get_le32(last + 8) && get_le16(last + 2) < min_offs)
			min_offs = get_le16(last + 2);
	if (!remove) {
		free_space = min_offs - (size_t)(last - first) - 4;
		if (found)
			free_space += len + old_size;
		if (free_space < len + new_size)
			return ORLOV_ERR_XATTR_TOO_BIG;
	}
	if (found && get_le32(here + 8)) {
		/* close the old value's gap; values below it move up */
		size_t offs = get_le16(here + 2);
		unsigned char *first_val = first + min_offs;

		memmove(first_val + old_size, first_val,
			(size_t)(first + offs - first_val));
		memset(first_val, 0, old_size);
		min_offs += old_size;
		for (e = first; !IS_LAST(e); e = NEXT(e)) {
			size_t o = get_le16(e + 2);

			if (get_le32(e + 8) && o < offs)
				put_le16(e + 2, (uint32_t)(o + old_size));
		}
	}
	if (remove) {
		last -= len;
		memmove(here, here + len, (size_t)(last - here) + 4);
		memset(last, 0, len);
	} else if (!found) {
		memmove(here + len, here, (size_t)(last - here) + 4);
		memset(here, 0, len);
		here[0] = (unsigned char)d->name_len;
		here[1] = (unsigned char)d->index;
		memcpy(here + ENTRY_SIZE, d->name, d->name_len);
	} else {
		put_le16(here + 2, 0);
		put_le32(here + 8, 0);
	}
	if (!remove) {
		if (d->size) {
			unsigned char *val = first + min_offs - new_size;

			put_le16(here + 2, (uint32_t)(min_offs - new_size));
			memset(val, 0, new_size);
			memcpy(val, d->value, d->size);
		}
		put_le32(here + 8, (uint32_t)d->size);
	}
done:
	/* ext4_xattr_ibody_set: the magic says whether anything is left */
	put_le32(tail, IS_LAST(first) ? 0 : EXT2_XATTR_MAGIC);
	return 0;
}

int xattr_ibody_empty(const unsigned char *tail, size_t tail_size)
{
	return tail_size < 8 || get_le32(tail) != EXT2_XATTR_MAGIC ||
	       IS_LAST(tail + 4);
}

int xattr_ibody_valid(const unsigned char *tail, size_t tail_size)
{
	const unsigned char *first = tail + 4, *end = tail + tail_size, *e;
	size_t area = tail_size - 4;

	if (tail_size < 8)
		return 0;
	if (get_le32(tail) != EXT2_XATTR_MAGIC)
		return 1;	/* no attributes: the rest is not read */
	for (e = first;; e = NEXT(e)) {
		size_t offs, size;

		if (e + 4 > end)
			return 0;
		if (IS_LAST(e))
			return 1;
		if (e + ENTRY_SIZE > end || NEXT(e) + 4 > end || get_le32(e + 4))
			return 0;
		offs = get_le16(e + 2);
		size = get_le32(e + 8);
		if (size && (offs > area || size > area - offs))
			return 0;
	}
}
