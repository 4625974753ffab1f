// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Read-only, for orlov-layout: what one inode holds: its ordered block
 * list and dump line, a symlink's target, a device's number, its times.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "image/image_read.h"
#include "lib/ftype.h"
#include "lib/keymap.h"
#include "lib/util.h"
/* After ext2fs.h, which defines the __u32 its structures use. */
#include <ext2fs/ext2_ext_attr.h>
#include <ext2fs/ext3_extents.h>
#include "lib/orlov_err.h"

const char *ir_type_name(unsigned int mode)
{
	return ftype_name_of_mode(mode);
}

struct block_collect {
	struct ir_blocks *bl;
	size_t *meta;
	errcode_t err;
};

static int collect_block(ext2_filsys fs, blk64_t *blocknr,
			 e2_blkcnt_t blockcnt, blk64_t ref_blk,
			 int ref_offset, void *priv)
{
	struct block_collect *bc = priv;
	struct ir_blocks *bl = bc->bl;

	if (grow_array(&bl->b, &bl->cap, bl->n + 1, sizeof(*bl->b), 64)) {
		bc->err = ENOMEM;
		return BLOCK_ABORT;
	}
	bl->b[bl->n++] = *blocknr;
	*bc->meta += blockcnt < 0;
	return 0;
}

/* A block map (IND, DIND, TIND), walked by libext2fs. */
static errcode_t indirect_map(ext2_filsys fs, ext2_ino_t ino,
			      struct ir_map *m)
{
	struct block_collect bc = { &m->all, &m->meta, 0 };
	errcode_t err;

	/*
	 * Without BLOCK_FLAG_DEPTH_TRAVERSE each mapping block comes before
	 * the blocks it maps, which is the order the tool allocates them.
	 */
	err = ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY, NULL,
				    collect_block, &bc);
	return err ? err : bc.err;
}

/*
 * An extent tree, walked by us rather than by libext2fs's extent handle:
 * the handle keeps neither the unwritten flag of a block nor checks a
 * child's depth, so a damaged tree would be listed, not refused.
 */
#define EXT_MAX_DEPTH 5		/* EXT4_MAX_EXTENT_DEPTH: ext4_find_extent */

struct ext_walk {
	ext2_filsys fs;
	ext2_ino_t ino;
	struct ir_map *m;
	struct keymap seen;	/* tree blocks met */
};

/* The node being checked: where it is, for the message. */
struct ext_node {
	const struct ext3_extent_header *eh;
	size_t size;		/* bytes it may fill */
	unsigned int depth;	/* what its eh_depth must say */
	int root;		/* in the inode's i_block */
	blk64_t pblk;		/* its block, unless root */
	uint32_t first;		/* its parent's key for it, unless root */
	uint64_t end;		/* its entries map below this logical block */
};

static errcode_t ext_bad(struct ext_walk *w, const struct ext_node *n,
			 errcode_t err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static errcode_t ext_bad(struct ext_walk *w, const struct ext_node *n,
			 errcode_t err, const char *fmt, ...)
{
	char *bad = w->m->bad;
	size_t len;
	va_list ap;

	if (n->root)
		snprintf(bad, sizeof(w->m->bad), "root in the inode: ");
	else
		snprintf(bad, sizeof(w->m->bad), "block %llu: ",
			 (unsigned long long)n->pblk);
	len = strlen(bad);
	va_start(ap, fmt);
	vsnprintf(bad + len, sizeof(w->m->bad) - len, fmt, ap);
	va_end(ap);
	return err;
}

/* A run of @len blocks from @start in the filesystem's data area? */
static int ext_blocks_valid(ext2_filsys fs, uint64_t start, uint64_t len)
{
	return start >= fs->super->s_first_data_block && len &&
	       start + len <= ext2fs_blocks_count(fs->super);
}

/* The header, as __ext4_ext_check reads it (the entries follow). */
static errcode_t ext_check_header(struct ext_walk *w, const struct ext_node *n)
{
	const struct ext3_extent_header *eh = n->eh;
	unsigned int max = (unsigned int)((n->size - sizeof(*eh)) /
					  sizeof(struct ext3_extent));
	unsigned int emax = ext2fs_le16_to_cpu(eh->eh_max);
	unsigned int entries = ext2fs_le16_to_cpu(eh->eh_entries);

	if (ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC)
		return ext_bad(w, n, EXT2_ET_EXTENT_HEADER_BAD,
			       "bad magic 0x%04x",
			       ext2fs_le16_to_cpu(eh->eh_magic));
	if (ext2fs_le16_to_cpu(eh->eh_depth) != n->depth)
		return ext_bad(w, n, EXT2_ET_EXTENT_HEADER_BAD,
			       "depth %u where %u belongs",
			       ext2fs_le16_to_cpu(eh->eh_depth), n->depth);
	if (!emax || emax > max)
		return ext_bad(w, n, EXT2_ET_EXTENT_HEADER_BAD,
			       "room for %u entries, %u at most", emax, max);
	if (entries > emax)
		return ext_bad(w, n, EXT2_ET_EXTENT_HEADER_BAD,
			       "%u entries past the room for %u",
			       entries, emax);
	if (!entries && n->depth)
		return ext_bad(w, n, EXT2_ET_EXTENT_HEADER_BAD,
			       "no entries at depth %u", n->depth);
	return 0;
}

/* The entries of a leaf: in order, in the filesystem, inside the node's
 * range (ext4_valid_extent_entries). */
static errcode_t ext_check_leaf(struct ext_walk *w, const struct ext_node *n)
{
	const struct ext3_extent *ex = EXT_FIRST_EXTENT(n->eh);
	unsigned int i, entries = ext2fs_le16_to_cpu(n->eh->eh_entries);
	uint64_t cur = n->first;

	for (i = 0; i < entries; i++, ex++) {
		uint64_t lblk = ext2fs_le32_to_cpu(ex->ee_block);
		unsigned int len = ext2fs_le16_to_cpu(ex->ee_len);
		uint64_t start = ext2fs_le32_to_cpu(ex->ee_start) |
			(uint64_t)ext2fs_le16_to_cpu(ex->ee_start_hi) << 32;

		if (len > EXT_INIT_MAX_LEN)
			len -= EXT_INIT_MAX_LEN;
		if (!n->root && !i && lblk != n->first)
			return ext_bad(w, n, EXT2_ET_EXTENT_LEAF_BAD,
				       "first extent at %llu, its index says %lu",
				       (unsigned long long)lblk,
				       (unsigned long)n->first);
		if (lblk < cur || lblk + len > n->end || !len ||
		    lblk + len > EXT_MAX_EXTENT_LBLK)
			return ext_bad(w, n, EXT2_ET_EXTENT_LEAF_BAD,
				       "extent %u (logical %llu) out of order",
				       i, (unsigned long long)lblk);
		if (!ext_blocks_valid(w->fs, start, len))
			return ext_bad(w, n, EXT2_ET_EXTENT_LEAF_BAD,
				       "extent %u maps block %llu, outside "
				       "the filesystem", i,
				       (unsigned long long)start);
		cur = lblk + len;
	}
	return 0;
}

static errcode_t ext_check_index(struct ext_walk *w, const struct ext_node *n)
{
	const struct ext3_extent_idx *ix = EXT_FIRST_INDEX(n->eh);
	unsigned int i, entries = ext2fs_le16_to_cpu(n->eh->eh_entries);
	uint64_t cur = n->first;

	for (i = 0; i < entries; i++, ix++) {
		uint64_t lblk = ext2fs_le32_to_cpu(ix->ei_block);
		uint64_t leaf = ext2fs_le32_to_cpu(ix->ei_leaf) |
			(uint64_t)ext2fs_le16_to_cpu(ix->ei_leaf_hi) << 32;

		if (!n->root && !i && lblk != n->first)
			return ext_bad(w, n, EXT2_ET_EXTENT_INDEX_BAD,
				       "first index at %llu, its parent says %lu",
				       (unsigned long long)lblk,
				       (unsigned long)n->first);
		if (lblk < cur || lblk >= n->end)
			return ext_bad(w, n, EXT2_ET_EXTENT_INDEX_BAD,
				       "index %u (logical %llu) out of order",
				       i, (unsigned long long)lblk);
		if (!ext_blocks_valid(w->fs, leaf, 1))
			return ext_bad(w, n, EXT2_ET_EXTENT_INDEX_BAD,
				       "index %u points to block %llu, outside "
				       "the filesystem", i,
				       (unsigned long long)leaf);
		cur = lblk + 1;
	}
	return 0;
}

static errcode_t add_run(struct ir_blocks *bl, blk64_t start, size_t len)
{
	size_t i;

	if (grow_array(&bl->b, &bl->cap, bl->n + len, sizeof(*bl->b), 64))
		return ENOMEM;
	for (i = 0; i < len; i++)
		bl->b[bl->n++] = start + i;
	return 0;
}

static errcode_t ext_walk_node(struct ext_walk *w, const struct ext_node *n);

/* The child of index entry @i of @n: read, checked, walked. */
static errcode_t ext_walk_child(struct ext_walk *w, const struct ext_node *n,
				unsigned int i, unsigned char *buf)
{
	const struct ext3_extent_idx *ix = EXT_FIRST_INDEX(n->eh) + i;
	unsigned int entries = ext2fs_le16_to_cpu(n->eh->eh_entries);
	struct ext_node c;
	size_t pos;
	errcode_t err;

	memset(&c, 0, sizeof(c));
	c.eh = (const struct ext3_extent_header *)buf;
	c.size = w->fs->blocksize;
	c.depth = n->depth - 1;
	c.pblk = ext2fs_le32_to_cpu(ix->ei_leaf) |
		 (uint64_t)ext2fs_le16_to_cpu(ix->ei_leaf_hi) << 32;
	c.first = ext2fs_le32_to_cpu(ix->ei_block);
	c.end = i + 1 < entries ? ext2fs_le32_to_cpu(ix[1].ei_block) : n->end;
	if (keymap_get(&w->seen, c.pblk, &pos))
		return ext_bad(w, n, EXT2_ET_EXTENT_CYCLE,
			       "index %u leads to block %llu again", i,
			       (unsigned long long)c.pblk);
	err = keymap_add(&w->seen, c.pblk, 0);
	if (!err)
		err = add_run(&w->m->all, c.pblk, 1);
	if (err)
		return err;
	w->m->meta++;
	err = io_channel_read_blk64(w->fs->io, c.pblk, 1, buf);
	if (err)
		return err;
	err = ext_check_header(w, &c);
	if (!err && !ext2fs_extent_block_csum_verify(w->fs, w->ino,
			(struct ext3_extent_header *)buf))
		err = ext_bad(w, &c, EXT2_ET_EXTENT_CSUM_INVALID,
			      "checksum does not match");
	return err ? err : ext_walk_node(w, &c);
}

/* @n, its header checked: its entries, then what they map, in order. */
static errcode_t ext_walk_node(struct ext_walk *w, const struct ext_node *n)
{
	unsigned int i, entries = ext2fs_le16_to_cpu(n->eh->eh_entries);
	unsigned char *buf = NULL;
	errcode_t err;

	if (!n->depth) {
		const struct ext3_extent *ex = EXT_FIRST_EXTENT(n->eh);

		err = ext_check_leaf(w, n);
		for (i = 0; !err && i < entries; i++, ex++) {
			unsigned int len = ext2fs_le16_to_cpu(ex->ee_len);
			int unwritten = len > EXT_INIT_MAX_LEN;
			uint64_t start = ext2fs_le32_to_cpu(ex->ee_start) |
				(uint64_t)ext2fs_le16_to_cpu(ex->ee_start_hi) << 32;

			if (unwritten)
				len -= EXT_INIT_MAX_LEN;
			/* Only blocks mapped twice get past what the
			 * filesystem holds: the list stays bounded. */
			if (w->m->all.n + len > ext2fs_blocks_count(w->fs->super))
				return ext_bad(w, n, EXT2_ET_EXTENT_LEAF_BAD,
					       "more blocks mapped than the "
					       "filesystem has");
			err = add_run(&w->m->all, start, len);
			if (!err && unwritten)
				err = add_run(&w->m->unwritten, start, len);
		}
		return err;
	}
	err = ext_check_index(w, n);
	if (err)
		return err;
	err = ext2fs_get_mem(w->fs->blocksize, &buf);
	for (i = 0; !err && i < entries; i++)
		err = ext_walk_child(w, n, i, buf);
	ext2fs_free_mem(&buf);
	return err;
}

static errcode_t extent_map(ext2_filsys fs, ext2_ino_t ino,
			    struct ext2_inode_large *inode, struct ir_map *m)
{
	struct ext_walk w;
	struct ext_node root;
	errcode_t err;

	memset(&w, 0, sizeof(w));
	memset(&root, 0, sizeof(root));
	w.fs = fs;
	w.ino = ino;
	w.m = m;
	m->extents = 1;
	root.eh = (const struct ext3_extent_header *)inode->i_block;
	root.size = sizeof(inode->i_block);
	root.root = 1;
	root.end = EXT_MAX_EXTENT_LBLK + 1;
	/* The root says how deep the tree is; ext4 refuses more than 5. */
	root.depth = ext2fs_le16_to_cpu(root.eh->eh_depth);
	if (ext2fs_le16_to_cpu(root.eh->eh_magic) == EXT3_EXT_MAGIC &&
	    root.depth > EXT_MAX_DEPTH)
		return ext_bad(&w, &root, EXT2_ET_EXTENT_HEADER_BAD,
			       "depth %u, %u at most", root.depth,
			       EXT_MAX_DEPTH);
	err = ext_check_header(&w, &root);
	if (!err)
		err = ext_walk_node(&w, &root);
	keymap_free(&w.seen);
	return err;
}

int ir_extent_error(errcode_t err)
{
	return err == EXT2_ET_EXTENT_HEADER_BAD ||
	       err == EXT2_ET_EXTENT_INDEX_BAD ||
	       err == EXT2_ET_EXTENT_LEAF_BAD ||
	       err == EXT2_ET_EXTENT_CSUM_INVALID ||
	       err == EXT2_ET_EXTENT_CYCLE;
}

errcode_t ir_block_map(ext2_filsys fs, ext2_ino_t ino,
		       struct ext2_inode_large *inode, struct ir_map *out)
{
	errcode_t err;

	memset(out, 0, sizeof(*out));
	/*
	 * Devices keep their number and fast symlinks their target in
	 * i_block, an inline-data inode its first bytes; iterating those
	 * would list garbage "blocks".
	 */
	if (!ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *)inode)) {
		out->inline_data = (inode->i_flags & EXT4_INLINE_DATA_FL) != 0;
		return 0;
	}
	if (inode->i_flags & EXT4_EXTENTS_FL)
		err = extent_map(fs, ino, inode, out);
	else
		err = indirect_map(fs, ino, out);
	if (err) {
		char bad[sizeof(out->bad)];

		memcpy(bad, out->bad, sizeof(bad));
		ir_map_free(out);
		memcpy(out->bad, bad, sizeof(bad));
	}
	return err;
}

void ir_map_free(struct ir_map *m)
{
	ir_blocks_free(&m->all);
	ir_blocks_free(&m->unwritten);
	memset(m, 0, sizeof(*m));
}

void ir_blocks_free(struct ir_blocks *bl)
{
	free(bl->b);
	memset(bl, 0, sizeof(*bl));
}

errcode_t ir_format_blocks(const struct ir_blocks *bl, struct strbuf *out)
{
	size_t i = 0, j;
	errcode_t err;

	if (!bl->n)
		return sb_append(out, "-", 1);
	while (i < bl->n) {
		for (j = i; j + 1 < bl->n && bl->b[j + 1] == bl->b[j] + 1; j++)
			;
		if (j > i)
			err = sb_printf(out, "%s%llu-%llu", i ? "," : "",
					(unsigned long long)bl->b[i],
					(unsigned long long)bl->b[j]);
		else
			err = sb_printf(out, "%s%llu", i ? "," : "",
					(unsigned long long)bl->b[i]);
		if (err)
			return err;
		i = j + 1;
	}
	return 0;
}

errcode_t ir_describe(ext2_filsys fs, ext2_ino_t ino,
		      struct ext2_inode_large *inode, struct strbuf *out)
{
	const char *type = ir_type_name(inode->i_mode);
	struct ir_map m;
	blk64_t acl;
	errcode_t err;

	if (!type)
		return ORLOV_ERR_CORRUPT;
	err = ir_block_map(fs, ino, inode, &m);
	if (err)
		return err;
	err = sb_printf(out, "ino=%lu group=%lu %s blocks=", (unsigned long)ino,
			(unsigned long)((ino - 1) / fs->super->s_inodes_per_group),
			type);
	if (!err)
		err = ir_format_blocks(&m.all, out);
	if (!err && m.unwritten.n)
		err = sb_printf(out, " unwritten=");
	if (!err && m.unwritten.n)
		err = ir_format_blocks(&m.unwritten, out);
	if (!err && m.inline_data)
		err = sb_printf(out, " inline=%llu",
				(unsigned long long)EXT2_I_SIZE(inode));
	ir_map_free(&m);
	acl = ext2fs_file_acl_block(fs, (struct ext2_inode *)inode);
	if (!err && acl) {
		/* The block's bytes count too: its reference count, and a
		 * CRC32C of the whole block, entries and value placement. */
		unsigned char *buf = NULL;

		err = ext2fs_get_mem(fs->blocksize, &buf);
		if (!err)
			err = io_channel_read_blk64(fs->io, acl, 1, buf);
		if (!err)
			err = sb_printf(out, " xattr=%llu xrefs=%lu xcrc=%08lx",
					(unsigned long long)acl,
					(unsigned long)ext2fs_le32_to_cpu(
				((struct ext2_ext_attr_header *)buf)->h_refcount),
					(unsigned long)ext2fs_crc32c_le(~0U, buf,
							fs->blocksize));
		ext2fs_free_mem(&buf);
	}
	return err;
}

errcode_t ir_symlink_target(ext2_filsys fs, ext2_ino_t ino,
			    struct ext2_inode_large *inode, struct strbuf *out)
{
	size_t size = EXT2_I_SIZE(inode);
	ext2_file_t f;
	unsigned int got;
	errcode_t err, err2;
	char *buf;

	sb_truncate(out, 0);
	if (ext2fs_is_fast_symlink((struct ext2_inode *)inode)) {
		if (size >= sizeof(inode->i_block))
			return ORLOV_ERR_CORRUPT;
		return sb_append(out, (const char *)inode->i_block, size);
	}
	if (size >= fs->blocksize)
		return ORLOV_ERR_CORRUPT;
	buf = malloc(size + 1);
	if (!buf)
		return ENOMEM;
	err = ext2fs_file_open2(fs, ino, (struct ext2_inode *)inode, 0, &f);
	if (!err) {
		err = ext2fs_file_read(f, buf, (unsigned int)size, &got);
		if (!err && got != size)
			err = ORLOV_ERR_CORRUPT;
		err2 = ext2fs_file_close(f);
		if (!err)
			err = err2;
	}
	if (!err)
		err = sb_append(out, buf, size);
	free(buf);
	return err;
}

void ir_rdev(const struct ext2_inode_large *inode, unsigned int *major,
	     unsigned int *minor)
{
	uint32_t old = ext2fs_le32_to_cpu(inode->i_block[0]);
	uint32_t nw = ext2fs_le32_to_cpu(inode->i_block[1]);

	/* Old 8:8 encoding in i_block[0]; else the 12:20 one in [1]. */
	if (old) {
		*major = (old >> 8) & 0xff;
		*minor = old & 0xff;
	} else {
		*major = (nw & 0xfff00) >> 8;
		*minor = (nw & 0xff) | ((nw >> 12) & 0xfff00);
	}
}

void ir_inode_time(ext2_filsys fs, const struct ext2_inode_large *inode,
		   enum ir_time which, int64_t *sec, uint32_t *nsec,
		   int *has_nsec)
{
	size_t end, room = 0;
	uint32_t base, extra;

	if (which == IR_MTIME) {
		base = inode->i_mtime;
		extra = inode->i_mtime_extra;
		end = offsetof(struct ext2_inode_large, i_mtime_extra);
	} else {
		base = inode->i_ctime;
		extra = inode->i_ctime_extra;
		end = offsetof(struct ext2_inode_large, i_ctime_extra);
	}
	end += sizeof(uint32_t);
	if (EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE)
		room = EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize;
	*sec = (int32_t)base;
	*nsec = 0;
	*has_nsec = room >= end &&
		    room <= (size_t)EXT2_INODE_SIZE(fs->super);
	if (*has_nsec) {
		*sec += (int64_t)(extra & EXT4_EPOCH_MASK) << 32;
		*nsec = extra >> EXT4_EPOCH_BITS;
	}
}
