// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The commit as one transaction of the image's own ext3 journal (JBD2),
 * written as the kernel would write it: the log, then the blocks home.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image/capture.h"
#include "image/image_int.h"
#include "image/io_guard.h"
#include "image/jbd2.h"
#include "lib/orlov_err.h"

#define be32(x) ext2fs_be32_to_cpu(x)

void journal_free(struct journal *j)
{
	free(j->map);
	free(j->sb);
}

/* The journal's incompatible features (none before version 2). */
static uint32_t jincompat(const journal_superblock_t *jsb)
{
	return be32(jsb->s_header.h_blocktype) == JBD2_SUPERBLOCK_V2 ?
	       be32(jsb->s_feature_incompat) : 0;
}

/* Checksums v3?  mke2fs makes none; the ext4 driver turns them on at
 * mount when the filesystem has metadata_csum. */
static int jcsum(const journal_superblock_t *jsb)
{
	return (jincompat(jsb) & JBD2_FEATURE_INCOMPAT_CSUM_V3) != 0;
}

/* journal_tag_bytes */
static uint32_t tag_bytes(const journal_superblock_t *jsb)
{
	if (jcsum(jsb))
		return sizeof(journal_block_tag3_t);
	return jincompat(jsb) & JBD2_FEATURE_INCOMPAT_64BIT ?
	       sizeof(journal_block_tag_t) : JBD2_TAG_SIZE32;
}

/* j_csum_seed: every checksum but the superblock's starts from it. */
static uint32_t jseed(const journal_superblock_t *jsb)
{
	return ext2fs_crc32c_le(~0U, jsb->s_uuid, sizeof(jsb->s_uuid));
}

/* jbd2_superblock_csum, into s_checksum */
static void jsb_csum_set(journal_superblock_t *jsb)
{
	jsb->s_checksum = 0;
	jsb->s_checksum = ext2fs_cpu_to_be32(
		ext2fs_crc32c_le(~0U, (unsigned char *)jsb, sizeof(*jsb)));
}

/* A journal superblock the commit can write through: version 1 or 2,
 * empty, of the filesystem's block size, inside the journal inode's
 * @blocks, with no feature but revoke, 64-bit tags and checksums v3
 * (crc32c, and the superblock's own checksum right). */
static int journal_usable(const journal_superblock_t *jsb, uint32_t bs,
			  uint64_t blocks)
{
	uint32_t type = be32(jsb->s_header.h_blocktype);
	journal_superblock_t copy;

	if (be32(jsb->s_header.h_magic) != JBD2_MAGIC_NUMBER ||
	    (type != JBD2_SUPERBLOCK_V2 && type != JBD2_SUPERBLOCK_V1) ||
	    be32(jsb->s_blocksize) != bs || be32(jsb->s_start) != 0 ||
	    be32(jsb->s_first) < 1 || be32(jsb->s_maxlen) > blocks)
		return 0;
	if (type != JBD2_SUPERBLOCK_V2)
		return 1;
	if (be32(jsb->s_feature_compat) || be32(jsb->s_feature_ro_compat) ||
	    (jincompat(jsb) & ~(uint32_t)(JBD2_FEATURE_INCOMPAT_REVOKE |
					  JBD2_FEATURE_INCOMPAT_64BIT |
					  JBD2_FEATURE_INCOMPAT_CSUM_V3)))
		return 0;
	if (!jcsum(jsb))
		return 1;
	copy = *jsb;
	jsb_csum_set(&copy);
	return jsb->s_checksum_type == JBD2_CRC32C_CHKSUM &&
	       copy.s_checksum == jsb->s_checksum;
}

/* Blocks of one descriptor: its header, then tags of @tag bytes, the
 * first followed by the journal's UUID, then @tail bytes. */
static size_t tags_per(uint32_t bs, uint32_t tag, uint32_t tail)
{
	return 1 + (bs - sizeof(journal_header_t) - tag -
		    sizeof(((journal_superblock_t *)0)->s_uuid) - tail) / tag;
}

/* ... in journal @jsb's descriptors */
static size_t tags_per_descriptor(const journal_superblock_t *jsb, uint32_t bs)
{
	return tags_per(bs, tag_bytes(jsb), jcsum(jsb) ?
			sizeof(struct jbd2_journal_block_tail) : 0);
}

/* The bitmap blocks the flush writes (commit_writes_bitmap). */
static size_t bitmap_blocks(const struct image *img, const struct fs_state *fs)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < img->fs->group_desc_count; i++)
		n += (size_t)commit_writes_bitmap(img->fs, fs, i, 0) +
		     (size_t)commit_writes_bitmap(img->fs, fs, i, 1);
	return n;
}

/* commit_bound with @per tags a descriptor */
static size_t bound_for(const struct image *img, const struct fs_state *fs,
			size_t per)
{
	ext2_filsys e = img->fs;
	const struct inode_cache *c = &img->icache;
	size_t n = img->held.n + bitmap_blocks(img, fs) + 8, i;
	uint32_t last = UINT32_MAX, ipb = e->blocksize / EXT2_INODE_SIZE(e->super);
	struct icache_it it = { 0, 0 };
	uint32_t ino;

	/* superblocks and descriptor tables, each copy */
	for (i = 0; i < e->group_desc_count; i++)
		if (ext2fs_bg_has_super(e, (dgrp_t)i))
			n += 1 + e->desc_blocks + e->super->s_reserved_gdt_blocks;
	/* inode table blocks (icache_next goes in inode order) */
	for (ino = icache_next(c, &it); ino; ino = icache_next(c, &it)) {
		uint32_t b = (ino - 1) / ipb;

		n += b != last;
		last = b;
	}
	return n + n / (per - 1) + 2;
}

/* A bound on the blocks the commit writes in place, before it is made:
 * the journal must hold them all in one transaction. */
size_t commit_bound(const struct image *img, const struct fs_state *fs)
{
	return bound_for(img, fs,
			 tags_per(img->fs->blocksize, JBD2_TAG_SIZE32, 0));
}

/*
 * The image's own journal, if a transaction of @need blocks can go
 * through it: internal, empty, with what journal_usable allows (what
 * mke2fs -t ext3 makes, and checksums v3 as a mount -t ext4 leaves
 * them; 64-bit tags, which a filesystem past 2^32 blocks needs, the
 * journal's superblock given them here if need be), and long enough.  0
 * with j->map NULL when not.
 */
static errcode_t journal_check(struct image *img, const struct fs_state *fs,
			       size_t need, struct journal *j, int map)
{
	ext2_filsys e = img->fs;
	struct ext2_inode inode;
	uint32_t bs = e->blocksize, i;
	int usable;
	errcode_t err;

	memset(j, 0, sizeof(*j));
	if (!ext2fs_has_feature_journal(e->super) || !e->super->s_journal_inum)
		return 0;
	err = ext2fs_read_inode(e, e->super->s_journal_inum, &inode);
	if (err)
		return err;
	if (EXT2_I_SIZE(&inode) / bs < 1024 || EXT2_I_SIZE(&inode) / bs > (1U << 24))
		return 0;
	j->sb = malloc(bs);
	j->map = calloc(1, sizeof(*j->map));
	if (!j->sb || !j->map)
		return ENOMEM;
	err = ext2fs_bmap2(e, e->super->s_journal_inum, &inode, NULL, 0, 0,
			   NULL, &j->map[0]);
	if (!err && !j->map[0])
		err = ORLOV_ERR_CORRUPT;
	if (!err)
		err = io_channel_read_blk64(e->io, j->map[0], 1, j->sb);
	if (err)
		return err;
	j->len = be32(j->sb->s_maxlen);
	j->first = be32(j->sb->s_first);
	j->seq = be32(j->sb->s_sequence);
	usable = journal_usable(j->sb, bs, EXT2_I_SIZE(&inode) / bs);
	/* Past 2^32 blocks a tag needs its high half: the journal gets
	 * 64-bit tags, as the ext4 driver gives them to it at mount
	 * (jbd2_journal_set_features); a version 1 journal has none. */
	if (usable && ext2fs_blocks_count(e->super) > UINT32_MAX &&
	    !(jincompat(j->sb) & JBD2_FEATURE_INCOMPAT_64BIT)) {
		usable = be32(j->sb->s_header.h_blocktype) == JBD2_SUPERBLOCK_V2;
		j->sb->s_feature_incompat = ext2fs_cpu_to_be32(
			jincompat(j->sb) | JBD2_FEATURE_INCOMPAT_64BIT);
		if (jcsum(j->sb))
			jsb_csum_set(j->sb);
	}
	/* commit_bound counted descriptors of 32-bit tags */
	if (usable)
		need = need - commit_bound(img, fs) +
		       bound_for(img, fs, tags_per_descriptor(j->sb, bs));
	if (!usable || need > j->len - j->first) {
		journal_free(j);
		memset(j, 0, sizeof(*j));
		return 0;
	}
	if (!map)
		return 0;
	free(j->map);
	j->map = calloc(j->first + need, sizeof(*j->map));
	if (!j->map)
		return ENOMEM;
	for (i = 0; !err && i < j->first + need; i++) {
		err = ext2fs_bmap2(e, e->super->s_journal_inum, &inode, NULL, 0,
				   i, NULL, &j->map[i]);
		if (!err && !j->map[i])
			err = ORLOV_ERR_CORRUPT;
	}
	return err;
}

errcode_t journal_open(struct image *img, const struct fs_state *fs,
		       size_t need, struct journal *j)
{
	return journal_check(img, fs, need, j, 1);
}

errcode_t journal_takes(struct image *img, const struct fs_state *fs,
			size_t need, int *takes)
{
	struct journal j;
	errcode_t err = journal_check(img, fs, need, &j, 0);

	*takes = !err && j.sb;
	journal_free(&j);
	return err;
}

/* Write @data to journal block @k. */
static errcode_t jwrite(struct image *img, const struct journal *j,
			uint32_t k, const void *data)
{
	return io_channel_write_blk64(img->fs->io, j->map[k], 1, data);
}

/* needs_recovery set or cleared in @b, the block of @e's block size that
 * holds the primary superblock, and its checksum (metadata_csum) again. */
static void set_recover(ext2_filsys e, unsigned char *b, int on)
{
	struct ext2_super_block *sb =
		(struct ext2_super_block *)(b + SUPERBLOCK_OFFSET % e->blocksize);
	uint32_t f = ext2fs_le32_to_cpu(sb->s_feature_incompat);

	f = on ? f | EXT3_FEATURE_INCOMPAT_RECOVER :
		 f & ~(uint32_t)EXT3_FEATURE_INCOMPAT_RECOVER;
	sb->s_feature_incompat = ext2fs_cpu_to_le32(f);
	ext2fs_superblock_csum_set(e, sb);
}

/* The primary superblock's block with needs_recovery set or cleared in
 * what the disk holds now. */
static errcode_t mark_recovery(struct image *img, int on)
{
	ext2_filsys e = img->fs;
	blk64_t blk = SUPERBLOCK_OFFSET / e->blocksize;
	unsigned char *b = malloc(e->blocksize);
	errcode_t err;

	if (!b)
		return ENOMEM;
	err = io_channel_read_blk64(e->io, blk, 1, b);
	if (!err) {
		set_recover(e, b, on);
		err = io_channel_write_blk64(e->io, blk, 1, b);
	}
	free(b);
	return err ? err : io_channel_flush(e->io);
}

/* @d, a journal block of @bs bytes: the header of @type for transaction
 * @seq, the rest zero. */
static void journal_block(unsigned char *d, uint32_t bs, uint32_t type,
			  uint32_t seq)
{
	journal_header_t *h = (journal_header_t *)d;

	memset(d, 0, bs);
	h->h_magic = ext2fs_cpu_to_be32(JBD2_MAGIC_NUMBER);
	h->h_blocktype = ext2fs_cpu_to_be32(type);
	h->h_sequence = ext2fs_cpu_to_be32(seq);
}

/* Does @b start as a journal block does?  Its copy in the log is escaped:
 * recovery would take it for one. */
static int journal_magic_at(const unsigned char *b)
{
	return be32(((const journal_header_t *)b)->h_magic) == JBD2_MAGIC_NUMBER;
}

/* jbd2_block_tag_csum_set: over the sequence and block @b as logged
 * (escaped: its first word zero). */
static uint32_t tag_csum(const struct journal *j, const unsigned char *b,
			 uint32_t bs, int escaped)
{
	static const unsigned char zero[4];
	__be32 seq = ext2fs_cpu_to_be32(j->seq);
	uint32_t crc = ext2fs_crc32c_le(jseed(j->sb), (unsigned char *)&seq,
					sizeof(seq));

	if (escaped) {
		crc = ext2fs_crc32c_le(crc, zero, sizeof(zero));
		b += sizeof(zero);
		bs -= sizeof(zero);
	}
	return ext2fs_crc32c_le(crc, b, bs);
}

/* With checksums v3, @be (zero) set to the checksum of block @d from the
 * journal's seed (jbd2_descriptor_block_csum_set, the commit block's). */
static void block_csum_set(const struct journal *j, unsigned char *d,
			   uint32_t bs, __be32 *be)
{
	if (jcsum(j->sb))
		*be = ext2fs_cpu_to_be32(ext2fs_crc32c_le(jseed(j->sb), d, bs));
}

/* @d: the descriptor of the @cnt blocks from the @i-th of @c, whose
 * contents are at @data, in the order their copies follow it in the log. */
static void fill_descriptor(unsigned char *d, const struct journal *j,
			    uint32_t bs, const struct io_capture *c, size_t i,
			    const unsigned char *data, size_t cnt)
{
	size_t off = sizeof(journal_header_t), t;
	uint32_t tb = tag_bytes(j->sb);

	journal_block(d, bs, JBD2_DESCRIPTOR_BLOCK, j->seq);
	for (t = 0; t < cnt; t++) {
		journal_block_tag_t *tag = (journal_block_tag_t *)(d + off);
		uint32_t flags = t ? JBD2_FLAG_SAME_UUID : 0;

		if (journal_magic_at(data + t * bs))
			flags |= JBD2_FLAG_ESCAPE;
		if (t + 1 == cnt)
			flags |= JBD2_FLAG_LAST_TAG;
		tag->t_blocknr = ext2fs_cpu_to_be32((uint32_t)capture_blk(c, i + t));
		if (jincompat(j->sb) & JBD2_FEATURE_INCOMPAT_64BIT)
			tag->t_blocknr_high = ext2fs_cpu_to_be32(
				(uint32_t)(capture_blk(c, i + t) >> 32));
		tag->t_checksum = 0;
		/* (in a tag3, the low half of its 32-bit t_flags) */
		tag->t_flags = ext2fs_cpu_to_be16(flags);
		if (jcsum(j->sb))
			((journal_block_tag3_t *)tag)->t_checksum =
				ext2fs_cpu_to_be32(tag_csum(j, data + t * bs, bs,
					flags & JBD2_FLAG_ESCAPE));
		off += tb;
		if (!t) {
			memcpy(d + off, j->sb->s_uuid, sizeof(j->sb->s_uuid));
			off += sizeof(j->sb->s_uuid);
		}
	}
	block_csum_set(j, d, bs, &((struct jbd2_journal_block_tail *)
				   (d + bs - sizeof(struct jbd2_journal_block_tail)))->t_checksum);
}

/* The log, from the journal's first block: descriptors each followed by
 * the copies of their blocks, then the commit block.  @d is room for one
 * block, @copy for a descriptor's worth. */
static errcode_t write_log(struct image *img, const struct journal *j,
			   struct io_capture *c, unsigned char *d,
			   unsigned char *copy)
{
	size_t n = capture_count(c);
	uint32_t bs = img->fs->blocksize, k = j->first;
	size_t per = tags_per_descriptor(j->sb, bs), i, t, cnt;
	errcode_t err = 0;

	for (i = 0; !err && i < n; i += cnt) {
		cnt = n - i < per ? n - i : per;
		err = capture_read(c, i, cnt, copy);
		if (err)
			break;
		fill_descriptor(d, j, bs, c, i, copy, cnt);
		err = jwrite(img, j, k++, d);
		for (t = 0; !err && t < cnt; t++) {
			unsigned char *b = copy + t * bs;

			if (journal_magic_at(b))
				memset(b, 0, 4);
			err = jwrite(img, j, k++, b);
		}
	}
	if (!err) {
		journal_block(d, bs, JBD2_COMMIT_BLOCK, j->seq);
		block_csum_set(j, d, bs,
			       &((struct commit_header *)d)->h_chksum[0]);
		err = jwrite(img, j, k++, d);
	}
	return err;
}

/* The journal superblock as read, with s_sequence @seq and s_start
 * @start: the log counts (its first block) or is empty (0). */
static errcode_t write_jsb(struct image *img, const struct journal *j,
			   unsigned char *d, uint32_t seq, uint32_t start)
{
	journal_superblock_t *jsb = (journal_superblock_t *)d;

	memcpy(d, j->sb, img->fs->blocksize);
	jsb->s_sequence = ext2fs_cpu_to_be32(seq);
	jsb->s_start = ext2fs_cpu_to_be32(start);
	if (jcsum(jsb))
		jsb_csum_set(jsb);
	return jwrite(img, j, 0, d);
}

/* The blocks of the transaction home, read back @per at a time into
 * @copy. */
static errcode_t write_home(struct image *img, struct io_capture *c,
			    size_t per, unsigned char *copy)
{
	ext2_filsys e = img->fs;
	uint32_t bs = e->blocksize;
	size_t n = capture_count(c), i, t, cnt;
	errcode_t err = 0;

	for (i = 0; !err && i < n; i += cnt) {
		cnt = n - i < per ? n - i : per;
		err = capture_read(c, i, cnt, copy);
		for (t = 0; !err && t < cnt; t++) {
			unsigned long long blk = capture_blk(c, i + t);
			unsigned char *b = copy + t * bs;

			/* the new superblock, still needing recovery until
			 * the journal is empty again */
			if (blk == SUPERBLOCK_OFFSET / bs)
				set_recover(e, b, 1);
			err = io_channel_write_blk64(e->io, blk, 1, b);
		}
	}
	return err;
}

/*
 * The @n blocks @c the commit changes in place, captured in memory, as
 * one transaction of the image's journal, as the kernel would make it, so
 * that a kill anywhere leaves either the old filesystem or one that
 * journal recovery (mount, e2fsck) makes the new one: the primary
 * superblock is marked needs_recovery (the journal still empty: e2fsck
 * and mount see the old filesystem); descriptor, copies and commit block
 * go into the log; the journal superblock's s_start makes it count; the
 * copies are written home (the primary superblock's still marked
 * needs_recovery); s_start is cleared; needs_recovery is cleared.
 */
errcode_t journal_commit(struct image *img, const struct journal *j,
			 struct io_capture *c, const char **what)
{
	size_t n = capture_count(c);
	ext2_filsys e = img->fs;
	uint32_t bs = e->blocksize;
	uint32_t per = (uint32_t)tags_per_descriptor(j->sb, bs);
	unsigned char *d, *copy;
	errcode_t err = 0;

	if (n + (n + per - 1) / per + 1 > j->len - j->first)
		return ORLOV_ERR_CORRUPT;	/* commit_bound was wrong */
	d = calloc(1, bs);
	copy = malloc((size_t)per * bs);
	if (!d || !copy) {
		err = ENOMEM;
		goto out;
	}
	*what = "starting the journal transaction of";
	err = mark_recovery(img, 1);
	*what = "writing the journal of";
	if (!err)
		err = write_log(img, j, c, d, copy);
	if (!err)
		err = io_channel_flush(e->io);
	/* from here on, recovery gives the new filesystem */
	*what = "committing the journal of";
	if (!err)
		err = write_jsb(img, j, d, j->seq, j->first);
	if (!err)
		err = io_channel_flush(e->io);
	*what = "writing the journalled blocks of";
	if (!err)
		err = write_home(img, c, per, copy);
	if (!err)
		err = io_channel_flush(e->io);
	*what = "finishing the journal transaction of";
	if (!err)
		err = write_jsb(img, j, d, j->seq + 1, 0);
	if (!err)
		err = io_channel_flush(e->io);
	if (!err)
		err = mark_recovery(img, 0);
out:
	free(d);
	free(copy);
	return err;
}
