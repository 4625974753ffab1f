// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Between the model and libext2fs: the model's per-group counts and
 * bitmaps loaded from the image's and stored back (one loop, either way),
 * and directories and indirect blocks read into the model's structures
 * and written from them.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image/bridge.h"
#include "image/image_int.h"
#include "lib/orlov_err.h"
#include "model/ext4/ialloc.h"

/* The counts of group @i (@nb blocks) from its descriptor, checked
 * against the bitmaps just loaded (@bmap, the block bitmap, goes into
 * the model only where it has a bit set: the model's bitmaps start out
 * as zero pages, and an image of many empty groups keeps them so); the
 * bits past the end of the last group set. */
static errcode_t load_group(ext2_filsys e, struct fs_state *fs, uint32_t i,
			    uint32_t nb, uint8_t *bmap)
{
	fs->free_inodes[i] = ext2fs_bg_free_inodes_count(e, i);
	fs->free_blocks[i] = ext2fs_bg_free_blocks_count(e, i);
	fs->used_dirs[i] = ext2fs_bg_used_dirs_count(e, i);
	if (fs->ext4) {
		fs->ext4->g[i].flags = ext2fs_bg_flags(e, i);
		fs->ext4->g[i].itable_unused = ext2fs_bg_itable_unused(e, i);
	}
	/* The allocators trust the descriptors' counts where the
	 * kernel does; counts that disagree with the bitmaps are
	 * damage e2fsck would repair, and writing on top of it
	 * would make it worse. */
	if (count_zero_bits(bmap, nb) != fs->free_blocks[i] ||
	    count_zero_bits(group_ibitmap(fs, i), fs->g.inodes_per_group) !=
	    fs->free_inodes[i])
		return ORLOV_ERR_BAD_COUNTS;
	/* Past the end of the last group: in use, as on disk. */
	for (; nb < fs->g.blocks_per_group; nb++)
		bit_set(bmap, nb);
	if (!group_all_free(fs, i))
		memcpy(group_bbitmap(fs, i), bmap, fs->bytes_per_group);
	return 0;
}

/* Group @i's counts into its descriptor, its checksum updated. */
static void store_group(ext2_filsys e, const struct fs_state *fs, uint32_t i)
{
	ext2fs_bg_free_blocks_count_set(e, i, fs->free_blocks[i]);
	ext2fs_bg_free_inodes_count_set(e, i, fs->free_inodes[i]);
	ext2fs_bg_used_dirs_count_set(e, i, fs->used_dirs[i]);
	if (fs->ext4) {
		uint16_t flags;
		uint32_t unused;

		/* libext2fs writes the bitmaps of the groups whose flags
		 * say initialised, and only those */
		ext4_group_after(fs, i, &flags, &unused);
		ext2fs_bg_flags_zap(e, i);
		ext2fs_bg_flags_set(e, i, flags);
		ext2fs_bg_itable_unused_set(e, i, unused);
	}
	ext2fs_group_desc_csum_set(e, i);
}

/*
 * Every group's block and inode bitmaps between libext2fs's (whole
 * filesystem) and the model's (one per group), and its counts: @load
 * (not NULL) is filled from the image, else @store goes into it.
 */
static errcode_t bridge_groups(ext2_filsys e, struct fs_state *load,
			       const struct fs_state *store)
{
	const struct fs_state *fs = load ? load : store;
	const struct fs_geom *g = &fs->g;
	uint8_t *bmap = calloc(1, fs->bytes_per_group);
	errcode_t err = bmap ? 0 : ENOMEM;
	uint32_t i;

	for (i = 0; !err && i < g->ngroups; i++) {
		blk64_t first = g->first_data_block + (blk64_t)i * g->blocks_per_group;
		uint32_t nb = g->blocks_per_group;
		ext2_ino_t ifirst = (ext2_ino_t)i * g->inodes_per_group + 1;

		if (first + nb > g->blocks_count)
			nb = (uint32_t)(g->blocks_count - first);
		if (load) {
			memset(bmap, 0, fs->bytes_per_group);
			err = ext2fs_get_block_bitmap_range2(e->block_map, first,
						nb, bmap);
			if (!err)
				err = ext2fs_get_inode_bitmap_range2(e->inode_map,
					ifirst, g->inodes_per_group,
					group_ibitmap(fs, i));
			if (!err)
				err = load_group(e, load, i, nb, bmap);
		} else {
			/* a group with no block in use: a cheap clear in
			 * either of libext2fs's bitmap kinds, where a range
			 * set of zeros is not, and the model's page of zeros
			 * is never read */
			if (group_all_free(fs, i))
				ext2fs_unmark_block_bitmap_range2(e->block_map,
								  first, nb);
			else
				err = ext2fs_set_block_bitmap_range2(
					e->block_map, first, nb,
					group_bbitmap(fs, i));
			if (!err)
				err = ext2fs_set_inode_bitmap_range2(e->inode_map,
					ifirst, g->inodes_per_group,
					group_ibitmap(fs, i));
			if (!err)
				store_group(e, store, i);
		}
	}
	free(bmap);
	return err;
}

errcode_t image_load_state(struct image *img, struct fs_state *fs)
{
	ext2_filsys e = img->fs;
	struct fs_geom g;
	errcode_t err;

	memset(&g, 0, sizeof(g));
	g.ngroups = e->group_desc_count;
	g.inodes_per_group = e->super->s_inodes_per_group;
	g.blocks_per_group = e->super->s_blocks_per_group;
	g.inodes_count = e->super->s_inodes_count;
	g.blocks_count = ext2fs_blocks_count(e->super);
	g.first_data_block = e->super->s_first_data_block;
	g.first_ino = EXT2_FIRST_INODE(e->super);
	g.block_size = e->blocksize;
	g.inode_size = EXT2_INODE_SIZE(e->super);
	g.log_groups_per_flex = ext2fs_has_feature_flex_bg(e->super) ?
				 e->super->s_log_groups_per_flex : 0;
	g.metadata_csum = ext2fs_has_feature_metadata_csum(e->super);
	g.extents = ext2fs_has_feature_extents(e->super);
	g.inline_data = ext2fs_has_feature_inline_data(e->super);
	err = fs_state_init(fs, &g);
	/* the descriptors' lazy init, as the ext4 driver keeps it */
	if (!err && ext2fs_has_group_desc_csum(e))
		err = ext4_groups_init(fs);
	if (!err)
		err = bridge_groups(e, fs, NULL);
	if (err)
		return err;
	if (fs->ext4)
		ext4_groups_loaded(fs);
	fs_state_sum(fs);
	return 0;
}

errcode_t image_store_state(struct image *img, const struct fs_state *fs)
{
	ext2_filsys e = img->fs;
	errcode_t err = bridge_groups(e, NULL, fs);

	if (err)
		return err;
	ext2fs_free_blocks_count_set(e->super,
				     (blk64_t)percpu_counter_sum(&fs->freeb));
	e->super->s_free_inodes_count = (uint32_t)percpu_counter_sum(&fs->freei);
	ext2fs_mark_super_dirty(e);
	ext2fs_mark_bb_dirty(e);
	ext2fs_mark_ib_dirty(e);
	return 0;
}

static errcode_t read_ptrs(struct image *img, uint32_t blk, uint32_t *ptrs)
{
	uint32_t apb = img->fs->blocksize / 4, i;
	errcode_t err = io_channel_read_blk64(img->fs->io, blk, 1, img->buf);

	if (err)
		return err;
	for (i = 0; i < apb; i++)
		ptrs[i] = ext2fs_le32_to_cpu(((uint32_t *)img->buf)[i]);
	return 0;
}

/* Load the indirect tree under i_block[12 + level] into the block map. */
static errcode_t load_ind(struct image *img, const struct fs_state *fs,
			  struct ifile *f, int level, uint32_t *path,
			  int depth, uint32_t blk)
{
	uint32_t apb = fs->g.block_size / 4, i, *ptrs;
	errcode_t err;

	if (blk >= fs->g.blocks_count)
		return ORLOV_ERR_CORRUPT;
	ptrs = malloc(apb * sizeof(*ptrs));
	if (!ptrs)
		return ENOMEM;
	err = read_ptrs(img, blk, ptrs);
	if (!err)
		err = bmap_attach(fs, f, level, path, depth, blk, ptrs);
	for (i = 0; !err && depth < level && i < apb; i++) {
		if (!ptrs[i])
			continue;
		path[depth] = i;
		err = load_ind(img, fs, f, level, path, depth + 1, ptrs[i]);
	}
	free(ptrs);
	return err;
}

/* An extent-mapped inode's tree: the root, then every block an index
 * points to, each read once (ext_tree_attach refuses a block twice, so a
 * damaged tree cannot loop). */
static errcode_t load_extents(struct image *img, const struct fs_state *fs,
			      struct ifile *f, const uint32_t *i_block)
{
	unsigned int depth;
	uint64_t blk;
	errcode_t err;

	if (fs->driver != ALLOC_EXT4)
		return ORLOV_ERR_UNSUPP_FEATURE;	/* ext2 has no extents */
	err = ifile_load_extents(fs, f, i_block);
	while (!err && ext_tree_wanted(&f->ext, &blk, &depth)) {
		if (blk < fs->g.first_data_block || blk >= fs->g.blocks_count)
			return ORLOV_ERR_CORRUPT;
		err = io_channel_read_blk64(img->fs->io, blk, 1, img->buf);
		if (!err)
			err = ext_tree_attach(&f->ext, blk, img->buf);
	}
	return err;
}

/* The block map of an existing inode into @f: extents or indirect. */
errcode_t load_map(struct image *img, const struct fs_state *fs,
		   const struct ext2_inode_large *inode, struct ifile *f)
{
	uint32_t path[3];
	errcode_t err;
	int level;

	if (inode->i_flags & EXT4_INLINE_DATA_FL)
		return ORLOV_ERR_UNSUPP_FEATURE;
	if (inode->i_flags & EXT4_EXTENTS_FL)
		return load_extents(img, fs, f, inode->i_block);
	memcpy(f->i_block, inode->i_block, sizeof(f->i_block));
	for (level = 0; level < 3; level++) {
		if (!inode->i_block[EXT2_IND_BLOCK + level])
			continue;
		err = load_ind(img, fs, f, level, path, 0,
			       inode->i_block[EXT2_IND_BLOCK + level]);
		if (err)
			return err;
	}
	return 0;
}

/* An inline directory (debugfs's mkdir makes one on an image with
 * inline_data): i_block's entries, and system.data in the inode's
 * attribute space, read now; once converted its block is mapped by
 * extents (ext4_destroy_inline_data_nolock). */
static errcode_t load_inline_dir(struct image *img, const struct fs_state *fs,
				 const struct ext2_inode_large *inode,
				 struct dirbuf *d)
{
	size_t n = image_inode_tail_size(img);

	if (n < 8 || inode->i_extra_isize != 32)
		return ORLOV_ERR_CORRUPT;
	d->map.ibody = calloc(1, n);
	if (!d->map.ibody)
		return ENOMEM;
	d->map.ibody_size = n;
	memcpy(d->inl, inode->i_block, sizeof(d->inl));
	d->inline_dir = 1;
	if (fs->g.extents)
		ifile_use_extents(fs, &d->map, 0);
	return image_read_inode_tail(img, d->map.ino, d->map.ibody);
}

errcode_t image_load_dir(struct image *img, const struct fs_state *fs,
			 const struct ext2_inode_large *inode,
			 struct dirbuf *d)
{
	uint32_t bs = fs->g.block_size, nblocks, lb;
	fsblk_t phys;
	errcode_t err;

	if (inode->i_flags & EXT4_INLINE_DATA_FL)
		return load_inline_dir(img, fs, inode, d);
	err = load_map(img, fs, inode, &d->map);
	if (err)
		return err;
	nblocks = (uint32_t)(EXT2_I_SIZE(inode) / bs);
	for (lb = 0; lb < nblocks; lb++) {
		bmap_lookup(fs, &d->map, lb, &phys);
		if (!phys)
			return ORLOV_ERR_CORRUPT;	/* ext2 dirs have no holes */
		err = io_channel_read_blk64(img->fs->io, phys, 1, img->buf);
		if (!err)
			err = dirbuf_add_block(fs, d, phys,
					       (unsigned char *)img->buf);
		if (err)
			return err;
	}
	/* i_blocks counts an attribute block too; the map does not. */
	d->map.nblocks = inode->i_blocks / (bs / 512) - (inode->i_file_acl ? 1 : 0);
	return 0;
}

static errcode_t write_ind(void *ctx, uint32_t blk, const uint32_t *ptr)
{
	struct image *img = ctx;
	uint32_t apb = img->fs->blocksize / 4, i;

	for (i = 0; i < apb; i++)
		((uint32_t *)img->buf)[i] = ext2fs_cpu_to_le32(ptr[i]);
	return put_blocks(img, blk, 1, img->buf, 1);
}

/*
 * crc32c over the filesystem's seed, the inode number and generation:
 * where ext4_dirblock_csum and ext4_dx_csum start.  libext2fs's
 * ext2fs_dir_block_csum_set reads the generation from the inode table,
 * which for a new inode may still hold a deleted one's: the generation
 * is the staged inode's, the one on disk for an inode in use that is not
 * staged, else 0 (a new inode is written zeroed and nothing sets one).
 */
static errcode_t dir_csum_start(struct image *img, uint32_t ino,
				uint32_t *crc)
{
	struct ext2_inode_large in;
	int have = !image_read_staged(img, ino, &in);
	uint32_t le[2] = { ext2fs_cpu_to_le32(ino), 0 };

	if (!have && ext2fs_test_inode_bitmap2(img->fs->inode_map, ino)) {
		errcode_t err = image_read_inode(img, ino, &in);

		if (err)
			return err;
		have = 1;
	}
	if (have)
		le[1] = ext2fs_cpu_to_le32(in.i_generation);
	*crc = ext2fs_crc32c_le(img->fs->csum_seed, (unsigned char *)le,
				sizeof(le));
	return 0;
}

/* An extent tree block of the inode whose checksum seed @ctx holds:
 * ext4_extent_block_csum_set, over the header and eh_max entries. */
struct ext_out {
	struct image *img;
	uint32_t crc;		/* dir_csum_start's, with @csum */
	int csum;		/* metadata_csum */
};

static errcode_t write_ext_node(void *ctx, uint64_t blk, const void *buf)
{
	struct ext_out *o = ctx;
	struct image *img = o->img;
	struct ext3_extent_header *eh = (struct ext3_extent_header *)img->buf;

	memcpy(img->buf, buf, img->fs->blocksize);
	if (o->csum) {
		size_t off = sizeof(*eh) + ext2fs_le16_to_cpu(eh->eh_max) *
					   sizeof(struct ext3_extent);
		struct ext3_extent_tail *t;

		if (off + sizeof(*t) > img->fs->blocksize)
			return ORLOV_ERR_CORRUPT;
		t = (struct ext3_extent_tail *)((char *)img->buf + off);
		t->et_checksum = ext2fs_cpu_to_le32(
			ext2fs_crc32c_le(o->crc, (unsigned char *)img->buf,
					 (unsigned int)off));
	}
	return put_blocks(img, blk, 1, img->buf, 1);
}

errcode_t image_write_indirect(struct image *img, const struct fs_state *fs,
			       const struct ifile *f)
{
	struct ext_out o = { img, 0, 0 };
	errcode_t err;

	if (!f->extents)
		return bmap_visit_indirect(fs, f, write_ind, img);
	o.csum = ext2fs_has_feature_metadata_csum(img->fs->super);
	err = o.csum ? dir_csum_start(img, f->ino, &o.crc) : 0;
	return err ? err : ext_tree_visit(&f->ext, write_ext_node, &o);
}

/* The checksum of directory block @b of inode @ino: a leaf's in its
 * dirent tail (ext4_dirblock_csum_set), an index block's in the dx tail
 * after its limit entries (ext4_dx_csum_set), over the entries in use. */
static errcode_t dir_block_csum(struct image *img, uint32_t ino,
				unsigned char *b)
{
	ext2_filsys e = img->fs;
	struct ext2_dir_entry *de = (struct ext2_dir_entry *)b;
	struct ext2_dx_countlimit *cl;
	struct ext2_dx_tail *t;
	uint32_t crc, size;
	int off;
	errcode_t err = dir_csum_start(img, ino, &crc);

	if (err)
		return err;
	if (ext2fs_dirent_has_tail(e, de)) {
		size = e->blocksize - sizeof(struct ext2_dir_entry_tail);
		EXT2_DIRENT_TAIL(b, e->blocksize)->det_checksum =
			ext2fs_cpu_to_le32(ext2fs_crc32c_le(crc, b, size));
		return 0;
	}
	err = ext2fs_get_dx_countlimit(e, de, &cl, &off);
	if (err)
		return err;
	size = (uint32_t)off + ext2fs_le16_to_cpu(cl->limit) *
			       sizeof(struct ext2_dx_entry);
	if (size + sizeof(*t) > e->blocksize)
		return EXT2_ET_DIR_NO_SPACE_FOR_CSUM;
	t = (struct ext2_dx_tail *)(b + size);
	t->dt_checksum = 0;
	size = (uint32_t)off + ext2fs_le16_to_cpu(cl->count) *
			       sizeof(struct ext2_dx_entry);
	crc = ext2fs_crc32c_le(crc, b, size);
	t->dt_checksum = ext2fs_cpu_to_le32(
		ext2fs_crc32c_le(crc, (unsigned char *)t, sizeof(*t)));
	return 0;
}

#define DIR_OUT_BLOCKS 64	/* directory blocks checksummed at a time */

/* @n of @d's blocks from @b on, one run on disk, through @buf,
 * DIR_OUT_BLOCKS at a time (the model's blocks are apart, some in the
 * scratch file), with their checksums under metadata_csum (the model's
 * blocks stay as the kernel's buffers are: checksums are set only as
 * they are written). */
static errcode_t dir_run_out(struct image *img, const struct fs_state *fs,
			     const struct dirbuf *d, uint32_t b, uint32_t n,
			     unsigned char *buf)
{
	uint32_t bs = img->fs->blocksize, k, m;
	int csum = ext2fs_has_feature_metadata_csum(img->fs->super);
	errcode_t err = 0;

	for (; !err && n; b += m, n -= m) {
		m = n < DIR_OUT_BLOCKS ? n : DIR_OUT_BLOCKS;
		for (k = 0; !err && k < m; k++)
			err = dirb_copy(fs, &d->b, b + k, buf + (size_t)k * bs);
		for (k = 0; !err && csum && k < m; k++)
			err = dir_block_csum(img, d->map.ino,
					     buf + (size_t)k * bs);
		if (!err)
			err = put_blocks(img, d->phys[b], m, buf, 1);
	}
	return err;
}

errcode_t image_write_dir(struct image *img, const struct fs_state *fs,
			  const struct dirbuf *d)
{
	uint32_t bs = fs->g.block_size, b, run;
	unsigned char *buf = NULL;
	errcode_t err = 0;

	if (dir_nblocks(d) &&
	    !(buf = malloc((size_t)(dir_nblocks(d) < DIR_OUT_BLOCKS ?
				    dir_nblocks(d) : DIR_OUT_BLOCKS) * bs)))
		return ENOMEM;
	for (b = 0; !err && b < dir_nblocks(d); b += run) {
		for (run = 1; b + run < dir_nblocks(d) &&
		     d->phys[b + run] == d->phys[b] + run; run++)
			;
		err = dir_run_out(img, fs, d, b, run, buf);
	}
	free(buf);
	return err ? err : image_write_indirect(img, fs, &d->map);
}

errcode_t image_write_xattr_block(struct image *img, blk64_t blk,
				  const void *data)
{
	struct ext2_ext_attr_header *h = (struct ext2_ext_attr_header *)img->buf;
	errcode_t err;

	memcpy(img->buf, data, img->fs->blocksize);
	/* ext4_xattr_block_csum_set: by block number, not inode */
	err = ext2fs_ext_attr_block_csum_set(img->fs, 0, blk, h);
	return err ? err : put_blocks(img, blk, 1, img->buf, 0);
}
