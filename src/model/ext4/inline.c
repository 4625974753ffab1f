// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ext4's inline data, after fs/ext4/inline.c (Linux 6.1; 6.12's is the
 * same in every function modelled here).  The attribute space is the
 * model's copy of the inode past i_extra_isize (xattr.h's ibody): the
 * ibody header (magic), then the entry table, values at its end.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/ext4/inline.h"
#include "model/dirent.h"
#include "model/dirleaf.h"
#include "model/xattr.h"
#include <ext2fs/ext2fs.h>
#include "lib/orlov_err.h"

#define SYSTEM_INDEX 7		/* EXT4_XATTR_INDEX_SYSTEM */
static const char system_data[] = "data";	/* EXT4_XATTR_SYSTEM_DATA */
#define SYSTEM_DATA_LEN (sizeof(system_data) - 1)
#define ROUND EXT2_EXT_ATTR_ROUND

static const struct ext2_ext_attr_entry *first_entry(const unsigned char *tail)
{
	return (const struct ext2_ext_attr_entry *)(tail + 4);
}

static int has_magic(const unsigned char *tail, size_t tail_size)
{
	return tail_size >= 8 &&
	       ext2fs_le32_to_cpu(*(const __u32 *)tail) == EXT2_EXT_ATTR_MAGIC;
}

static int is_system_data(const struct ext2_ext_attr_entry *e)
{
	return e->e_name_index == SYSTEM_INDEX &&
	       e->e_name_len == SYSTEM_DATA_LEN &&
	       !memcmp(e + 1, system_data, SYSTEM_DATA_LEN);
}

size_t get_max_inline_xattr_value_size(const unsigned char *tail,
				       size_t tail_size)
{
	const struct ext2_ext_attr_entry *e, *data = NULL;
	const unsigned char *end = tail + tail_size;
	long min_offs, free_space;

	/* EXT4_INODE_HAS_XATTR_SPACE */
	if (!tail || tail_size < 8)
		return 0;
	min_offs = (long)tail_size - 4;
	if (!has_magic(tail, tail_size)) {
		/* !EXT4_STATE_XATTR: the entry, its name and a terminator */
		free_space = min_offs - EXT2_EXT_ATTR_LEN(SYSTEM_DATA_LEN) -
			     ROUND - 4;
		return free_space > 0 ? EXT2_EXT_ATTR_SIZE(free_space) : 0;
	}
	for (e = first_entry(tail); !EXT2_EXT_IS_LAST_ENTRY(e);
	     e = EXT2_EXT_ATTR_NEXT(e)) {
		if ((const unsigned char *)EXT2_EXT_ATTR_NEXT(e) >= end)
			return 0;	/* corrupt: the kernel says 0 */
		if (!e->e_value_inum && e->e_value_size &&
		    ext2fs_le16_to_cpu(e->e_value_offs) < min_offs)
			min_offs = ext2fs_le16_to_cpu(e->e_value_offs);
		if (is_system_data(e))
			data = e;
	}
	free_space = min_offs -
		     ((const unsigned char *)e - (const unsigned char *)
		      first_entry(tail)) - 4;
	/* i_inline_off: what the value holds now is its own */
	if (data)
		free_space += EXT2_EXT_ATTR_SIZE(
			ext2fs_le32_to_cpu(data->e_value_size));
	else
		free_space = free_space - EXT2_EXT_ATTR_LEN(SYSTEM_DATA_LEN) >
			     ROUND ? EXT2_EXT_ATTR_SIZE(free_space -
			     EXT2_EXT_ATTR_LEN(SYSTEM_DATA_LEN) - ROUND) : 0;
	return free_space > 0 ? (size_t)free_space : 0;
}

size_t ext4_get_max_inline_size(const unsigned char *tail, size_t tail_size)
{
	size_t v = get_max_inline_xattr_value_size(tail, tail_size);

	return v ? v + EXT4_MIN_INLINE_DATA_SIZE : 0;
}

unsigned char *ext4_inline_value(unsigned char *tail, size_t tail_size,
				 size_t *size)
{
	/* EXT4_INODE_HAS_XATTR_SPACE: none without the header and a
	 * terminator (128-byte inodes have no tail at all) */
	if (!has_magic(tail, tail_size))
		return NULL;
	return (unsigned char *)xattr_ibody_get(tail, tail_size, SYSTEM_INDEX,
						system_data, SYSTEM_DATA_LEN,
						size);
}

/* ext4_xattr_ibody_set of system.data with @size bytes of @value. */
static errcode_t set_data(unsigned char *tail, size_t tail_size,
			  unsigned char *value, size_t size, int remove)
{
	struct xattr_disk d = {
		.index = SYSTEM_INDEX, .name = system_data,
		.name_len = SYSTEM_DATA_LEN, .value = value, .size = size,
	};

	return xattr_ibody_set(tail, tail_size, &d, remove);
}

errcode_t ext4_prepare_inline_data(unsigned char *tail, size_t tail_size,
				   size_t len, int *fits)
{
	size_t old = 0, want = len > EXT4_MIN_INLINE_DATA_SIZE ?
			      len - EXT4_MIN_INLINE_DATA_SIZE : 0;
	unsigned char *cur = ext4_inline_value(tail, tail_size, &old);
	unsigned char *value;
	errcode_t err;

	*fits = 0;
	if (ext4_get_max_inline_size(tail, tail_size) < len)
		return 0;
	if (cur && want <= old) {
		*fits = 1;	/* ext4_update_inline_data: room already */
		return 0;
	}
	value = calloc(1, want + 1);
	if (!value)
		return ENOMEM;
	if (cur)
		memcpy(value, cur, old);
	err = set_data(tail, tail_size, value, want, 0);
	free(value);
	if (err == ORLOV_ERR_XATTR_TOO_BIG)
		return 0;
	*fits = !err;
	return err;
}

errcode_t ext4_try_create_inline_dir(struct dirbuf *d, uint32_t parent,
				     int *fits)
{
	unsigned char *de = d->inl + EXT4_INLINE_DOTDOT_SIZE;
	errcode_t err = ext4_prepare_inline_data(d->map.ibody,
						 d->map.ibody_size,
						 EXT4_MIN_INLINE_DATA_SIZE,
						 fits);

	if (err || !*fits)
		return err;
	/* only ".."'s inode, then one empty entry over the rest */
	memset(d->inl, 0, sizeof(d->inl));
	put_le32(d->inl, parent);
	de_set_rec_len(de, EXT4_MIN_INLINE_DATA_SIZE - EXT4_INLINE_DOTDOT_SIZE);
	d->inline_dir = 1;
	return 0;
}

/* ext4_find_dest_de then ext4_insert_dentry in @size bytes at @buf. */
static int add_dirent_to_inline(struct dirbuf *d, unsigned char *buf,
				uint32_t size, const char *name, size_t len,
				uint32_t ino, unsigned int ftype)
{
	uint32_t off, reclen = DIR_REC_LEN(len);

	for (off = 0; off + reclen <= size; off += rec_len(buf + off, size)) {
		if (rec_len(buf + off, size) < DE_HEAD)
			return 0;
		if (entry_room(buf + off, size) >= reclen) {
			dirleaf_insert_at(d, size, buf + off, name, len, ino,
					  ftype);
			return 1;
		}
	}
	return 0;
}

/* ext4_update_final_de: the last entry of @old_size bytes stretched to
 * @new_size; with none, one empty entry over them. */
static void update_final_de(unsigned char *buf, uint32_t old_size,
			    uint32_t new_size)
{
	uint32_t off = 0, last = 0;

	if (!old_size) {
		put_le32(buf, 0);
		de_set_rec_len(buf, new_size);
		return;
	}
	while (off < old_size) {
		uint32_t rl = rec_len(buf + off, old_size);

		last = off;
		if (!rl)
			break;
		off += rl;
	}
	de_set_rec_len(buf + last, rec_len(buf + last, old_size) + new_size -
		       old_size);
}

/* ext4_update_inline_dir: system.data grown to all the room there is,
 * one empty entry over it; *grown 0: -ENOSPC (no more than one name of
 * one byte's room to gain). */
static errcode_t update_inline_dir(struct dirbuf *d, int *grown)
{
	unsigned char *tail = d->map.ibody;
	size_t old = 0, new_size;
	unsigned char *v = ext4_inline_value(tail, d->map.ibody_size, &old);
	errcode_t err;
	int fits;

	*grown = 0;
	new_size = get_max_inline_xattr_value_size(tail, d->map.ibody_size);
	if (!v || new_size <= old + DIR_REC_LEN(1))
		return 0;
	err = ext4_prepare_inline_data(tail, d->map.ibody_size,
				       new_size + EXT4_MIN_INLINE_DATA_SIZE,
				       &fits);
	if (err || !fits)
		return err;
	v = ext4_inline_value(tail, d->map.ibody_size, &new_size);
	update_final_de(v, (uint32_t)old, (uint32_t)new_size);
	*grown = 1;
	return 0;
}

/*
 * ext4_convert_inline_data_nolock for a directory: system.data removed
 * (ext4_destroy_inline_data_nolock: the attribute space closes up, the
 * inode takes extents), logical block 0 mapped as any directory's first
 * block, then ext4_finish_convert_inline_dir: "." and ".." of 12 bytes
 * each, the inline entries as they were, the last stretched to the end.
 */
static errcode_t convert_inline_dir(struct fs_state *fs, struct dirbuf *d)
{
	size_t vsize = 0;
	unsigned char *v = ext4_inline_value(d->map.ibody, d->map.ibody_size,
					     &vsize);
	uint32_t dot = DIR_REC_LEN(1), head = 2 * dot;
	uint32_t isize = EXT4_MIN_INLINE_DATA_SIZE + (uint32_t)vsize;
	uint32_t parent = get_le32(d->inl);
	unsigned char *buf = malloc(isize), *blk;
	errcode_t err;

	if (!buf)
		return ENOMEM;
	memcpy(buf, d->inl, EXT4_MIN_INLINE_DATA_SIZE);
	if (vsize)
		memcpy(buf + EXT4_MIN_INLINE_DATA_SIZE, v, vsize);
	err = set_data(d->map.ibody, d->map.ibody_size, NULL, 0, 1);
	if (!err) {
		d->inline_dir = 0;
		memset(d->inl, 0, sizeof(d->inl));
		err = dirleaf_new_block(fs, d, &blk);
	}
	if (err) {
		free(buf);
		return err;
	}
	/* ext4_init_dot_dotdot with dotdot_real_len: ".." of its own size */
	de_set_rec_len(blk, dot);
	dirleaf_set_entry(blk, d->map.ino, ".", 1, EXT2_FT_DIR, d->filetype);
	de_set_rec_len(blk + dot, dot);
	dirleaf_set_entry(blk + dot, parent, "..", 2, EXT2_FT_DIR, d->filetype);
	memcpy(blk + head, buf + EXT4_INLINE_DOTDOT_SIZE,
	       isize - EXT4_INLINE_DOTDOT_SIZE);
	/* the tail dirleaf_new_block wrote stays past dirleaf_top */
	update_final_de(blk, isize - EXT4_INLINE_DOTDOT_SIZE + head,
			dirleaf_top(fs));
	dirleaf_set_room(fs, d, 0, 0);
	free(buf);
	return 0;
}

errcode_t ext4_try_add_inline_entry(struct fs_state *fs, struct dirbuf *d,
				    const char *name, size_t len, uint32_t ino,
				    unsigned int ftype, int *added)
{
	size_t vsize = 0;
	unsigned char *v;
	errcode_t err;
	int grown;

	*added = add_dirent_to_inline(d, d->inl + EXT4_INLINE_DOTDOT_SIZE,
				      EXT4_MIN_INLINE_DATA_SIZE -
				      EXT4_INLINE_DOTDOT_SIZE,
				      name, len, ino, ftype);
	if (*added)
		return 0;
	v = ext4_inline_value(d->map.ibody, d->map.ibody_size, &vsize);
	if (v && !vsize) {
		err = update_inline_dir(d, &grown);
		if (err)
			return err;
		v = ext4_inline_value(d->map.ibody, d->map.ibody_size, &vsize);
	}
	if (v && vsize) {
		*added = add_dirent_to_inline(d, v, (uint32_t)vsize, name, len,
					      ino, ftype);
		if (*added)
			return 0;
	}
	return convert_inline_dir(fs, d);
}

errcode_t ext4_inline_for_each(const struct dirbuf *d,
			       errcode_t (*fn)(void *arg, const char *name,
					       size_t len, uint32_t ino),
			       void *arg)
{
	size_t vsize = 0;
	unsigned char *v = ext4_inline_value(d->map.ibody, d->map.ibody_size,
					     &vsize);
	errcode_t err = dirleaf_for_each(d->inl + EXT4_INLINE_DOTDOT_SIZE,
					 EXT4_MIN_INLINE_DATA_SIZE -
					 EXT4_INLINE_DOTDOT_SIZE, fn, arg);

	if (!err && v && vsize)
		err = dirleaf_for_each(v, (uint32_t)vsize, fn, arg);
	return err;
}

uint32_t ext4_inline_dir_size(const struct dirbuf *d)
{
	size_t vsize = 0;

	ext4_inline_value(d->map.ibody, d->map.ibody_size, &vsize);
	return EXT4_MIN_INLINE_DATA_SIZE + (uint32_t)vsize;
}
