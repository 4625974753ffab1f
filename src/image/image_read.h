/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_IMAGE_READ_H
#define ORLOV_IMAGE_READ_H

/*
 * Read-only inspection of an ext2/ext3/ext4 image, as orlov-layout needs
 * it: sorted directory listings, a deterministic depth-first walk, the
 * ordered block list of an inode (block map or extent tree), and its
 * extended attributes, those in the inode (ext4, mke2fs -d) and those in
 * the external block (ext2).
 */

#include <stddef.h>
#include <stdint.h>
#include <ext2fs/ext2fs.h>

#include "lib/util.h"
#include "lib/errctx.h"

/* Open @path read-only (never for writing, never mounted). */
/* The superblock's geometry is sane (EXT2_ET_CORRUPT_SUPERBLOCK if not):
 * checked raw, before libext2fs is given the image; @out, if not NULL,
 * gets the superblock as read. */
errcode_t ir_check_super(const char *path, struct ext2_super_block *out);
/* ... of the filesystem @offset bytes into @path. */
errcode_t ir_check_super_at(const char *path, uint64_t offset,
			    struct ext2_super_block *out);
/* s_blocks_count of a superblock as read from disk (little-endian),
 * its high half with the 64bit feature. */
uint64_t ir_blocks_count(const struct ext2_super_block *sb);
/* For an image without an ext2 superblock (ORLOV_ERR_NOT_EXT2): what the
 * file is and what to do, in @buf; NULL when it cannot be told. */
const char *ir_probe(const char *path, char *buf, size_t size);
/* ORLOV_ERR_IMAGE_KIND when @path is a FIFO (whose open and reads would
 * wait for a writer forever) or a socket, else 0 (missing too): checked
 * before anything opens IMAGE. */
errcode_t image_check_kind(const char *path);
errcode_t ir_open(const char *path, ext2_filsys *ret);
/* ... of the filesystem @offset bytes into @path. */
errcode_t ir_open_at(const char *path, uint64_t offset, ext2_filsys *ret);

/*
 * Tree order of two absolute image paths: component by component, each
 * compared bytewise with a shorter prefix first.  That is the plain
 * bytewise order with '/' ranked below every other byte, since a name
 * never holds '/' or NUL.
 */
int ir_path_cmp(const char *a, const char *b);


/*
 * Make @in an absolute path with single slashes and no trailing slash
 * ("usr//bin/" -> "/usr/bin", "" -> "/").  ".." is left for the image to
 * resolve.
 */
errcode_t ir_normalize_path(const char *in, char **out);

/* Resolve an absolute image path; the last component is not followed. */
errcode_t ir_lookup(ext2_filsys fs, const char *path, ext2_ino_t *ino);

/* Read a whole inode (large inode fields zeroed when absent). */
errcode_t ir_read_inode(ext2_filsys fs, ext2_ino_t ino,
			struct ext2_inode_large *inode);

/* The entries of one directory, without "." and "..", in name order. */
struct ir_dirent {
	char *name;		/* NUL-terminated copy; may hold any byte */
	size_t len;
	ext2_ino_t ino;
};

struct ir_dir {
	struct ir_dirent *e;
	size_t n, cap;
};

errcode_t ir_read_dir(ext2_filsys fs, ext2_ino_t dir, struct ir_dir *out);
void ir_dir_free(struct ir_dir *d);

/* "dir", "file", "symlink", "fifo", "sock", "chr", "blk"; NULL if none. */
const char *ir_type_name(unsigned int mode);

/*
 * The ordered block list of an inode: logical order with every mapping
 * block (IND, DIND, TIND) right before the blocks it maps, holes skipped.
 */
struct ir_blocks {
	blk64_t *b;
	size_t n, cap;
};

void ir_blocks_free(struct ir_blocks *bl);

/*
 * All an inode maps, as orlov-layout shows it.  @all is the ordered
 * block list above: for an extent-mapped inode its data blocks in logical
 * order with each extent tree block (index or leaf; the root is in the
 * inode) right before the blocks it maps, as IND/DIND/TIND are for the
 * others.  Those of unwritten extents (allocated, read as zeros) are in
 * @all and again in @unwritten.  An inline-data inode maps nothing: its
 * bytes are in the inode (@inline_data).
 *
 * An extent tree is checked as ext4 checks it when it reads a node
 * (__ext4_ext_check): magic, depth, eh_max and eh_entries, entries in
 * order and within the filesystem, the first key of a node equal to its
 * parent's index, the checksum of a block with metadata_csum; beyond
 * that, a node's extents below its parent's next index and no tree block
 * met twice.  A failure is EXT2_ET_EXTENT_HEADER_BAD, _INDEX_BAD,
 * _LEAF_BAD, _CSUM_INVALID or _CYCLE, with where and what in @bad
 * ("block 1510: bad magic 0x0000", "root in the inode: ...").
 */
struct ir_map {
	struct ir_blocks all;
	struct ir_blocks unwritten;
	size_t meta;		/* extent tree or indirect blocks in @all */
	int extents;		/* extent-mapped */
	int inline_data;
	char bad[96];		/* after an extent tree error */
};

errcode_t ir_block_map(ext2_filsys fs, ext2_ino_t ino,
		       struct ext2_inode_large *inode, struct ir_map *out);
void ir_map_free(struct ir_map *m);
/* Is @err one of ir_block_map's extent tree errors? */
int ir_extent_error(errcode_t err);

/* "a-b,c,..." for runs of consecutive numbers, "-" when empty. */
errcode_t ir_format_blocks(const struct ir_blocks *bl, struct strbuf *out);

/*
 * The rest of a dump line after the path:
 * "ino=N group=G TYPE blocks=LIST[ unwritten=LIST][ inline=SIZE]
 * [ xattr=B xrefs=R xcrc=C]".
 */
errcode_t ir_describe(ext2_filsys fs, ext2_ino_t ino,
		      struct ext2_inode_large *inode, struct strbuf *out);


/*
 * Depth-first walk from @root (an absolute, normalized image path): the
 * callback sees @root first, a directory before its entries, entries in
 * name order.  A directory met twice is reported as ORLOV_ERR_CORRUPT
 * instead of looping.  On failure @ec (if not NULL) receives what it
 * was doing and the escaped path, in place of what it had.
 */
typedef errcode_t (*ir_walk_fn)(const char *path, ext2_ino_t ino,
				struct ext2_inode_large *inode, void *priv);

errcode_t ir_walk(ext2_filsys fs, const char *root, ir_walk_fn fn,
		  void *priv, struct errctx *ec);

/*
 * Extended attributes of an inode: those in the inode past i_extra_isize
 * (ext4 and e2fsprogs put them there; ext2 writes none and ignores them)
 * and those in its external block, all the entries of both.  Full names
 * ("user.foo"); POSIX ACL values converted from the on-disk ext2 form
 * (the same in both places) to the posix_acl_xattr form that getxattr(2)
 * returns.  Sorted by name; a name stored more than once (corruption)
 * appears once per copy, the copy ext4 reads first (the inode's) first.
 * Everything read is checked; ORLOV_ERR_CORRUPT, with an empty list and
 * @corrupt saying where, when the inode's attribute area, the block or
 * an entry, value or ACL in them is malformed.
 */
struct ir_xattr {
	char *name;
	unsigned char *value;
	size_t len;
	int in_inode;		/* 1: in the inode, 0: in the block */
	size_t seq;		/* position in the inode's table, then the
				 * block's: the order ext4 looks them up */
};

#define IR_XATTR_BAD_INODE	1	/* the attribute area in the inode */
#define IR_XATTR_BAD_BLOCK	2	/* the external attribute block */

struct ir_xattrs {
	struct ir_xattr *a;
	size_t n;
	unsigned int corrupt;	/* IR_XATTR_BAD_*, after ORLOV_ERR_CORRUPT */
};

errcode_t ir_read_xattrs(ext2_filsys fs, ext2_ino_t ino,
			 const struct ext2_inode_large *inode,
			 struct ir_xattrs *out);
void ir_xattrs_free(struct ir_xattrs *x);

/* Target of a fast or slow symlink (NUL-terminated in @out). */
errcode_t ir_symlink_target(ext2_filsys fs, ext2_ino_t ino,
			    struct ext2_inode_large *inode, struct strbuf *out);

/* Device number of a chr/blk inode, old or new encoding. */
void ir_rdev(const struct ext2_inode_large *inode, unsigned int *major,
	     unsigned int *minor);

/*
 * A timestamp of the inode: seconds, and nanoseconds when the inode is
 * large enough to hold the _extra field (*has_nsec says so).
 */
enum ir_time { IR_MTIME, IR_CTIME };

void ir_inode_time(ext2_filsys fs, const struct ext2_inode_large *inode,
		   enum ir_time which, int64_t *sec, uint32_t *nsec,
		   int *has_nsec);

#endif
