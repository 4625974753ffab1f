// SPDX-License-Identifier: GPL-2.0-or-later
/* The extent map model's bytes read back by libext2fs: trees of depth 1
 * and 2 built by the model in a real image, walked with
 * ext2fs_extent_get and ext2fs_bmap2, and e2fsck -fn clean. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>

#include "model/ext4/extents_tree.h"
#include "lib/orlov_err.h"
#include "tap.h"
#include "ext_fixture.h"

/* The allocator is libext2fs's: blocks marked in the image's bitmap. */
static errcode_t e2_data(void *ctx, const struct ext_alloc_req *ar,
			 uint64_t *blk, uint32_t *got)
{
	ext2_filsys fs = ctx;
	blk64_t b;
	uint32_t n = 0;
	errcode_t err = ext2fs_new_block2(fs, ar->goal, NULL, &b);

	if (err)
		return err;
	while (n < ar->len && b + n < ext2fs_blocks_count(fs->super) &&
	       !ext2fs_test_block_bitmap2(fs->block_map, b + n))
		ext2fs_block_alloc_stats2(fs, b + n++, +1);
	*blk = b;
	*got = n;
	return 0;
}

static errcode_t e2_meta(void *ctx, uint64_t goal, int try_goal, uint64_t *blk)
{
	ext2_filsys fs = ctx;
	blk64_t b;
	errcode_t err = ext2fs_new_block2(fs, goal, NULL, &b);

	(void)try_goal;
	if (!err) {
		ext2fs_block_alloc_stats2(fs, b, +1);
		*blk = b;
	}
	return err;
}

static void e2_release(void *ctx, uint64_t blk, uint32_t count, int meta)
{
	(void)meta;
	while (count--)
		ext2fs_block_alloc_stats2(ctx, blk + count, -1);
}

struct e2_write {
	ext2_filsys fs;
	ext2_ino_t ino;
	unsigned char *buf;
	int tails_free;
};

/* What the image will do with each tree block: the checksum in its tail,
 * then the write. */
static errcode_t e2_write_block(void *ctx, uint64_t blk, const void *buf)
{
	struct e2_write *w = ctx;
	const struct ext3_extent_header *eh = buf;
	size_t tail = EXT_HDR_SIZE + (size_t)eh_max(eh) * EXT_ENTRY_SIZE;
	static const unsigned char zero[4];
	errcode_t err;

	if (tail + 4 <= w->fs->blocksize &&
	    !memcmp(zero, (const char *)buf + tail, 4))
		w->tails_free++;
	memcpy(w->buf, buf, w->fs->blocksize);
	err = ext2fs_extent_block_csum_set(w->fs, w->ino,
					   (struct ext3_extent_header *)w->buf);
	return err ? err : io_channel_write_blk64(w->fs->io, blk, 1, w->buf);
}

static ext2_filsys e2_image(const char *path, unsigned int bits)
{
	struct ext2_super_block sb;
	ext2_filsys fs;
	unsigned int i;

	memset(&sb, 0, sizeof(sb));
	ext2fs_blocks_count_set(&sb, 16384);
	sb.s_log_block_size = bits - 10;
	sb.s_inodes_count = 512;
	sb.s_rev_level = EXT2_DYNAMIC_REV;
	sb.s_inode_size = 256;
	ext2fs_set_feature_extents(&sb);
	ext2fs_set_feature_metadata_csum(&sb);
	if (ext2fs_initialize(path, EXT2_FLAG_RW | EXT2_FLAG_64BITS, &sb,
			      unix_io_manager, &fs))
		return NULL;
	for (i = 0; i < sizeof(fs->super->s_uuid); i++)
		fs->super->s_uuid[i] = (unsigned char)(i * 17 + 1);
	fs->super->s_checksum_type = EXT2_CRC32C_CHKSUM;
	ext2fs_init_csum_seed(fs);
	if (ext2fs_allocate_tables(fs)) {
		ext2fs_free(fs);
		return NULL;
	}
	/* the reserved inodes, as mke2fs marks them */
	for (i = 1; i < EXT2_FIRST_INO(fs->super); i++)
		if (i != EXT2_ROOT_INO)
			ext2fs_inode_alloc_stats2(fs, i, +1, 0);
	if (ext2fs_mkdir(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, NULL) ||
	    ext2fs_mkdir(fs, EXT2_ROOT_INO, 0, "lost+found")) {
		ext2fs_free(fs);
		return NULL;
	}
	return fs;
}

/* An inode with the model's tree written as the image will write it. */
static errcode_t e2_put_file(ext2_filsys fs, ext2_ino_t ino,
			     const struct ext_tree *t, uint64_t size,
			     int *tails_free)
{
	struct ext2_inode inode;
	struct e2_write w = { .fs = fs, .ino = ino };
	errcode_t err;

	w.buf = calloc(1, fs->blocksize);
	if (!w.buf)
		return ENOMEM;
	memset(&inode, 0, sizeof(inode));
	inode.i_mode = LINUX_S_IFREG | 0644;
	inode.i_links_count = 1;
	inode.i_flags = EXT4_EXTENTS_FL;
	ext_tree_encode_root(t, inode.i_block);
	inode.i_size = (uint32_t)size;
	inode.i_blocks = (uint32_t)(t->nblocks * (fs->blocksize / 512));
	err = ext2fs_write_new_inode(fs, ino, &inode);
	if (!err)
		err = ext_tree_visit(t, e2_write_block, &w);
	if (!err)
		err = ext2fs_link(fs, EXT2_ROOT_INO, "f", ino, EXT2_FT_REG_FILE);
	if (!err)
		ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
	*tails_free = w.tails_free;
	free(w.buf);
	return err;
}

/* Every leaf extent libext2fs reads equals the model's, in order. */
static int e2_same_extents(ext2_filsys fs, ext2_ino_t ino, struct ext_tree *t,
			   unsigned int *count)
{
	ext2_extent_handle_t h;
	struct ext2fs_extent e;
	struct ext3_extent ex;
	int op = EXT2_EXTENT_ROOT, same = 1;
	errcode_t err;

	*count = 0;
	if (ext2fs_extent_open2(fs, ino, NULL, &h))
		return 0;
	while (!(err = ext2fs_extent_get(h, op, &e))) {
		op = EXT2_EXTENT_NEXT;
		if (!(e.e_flags & EXT2_EXTENT_FLAGS_LEAF) ||
		    (e.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT))
			continue;
		same &= nth_extent(t, (*count)++, &ex) &&
			e.e_lblk == ee_block(&ex) && e.e_pblk == ee_pblock(&ex) &&
			e.e_len == ee_len(&ex);
	}
	ext2fs_extent_free(h);
	return same && err == EXT2_ET_EXTENT_NO_NEXT;
}

/* A sparse file of @n one-block extents in a metadata_csum image of
 * blocks of 1 << @bits bytes made here; libext2fs reads the tree back and
 * e2fsck finds nothing wrong. */
static void test_libext2fs(unsigned int bits, uint32_t n, int depth)
{
	char path[] = "/tmp/t-extents.XXXXXX";
	struct ext_alloc_ops o = {
		.data = e2_data, .meta = e2_meta, .release = e2_release,
	};
	struct ext_fs efs = { .colour = 3, .flex_size = 16 };
	struct ext_tree t;
	ext2_filsys fs;
	ext2_ino_t ino = 12;
	unsigned int count = 0;
	int fd = mkstemp(path), ok = 1, tails = 0, rc;
	uint32_t i;
	char cmd[128];

	/* sparse zeros: the inode tables read back empty */
	if (fd < 0 || ftruncate(fd, (off_t)16384 << bits) || close(fd) ||
	    !(fs = e2_image(path, bits))) {
		tap_ok(0, "a small ext4 image made with libext2fs");
		return;
	}
	o.ctx = fs;
	efs.g.first_data_block = fs->super->s_first_data_block;
	efs.g.blocks_count = ext2fs_blocks_count(fs->super);
	efs.g.blocks_per_group = EXT2_BLOCKS_PER_GROUP(fs->super);
	efs.g.block_size = fs->blocksize;
	ext4_ext_tree_init(&t, fs->blocksize, 0, 1);
	for (i = 0; i < n && ok; i++)
		ok = map1(&t, &efs, &o, 2 * i) != 0;
	tap_ok(ok && ext_tree_depth(&t) == depth,
	       "%u one-block extents in %u-byte blocks: depth %d", n,
	       fs->blocksize, depth);
	is_int(e2_put_file(fs, ino, &t, (uint64_t)(2 * n - 1) << bits, &tails), 0,
	       "the tree written with its checksums");
	is_int(tails, (int)t.n, "every tree block leaves its tail free");
	tap_ok(e2_same_extents(fs, ino, &t, &count),
	       "libext2fs reads the same extents, checksums verified");
	is_int(count, n, "all of them");
	for (i = 0; i < 2 * n; i++) {
		blk64_t pb = 0;
		uint64_t phys;
		uint32_t len;

		ok &= !ext2fs_bmap2(fs, ino, NULL, NULL, 0, i, NULL, &pb) &&
		      !ext_lookup(&t, i, &phys, &len) && pb == phys;
	}
	tap_ok(ok, "and maps every block as the model does");
	ext2fs_close_free(&fs);
	snprintf(cmd, sizeof(cmd),
		 "PATH=$PATH:/sbin:/usr/sbin e2fsck -fn %s >/dev/null 2>&1", path);
	rc = system(cmd);
	is_int(rc, 0, "e2fsck -fn: clean");
	if (!getenv("T_EXTENTS_KEEP"))
		unlink(path);
	ext_tree_release(&t);
}

int main(void)
{
	test_libext2fs(10, 400, 2);
	test_libext2fs(12, 1000, 1);
	return tap_done();
}
