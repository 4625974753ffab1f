// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read-only, for orlov-layout: an inode's extended attributes, those in
 * the inode (ext4, mke2fs -d) and those in its block (ext2), checked as
 * the kernel checks them, ACLs in the form getxattr(2) returns.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image/image_read.h"
#include "lib/util.h"
#include "lib/xattr_name.h"
/* After ext2fs.h, which defines the __u32 its structures use. */
#include <ext2fs/ext2_ext_attr.h>
#include "model/acl.h"
#include "model/xattr.h"
#include "lib/orlov_err.h"

/* posix_acl_xattr, the form getxattr(2) returns: version 2, then 8-byte
 * entries (tag, perm, id) throughout. */
#define POSIX_ACL_XATTR_VERSION	2

/*
 * A POSIX ACL as ext2 and ext4 store it (version 1, 4-byte entries for
 * the tags without an id, 8-byte ones for named users and groups), parsed
 * as ext2_acl_from_disk does (acl_from_disk), in the getxattr(2) form:
 * the id of a short entry is ACL_UNDEFINED_ID (0xffffffff).
 */
static errcode_t acl_to_xattr(const unsigned char *v, size_t len,
			      unsigned char **out, size_t *out_len)
{
	struct acl acl;
	unsigned char *x;
	size_t i;
	errcode_t err;

	err = acl_from_disk(v, len, &acl);
	if (err)
		return err == ORLOV_ERR_BAD_XATTR ? ORLOV_ERR_CORRUPT : err;
	x = malloc(4 + 8 * acl.n);
	if (!x) {
		acl_release(&acl);
		return ENOMEM;
	}
	put_le32(x, POSIX_ACL_XATTR_VERSION);
	for (i = 0; i < acl.n; i++) {
		put_le16(x + 4 + 8 * i, acl.e[i].tag);
		put_le16(x + 6 + 8 * i, acl.e[i].perm);
		put_le32(x + 8 + 8 * i, acl.e[i].id);
	}
	*out = x;
	*out_len = 4 + 8 * acl.n;
	acl_release(&acl);
	return 0;
}

/* By name; copies of one name in the order ext4_xattr_get looks for it:
 * the inode's (in table order) before the block's. */
static int xattr_cmp(const void *a, const void *b)
{
	const struct ir_xattr *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->in_inode != y->in_inode)
		return x->in_inode ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The entry table at @off of @buf (@end bytes), values at @vbase + their
 * offsets, within @vlimit bytes of @vbase (the block's start, or in the
 * inode the first entry).  Every offset and length is checked here again,
 * whatever the caller's validity check said.
 */
static errcode_t parse_xattr_entries(const unsigned char *buf, size_t off,
				     size_t end, const unsigned char *vbase,
				     size_t vlimit, int in_inode,
				     struct ir_xattrs *out, size_t *cap)
{
	for (;;) {
		const unsigned char *p = buf + off, *val;
		const struct ext2_ext_attr_entry *e =
			(const struct ext2_ext_attr_entry *)p;
		size_t nlen, voff, vlen, plen;
		const char *prefix;
		struct ir_xattr *x;
		int is_acl;
		errcode_t err;

		if (off > end || end - off < 4)
			return ORLOV_ERR_CORRUPT;
		if (get_le32(p) == 0)
			return 0;	/* the table ends in 4 zero bytes */
		if (end - off < sizeof(struct ext2_ext_attr_entry))
			return ORLOV_ERR_CORRUPT;
		nlen = e->e_name_len;
		voff = ext2fs_le16_to_cpu(e->e_value_offs);
		vlen = ext2fs_le32_to_cpu(e->e_value_size);
		/* No value in another inode (ea_inode); an empty value's
		 * offset is not looked at (ext4's check_xattrs). */
		if (EXT2_EXT_ATTR_LEN(nlen) > end - off || e->e_value_inum ||
		    (vlen && (voff > vlimit || vlen > vlimit - voff)))
			return ORLOV_ERR_CORRUPT;
		prefix = xattr_index_prefix(e->e_name_index, &is_acl);
		if (!prefix)
			return ORLOV_ERR_CORRUPT;
		if (grow_array(&out->a, cap, out->n + 1, sizeof(*out->a), 8))
			return ENOMEM;
		x = &out->a[out->n];
		memset(x, 0, sizeof(*x));
		plen = strlen(prefix);
		x->name = malloc(plen + nlen + 1);
		if (!x->name)
			return ENOMEM;
		x->in_inode = in_inode;
		x->seq = out->n;
		out->n++;
		memcpy(x->name, prefix, plen);
		memcpy(x->name + plen, EXT2_EXT_ATTR_NAME(e), nlen);
		x->name[plen + nlen] = '\0';
		val = vlen ? vbase + voff : vbase;
		if (is_acl) {
			err = acl_to_xattr(val, vlen, &x->value, &x->len);
			if (err)
				return err;
		} else {
			x->value = malloc(vlen ? vlen : 1);
			if (!x->value)
				return ENOMEM;
			memcpy(x->value, val, vlen);
			x->len = vlen;
		}
		off += EXT2_EXT_ATTR_LEN(nlen);
	}
}

/*
 * ext4's attributes in a large inode: an ibody header (the magic) at
 * 128 + i_extra_isize, then an unsorted entry table ending in 4 zero
 * bytes, the values at the end of the inode, their offsets counted from
 * the first entry.  ext2 never writes any (and does not read them).
 */
static errcode_t read_ibody_xattrs(ext2_filsys fs, ext2_ino_t ino,
				   struct ir_xattrs *out, size_t *cap)
{
	size_t isz = EXT2_INODE_SIZE(fs->super), extra, start;
	unsigned char *raw;
	errcode_t err;

	if (isz <= EXT2_GOOD_OLD_INODE_SIZE)
		return 0;
	/* The whole inode, as it lies in the table: struct
	 * ext2_inode_large stops short of the attributes. */
	raw = calloc(1, isz);
	if (!raw)
		return ENOMEM;
	err = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)raw,
				     (int)isz);
	if (err)
		goto out;
	extra = ext2fs_le16_to_cpu(((const struct ext2_inode_large *)raw)->
				   i_extra_isize);
	/* ext4_iget: nothing after a zero i_extra_isize is read; one past
	 * the inode or not a multiple of 4 makes the inode corrupt. */
	if (!extra)
		goto out;
	if (extra & 3 || extra > isz - EXT2_GOOD_OLD_INODE_SIZE) {
		err = ORLOV_ERR_CORRUPT;
		goto out;
	}
	start = EXT2_GOOD_OLD_INODE_SIZE + extra;
	/* No room for the magic, or no magic: no attributes. */
	if (isz - start < 4 || get_le32(raw + start) != EXT2_EXT_ATTR_MAGIC)
		goto out;
	if (!xattr_ibody_valid(raw + start, isz - start))
		err = ORLOV_ERR_CORRUPT;
	else
		err = parse_xattr_entries(raw, start + 4, isz, raw + start + 4,
					  isz - start - 4, 1, out, cap);
out:
	free(raw);
	return err;
}

/* The external attribute block (i_file_acl), the only place ext2 reads. */
static errcode_t read_block_xattrs(ext2_filsys fs,
				   const struct ext2_inode_large *inode,
				   struct ir_xattrs *out, size_t *cap)
{
	blk64_t blk = ext2fs_file_acl_block(fs, (const struct ext2_inode *)inode);
	unsigned char *buf;
	errcode_t err;

	if (!blk)
		return 0;
	if (blk < fs->super->s_first_data_block ||
	    blk >= ext2fs_blocks_count(fs->super))
		return ORLOV_ERR_CORRUPT;
	err = ext2fs_get_mem(fs->blocksize, &buf);
	if (err)
		return err;
	err = io_channel_read_blk64(fs->io, blk, 1, buf);
	/* The header (magic, h_blocks 1) and entries as ext2 checks them */
	if (!err && !xattr_block_valid(buf, fs->blocksize))
		err = ORLOV_ERR_CORRUPT;
	if (!err)
		err = parse_xattr_entries(buf, sizeof(struct ext2_ext_attr_header),
					  fs->blocksize, buf, fs->blocksize, 0,
					  out, cap);
	ext2fs_free_mem(&buf);
	return err;
}

/*
 * An inline-data inode keeps the bytes past i_block in an in-inode entry
 * "system.data": its contents, not an attribute (ext4 has no handler for
 * the name, so listxattr and getxattr never show it).
 */
static void drop_inline_data(struct ir_xattrs *x)
{
	size_t i;

	for (i = 0; i < x->n; i++) {
		if (!x->a[i].in_inode || strcmp(x->a[i].name, "system.data"))
			continue;
		free(x->a[i].name);
		free(x->a[i].value);
		memmove(&x->a[i], &x->a[i + 1], (x->n - i - 1) * sizeof(*x->a));
		x->n--;
		return;
	}
}

errcode_t ir_read_xattrs(ext2_filsys fs, ext2_ino_t ino,
			 const struct ext2_inode_large *inode,
			 struct ir_xattrs *out)
{
	unsigned int corrupt = 0;
	size_t cap = 0;
	errcode_t err;

	memset(out, 0, sizeof(*out));
	/* Both places are looked at even when the first is corrupt, so that
	 * the caller can tell which one is. */
	err = read_ibody_xattrs(fs, ino, out, &cap);
	if (err == ORLOV_ERR_CORRUPT) {
		corrupt |= IR_XATTR_BAD_INODE;
		err = 0;
	}
	if (!err) {
		err = read_block_xattrs(fs, inode, out, &cap);
		if (err == ORLOV_ERR_CORRUPT) {
			corrupt |= IR_XATTR_BAD_BLOCK;
			err = 0;
		}
	}
	if (!err && corrupt)
		err = ORLOV_ERR_CORRUPT;
	if (err) {
		ir_xattrs_free(out);
		out->corrupt = corrupt;
		return err;
	}
	if (inode->i_flags & EXT4_INLINE_DATA_FL)
		drop_inline_data(out);
	if (out->n > 1)
		qsort(out->a, out->n, sizeof(*out->a), xattr_cmp);
	return 0;
}

void ir_xattrs_free(struct ir_xattrs *x)
{
	size_t i;

	for (i = 0; i < x->n; i++) {
		free(x->a[i].name);
		free(x->a[i].value);
	}
	free(x->a);
	memset(x, 0, sizeof(*x));
}
