/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Extended attributes as the drivers store them: ext2 keeps none inside
 * the inode, only in one external block (fs/ext2/xattr.c); ext4 also in
 * the inode after i_extra_isize (fs/ext4/xattr.c); both keep POSIX ACLs in
 * their own compact on-disk form (fs/ext2/acl.c).
 */
#ifndef ORLOV_XATTR_H
#define ORLOV_XATTR_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>
#include <ext2fs/ext2_fs.h>
#include <ext2fs/ext2_ext_attr.h>

#include "lib/xattr_name.h"

/* An attribute as a source gives it (lib/src_xattr.h) */
struct src_xattr;
/*
 * How ext2_xattr_hash_entry reads a name's bytes: as plain char, signed on
 * x86 kernels up to 6.1, unsigned on arm64 and, since Linux 6.2 builds
 * with -funsigned-char, on every architecture.  Names with bytes over 0x7f
 * hash differently, and so do the blocks holding them (h_hash), which
 * decides which blocks the mbcache offers for sharing.
 */
enum name_hash { NAME_HASH_SIGNED, NAME_HASH_UNSIGNED };

/* One attribute as ext2 stores it: a name index, the name without its
 * prefix, and the value in disk form (POSIX ACLs converted). */
struct xattr_disk {
	int index;
	const char *name;
	size_t name_len;
	unsigned char *value;
	size_t size;
	int owned;		/* value is a converted ACL, freed with the entry */
};

/* ORLOV_ERR_BAD_XATTR for a name or ACL ext2 cannot store. */
errcode_t xattr_to_disk(const struct src_xattr *x, struct xattr_disk *d);
void xattr_disk_free(struct xattr_disk *d);
/* The order of ext2's entry table (index, name length, name): the order in
 * which the replay, and so the tool, sets a file's attributes. */
void xattr_disk_sort(struct xattr_disk *d, size_t n);

/* An empty new block: magic, refcount 1, h_blocks 1. */
void xattr_block_init(unsigned char *block, uint32_t block_size);
/*
 * ext2_xattr_set's edit of a block image: insert @d or replace its value
 * (or with @remove, delete it), moving values and offsets exactly as the
 * driver does, then rehash.  ORLOV_ERR_XATTR_TOO_BIG when it does not fit.
 */
errcode_t xattr_block_set(unsigned char *block, uint32_t block_size,
			  const struct xattr_disk *d, int remove,
			  enum name_hash nh);
int xattr_block_is_empty(const unsigned char *block);
int xattr_block_has(const unsigned char *block, const struct xattr_disk *d);
/* The value of attribute (@index, @name) in @block, or NULL. */
const unsigned char *xattr_block_get(const unsigned char *block, int index,
				     const char *name, size_t name_len,
				     size_t *size);
/* What ext2_xattr_header_valid and ext2_xattr_entry_valid accept. */
int xattr_block_valid(const unsigned char *block, uint32_t block_size);
/* ext2_xattr_cmp: 0 when both hold the same entries and values (their
 * placement in the block may differ). */
int xattr_block_cmp(const unsigned char *a, const unsigned char *b);
uint32_t xattr_block_refcount(const unsigned char *block);
void xattr_block_set_refcount(unsigned char *block, uint32_t refs);

/*
 * The attribute block for @xattrs set one by one, in table order, into a
 * new block (@block_size bytes).  ORLOV_ERR_XATTR_TOO_BIG when they do not
 * fit, ORLOV_ERR_BAD_XATTR for a name ext2 cannot store (*bad names it).
 */
errcode_t xattr_build_block(const struct src_xattr *xattrs, size_t n,
			    unsigned char *block, uint32_t block_size,
			    enum name_hash nh, const char **bad);

/* The block hash (h_hash): 0 means never shared. */
uint32_t xattr_block_hash(const unsigned char *block);

/* Entry hash over a name and its in-block value (libext2fs's, signed or
 * not: @value is read in 4-byte words up to its padding, as in a block). */
uint32_t xattr_entry_hash(const char *name, size_t name_len,
			  const unsigned char *value, size_t value_size,
			  enum name_hash nh);

/*
 * ext4's attributes inside the inode (after i_extra_isize): @tail is the
 * ibody header (magic) and the unsorted entry table with its values at
 * the end, @tail_size bytes.  Set, replace or remove as ext4_xattr_set_entry
 * does in the inode; ORLOV_ERR_XATTR_TOO_BIG when it does not fit (the
 * attribute then goes to the block).  Entry hashes stay 0 in the inode.
 */
errcode_t xattr_ibody_set(unsigned char *tail, size_t tail_size,
			  const struct xattr_disk *d, int remove);
/* No attribute in the inode (no magic, or the end of the table first). */
int xattr_ibody_empty(const unsigned char *tail, size_t tail_size);
/* What ext4's xattr_check_inode accepts (no value in another inode). */
int xattr_ibody_valid(const unsigned char *tail, size_t tail_size);
const unsigned char *xattr_ibody_get(const unsigned char *tail, size_t tail_size,
				     int index, const char *name,
				     size_t name_len, size_t *size);

#endif
