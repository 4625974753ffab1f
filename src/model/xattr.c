// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ext2fs/ext2fs.h>

#include "model/xattr.h"
#include "model/acl.h"
#include "lib/orlov_err.h"
#include "lib/src_xattr.h"
#include "lib/util.h"

/* The entry table after the block header, walked as e2fsprogs does. */
#define FIRST(block) ((struct ext2_ext_attr_entry *)((block) + \
				sizeof(struct ext2_ext_attr_header)))
#define IS_LAST(e) EXT2_EXT_IS_LAST_ENTRY(e)
#define NEXT(e) EXT2_EXT_ATTR_NEXT(e)
/* Bytes from @a to @b, two places in one block. */
#define BYTES(a, b) ((size_t)((const char *)(b) - (const char *)(a)))

static size_t e_offs(const struct ext2_ext_attr_entry *e)
{
	return ext2fs_le16_to_cpu(e->e_value_offs);
}

static void set_offs(struct ext2_ext_attr_entry *e, size_t offs)
{
	e->e_value_offs = ext2fs_cpu_to_le16((__u16)offs);
}

static uint32_t e_size(const struct ext2_ext_attr_entry *e)
{
	return ext2fs_le32_to_cpu(e->e_value_size);
}


static int classify(const char *full, struct xattr_disk *e)
{
	e->index = xattr_name_index(full, &e->name);
	return e->index ? 0 : -1;
}

/* ext2_xattr_cmp_entry: the order of the entry table (index, name
 * length, name), negative when (index, name) goes before @entry. */
static int cmp_entry(int index, const char *name, size_t name_len,
		     const struct ext2_ext_attr_entry *entry)
{
	if (index != entry->e_name_index)
		return index - entry->e_name_index;
	if (name_len != entry->e_name_len)
		return (int)name_len - entry->e_name_len;
	return memcmp(name, EXT2_EXT_ATTR_NAME(entry), name_len);
}

static int disk_cmp(const void *a, const void *b)
{
	const struct xattr_disk *x = a, *y = b;
	union {
		struct ext2_ext_attr_entry e;
		unsigned char b[sizeof(struct ext2_ext_attr_entry) + 255];
	} u;

	u.e.e_name_len = (__u8)y->name_len;
	u.e.e_name_index = (__u8)y->index;
	memcpy(EXT2_EXT_ATTR_NAME(&u.e), y->name, y->name_len);
	return cmp_entry(x->index, x->name, x->name_len, &u.e);
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
	if (d->index == EXT2_XATTR_INDEX_POSIX_ACL_ACCESS ||
	    d->index == EXT2_XATTR_INDEX_POSIX_ACL_DEFAULT) {
		struct acl acl;

		/* ext2 keeps its own compact form (fs/ext2/acl.c) */
		err = acl_from_xattr(x->value, x->size, &acl);
		if (!err)
			err = acl_to_disk(&acl, &d->value, &d->size);
		acl_release(&acl);
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

static struct ext2_ext_attr_header *header(const unsigned char *block)
{
	return (struct ext2_ext_attr_header *)block;
}

uint32_t xattr_block_hash(const unsigned char *block)
{
	return ext2fs_le32_to_cpu(header(block)->h_hash);
}

uint32_t xattr_block_refcount(const unsigned char *block)
{
	return ext2fs_le32_to_cpu(header(block)->h_refcount);
}

void xattr_block_set_refcount(unsigned char *block, uint32_t refs)
{
	header(block)->h_refcount = ext2fs_cpu_to_le32(refs);
}

void xattr_block_init(unsigned char *block, uint32_t block_size)
{
	struct ext2_ext_attr_header *h = header(block);

	memset(block, 0, block_size);
	h->h_magic = ext2fs_cpu_to_le32(EXT2_EXT_ATTR_MAGIC);
	h->h_refcount = ext2fs_cpu_to_le32(1);
	h->h_blocks = ext2fs_cpu_to_le32(1);
}

int xattr_block_is_empty(const unsigned char *block)
{
	return IS_LAST(FIRST(block));
}

/* ext2_xattr_hash_entry: whatever @e points to, the terminator included */
static void hash_entry(unsigned char *block, struct ext2_ext_attr_entry *e,
		       enum name_hash nh)
{
	/* a value kept in another block (e_value_block) is not hashed */
	uint32_t size = e->e_value_inum ? 0 : e_size(e);

	e->e_hash = ext2fs_cpu_to_le32(xattr_entry_hash(EXT2_EXT_ATTR_NAME(e),
							e->e_name_len,
							block + e_offs(e),
							size, nh));
}

/* ext2_xattr_rehash: @here's hash, then the block's from every entry's */
static void rehash(unsigned char *block, struct ext2_ext_attr_entry *here,
		   enum name_hash nh)
{
	struct ext2_ext_attr_entry *e;
	uint32_t hash = 0;

	hash_entry(block, here, nh);
	for (e = FIRST(block); !IS_LAST(e); e = NEXT(e)) {
		uint32_t h = ext2fs_le32_to_cpu(e->e_hash);

		if (!h) {
			/* an entry hashing to 0 keeps the block unshared */
			hash = 0;
			break;
		}
		hash = (hash << BLOCK_HASH_SHIFT) ^
		       (hash >> (32 - BLOCK_HASH_SHIFT)) ^ h;
	}
	header(block)->h_hash = ext2fs_cpu_to_le32(hash);
}

/* A new entry for @d at @here, the table from @here to @last moved down. */
static void insert_entry(struct ext2_ext_attr_entry *here,
			 const struct ext2_ext_attr_entry *last, size_t tail,
			 const struct xattr_disk *d)
{
	size_t len = EXT2_EXT_ATTR_LEN(d->name_len);

	memmove((char *)here + len, here, BYTES(here, last) + tail);
	memset(here, 0, len);
	here->e_name_len = (__u8)d->name_len;
	here->e_name_index = (__u8)d->index;
	memcpy(EXT2_EXT_ATTR_NAME(here), d->name, d->name_len);
}

errcode_t xattr_block_set(unsigned char *block, uint32_t block_size,
			  const struct xattr_disk *d, int remove,
			  enum name_hash nh)
{
	size_t min_offs = block_size, free_space, need;
	struct ext2_ext_attr_entry *here = NULL, *last, *e;
	int not_found = 1;

	if (!remove && d->size > block_size)
		return ORLOV_ERR_XATTR_TOO_BIG;
	/* Find the entry, or where it goes to keep the table sorted. */
	for (last = FIRST(block); !IS_LAST(last); last = NEXT(last)) {
		if (last->e_value_size) {
			size_t offs = e_offs(last);

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
	free_space = min_offs - BYTES(block, last) - 4;
	if (not_found) {
		if (remove)
			return 0;
	} else {
		free_space += EXT2_EXT_ATTR_SIZE(e_size(here)) +
			      EXT2_EXT_ATTR_LEN(d->name_len);
	}
	need = EXT2_EXT_ATTR_LEN(d->name_len) +
	       (remove ? 0 : EXT2_EXT_ATTR_SIZE(d->size));
	if (free_space < need)
		return ORLOV_ERR_XATTR_TOO_BIG;

	if (not_found) {
		insert_entry(here, last, 0, d);
	} else {
		uint32_t old = e_size(here);

		if (old) {
			size_t offs = e_offs(here), size = EXT2_EXT_ATTR_SIZE(old);
			unsigned char *first_val = block + min_offs;

			if (!remove && size == EXT2_EXT_ATTR_SIZE(d->size)) {
				/* Same padded size: the value is replaced
				 * where it stands. */
				here->e_value_size =
					ext2fs_cpu_to_le32((uint32_t)d->size);
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
			for (e = FIRST(block); !IS_LAST(e); e = NEXT(e)) {
				size_t o = e_offs(e);

				if (o < offs)
					set_offs(e, o + size);
			}
			set_offs(here, 0);
		}
		if (remove) {
			size_t len = EXT2_EXT_ATTR_LEN(d->name_len);

			last = (struct ext2_ext_attr_entry *)((char *)last - len);
			memmove(here, (char *)here + len, BYTES(here, last));
			memset(last, 0, len);
		}
	}
	if (!remove) {
		here->e_value_size = ext2fs_cpu_to_le32((uint32_t)d->size);
		if (d->size) {
			size_t size = EXT2_EXT_ATTR_SIZE(d->size);
			unsigned char *val = block + min_offs - size;

			set_offs(here, BYTES(block, val));
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
	const struct ext2_ext_attr_entry *e;

	for (e = FIRST(block); !IS_LAST(e); e = NEXT(e)) {
		if (!cmp_entry(index, name, name_len, e)) {
			*size = e_size(e);
			return block + e_offs(e);
		}
	}
	return NULL;
}

int xattr_block_valid(const unsigned char *block, uint32_t block_size)
{
	const struct ext2_ext_attr_header *h = header(block);
	const unsigned char *end = block + block_size;
	const struct ext2_ext_attr_entry *e;

	if (ext2fs_le32_to_cpu(h->h_magic) != EXT2_EXT_ATTR_MAGIC ||
	    ext2fs_le32_to_cpu(h->h_blocks) != 1)
		return 0;
	for (e = FIRST(block); (const unsigned char *)e + 4 <= end &&
	     !IS_LAST(e); e = NEXT(e)) {
		size_t offs = e_offs(e), size = e_size(e);

		if ((const unsigned char *)NEXT(e) + 4 > end ||
		    e->e_value_inum || offs + size > block_size)
			return 0;
	}
	return (const unsigned char *)e + 4 <= end;
}

int xattr_block_has(const unsigned char *block, const struct xattr_disk *d)
{
	const struct ext2_ext_attr_entry *e;

	for (e = FIRST(block); !IS_LAST(e); e = NEXT(e))
		if (!cmp_entry(d->index, d->name, d->name_len, e))
			return 1;
	return 0;
}

int xattr_block_cmp(const unsigned char *a, const unsigned char *b)
{
	const struct ext2_ext_attr_entry *x = FIRST(a), *y = FIRST(b);

	/* ext2_xattr_cmp: the same entries and values, wherever they lie */
	for (; !IS_LAST(x); x = NEXT(x), y = NEXT(y)) {
		uint32_t size = e_size(x);

		if (IS_LAST(y))
			return 1;
		if (x->e_hash != y->e_hash ||
		    x->e_name_index != y->e_name_index ||
		    x->e_name_len != y->e_name_len || size != e_size(y) ||
		    memcmp(EXT2_EXT_ATTR_NAME(x), EXT2_EXT_ATTR_NAME(y),
			   x->e_name_len))
			return 1;
		if (memcmp(a + e_offs(x), b + e_offs(y), size))
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
static struct ext2_ext_attr_entry *ibody_find(struct ext2_ext_attr_entry *first,
					      const unsigned char *end,
					      int index, const char *name,
					      size_t name_len, int *found)
{
	struct ext2_ext_attr_entry *e;

	*found = 0;
	for (e = first; (const unsigned char *)e + 4 <= end && !IS_LAST(e);
	     e = NEXT(e))
		if (!cmp_entry(index, name, name_len, e)) {
			*found = 1;
			return e;
		}
	return e;
}

/* The ibody header is only the magic; the table follows it. */
static __u32 *ibody_magic(const unsigned char *tail)
{
	return (__u32 *)tail;
}

static struct ext2_ext_attr_entry *ibody_first(const unsigned char *tail)
{
	return (struct ext2_ext_attr_entry *)(tail + sizeof(__u32));
}

const unsigned char *xattr_ibody_get(const unsigned char *tail, size_t tail_size,
				     int index, const char *name,
				     size_t name_len, size_t *size)
{
	struct ext2_ext_attr_entry *first = ibody_first(tail), *e;
	int found;

	if (ext2fs_le32_to_cpu(*ibody_magic(tail)) != EXT2_EXT_ATTR_MAGIC)
		return NULL;
	e = ibody_find(first, tail + tail_size, index, name, name_len, &found);
	if (!found)
		return NULL;
	*size = e_size(e);
	return (const unsigned char *)first + e_offs(e);
}

/* The lowest value offset in the table, @limit if none is lower; *last
 * is the table's end. */
static size_t ibody_min_offs(struct ext2_ext_attr_entry *first, size_t limit,
			     struct ext2_ext_attr_entry **last)
{
	struct ext2_ext_attr_entry *e;

	for (e = first; !IS_LAST(e); e = NEXT(e))
		if (e->e_value_size && e_offs(e) < limit)
			limit = e_offs(e);
	*last = e;
	return limit;
}

/* Close the gap of @here's old value (@old_size padded); values below it
 * move up.  The new lowest offset. */
static size_t ibody_close_gap(struct ext2_ext_attr_entry *first,
			      struct ext2_ext_attr_entry *here,
			      size_t min_offs, size_t old_size)
{
	unsigned char *base = (unsigned char *)first;
	size_t offs = e_offs(here);
	unsigned char *first_val = base + min_offs;
	struct ext2_ext_attr_entry *e;

	memmove(first_val + old_size, first_val,
		(size_t)(base + offs - first_val));
	memset(first_val, 0, old_size);
	for (e = first; !IS_LAST(e); e = NEXT(e)) {
		size_t o = e_offs(e);

		if (e->e_value_size && o < offs)
			set_offs(e, o + old_size);
	}
	return min_offs + old_size;
}

errcode_t xattr_ibody_set(unsigned char *tail, size_t tail_size,
			  const struct xattr_disk *d, int remove)
{
	struct ext2_ext_attr_entry *first = ibody_first(tail), *here, *last;
	unsigned char *base = (unsigned char *)first;
	size_t min_offs = tail_size - 4, old_size = 0, new_size, free_space;
	size_t len = EXT2_EXT_ATTR_LEN(d->name_len);
	int found;

	if (ext2fs_le32_to_cpu(*ibody_magic(tail)) != EXT2_EXT_ATTR_MAGIC)
		memset(first, 0, 4);	/* an empty table */
	here = ibody_find(first, tail + tail_size, d->index, d->name,
			  d->name_len, &found);
	if (!found && remove)
		return 0;
	if (found)
		old_size = EXT2_EXT_ATTR_SIZE(e_size(here));
	new_size = remove ? 0 : EXT2_EXT_ATTR_SIZE(d->size);
	if (new_size && new_size == old_size) {
		/* the value is replaced where it stands */
		unsigned char *val = base + e_offs(here);

		here->e_value_size = ext2fs_cpu_to_le32((uint32_t)d->size);
		memset(val, 0, new_size);
		memcpy(val, d->value, d->size);
		goto done;
	}
	min_offs = ibody_min_offs(first, min_offs, &last);
	if (!remove) {
		free_space = min_offs - BYTES(first, last) - 4;
		if (found)
			free_space += len + old_size;
		if (free_space < len + new_size)
			return ORLOV_ERR_XATTR_TOO_BIG;
	}
	if (found && here->e_value_size)
		min_offs = ibody_close_gap(first, here, min_offs, old_size);
	if (remove) {
		last = (struct ext2_ext_attr_entry *)((char *)last - len);
		memmove(here, (char *)here + len, BYTES(here, last) + 4);
		memset(last, 0, len);
	} else if (!found) {
		insert_entry(here, last, 4, d);
	} else {
		set_offs(here, 0);
		here->e_value_size = 0;
	}
	if (!remove) {
		if (d->size) {
			unsigned char *val = base + min_offs - new_size;

			set_offs(here, min_offs - new_size);
			memset(val, 0, new_size);
			memcpy(val, d->value, d->size);
		}
		here->e_value_size = ext2fs_cpu_to_le32((uint32_t)d->size);
	}
done:
	/* ext4_xattr_ibody_set: the magic says whether anything is left */
	*ibody_magic(tail) = ext2fs_cpu_to_le32(IS_LAST(first) ? 0 :
						EXT2_EXT_ATTR_MAGIC);
	return 0;
}

int xattr_ibody_empty(const unsigned char *tail, size_t tail_size)
{
	return tail_size < 8 ||
	       ext2fs_le32_to_cpu(*ibody_magic(tail)) != EXT2_EXT_ATTR_MAGIC ||
	       IS_LAST(ibody_first(tail));
}

int xattr_ibody_valid(const unsigned char *tail, size_t tail_size)
{
	const unsigned char *end = tail + tail_size;
	const struct ext2_ext_attr_entry *e;
	size_t area = tail_size - 4;

	if (tail_size < 8)
		return 0;
	if (ext2fs_le32_to_cpu(*ibody_magic(tail)) != EXT2_EXT_ATTR_MAGIC)
		return 1;	/* no attributes: the rest is not read */
	for (e = ibody_first(tail);; e = NEXT(e)) {
		size_t offs, size;

		if ((const unsigned char *)e + 4 > end)
			return 0;
		if (IS_LAST(e))
			return 1;
		if ((const unsigned char *)(e + 1) > end ||
		    (const unsigned char *)NEXT(e) + 4 > end ||
		    e->e_value_inum)
			return 0;
		offs = e_offs(e);
		size = e_size(e);
		if (size && (offs > area || size > area - offs))
			return 0;
	}
}
