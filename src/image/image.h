/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The image layer's API for writing an image (image_read.h is the
 * read-only side, for orlov-layout; bridge.h what crosses to the model's
 * types; the files of src/image/ share image_int.h).  Nothing referenced
 * by the image's metadata is written before image_commit(): data,
 * indirect and new directory blocks go to blocks still free in the
 * on-disk bitmaps, writes to blocks in use are held until the commit, so
 * an abort leaves the filesystem as it was.
 */
#ifndef ORLOV_IMAGE_H
#define ORLOV_IMAGE_H

#include <sys/stat.h>
#include <ext2fs/ext2_fs.h>

#include "image/partition.h"
#include "lib/errctx.h"
#include "lib/names.h"

struct image;

/* How the commit is made safe against a kill or a crash. */
enum image_commit {
	IMAGE_COMMIT_AUTO,	/* an image file: its journal, else a copy */
	IMAGE_COMMIT_COPY,	/* --atomic: a copy from the start, always */
	IMAGE_COMMIT_IN_PLACE,	/* --in-place: the journal, else ordered */
	IMAGE_COMMIT_UNSEEN,	/* a file nobody sees yet: just write it */
};

struct image_opts {
	const char *name;	/* the image as messages name it (NULL: the
				   path opened); kept until image_commit */
	const char *undo;	/* a new undo file (libext2fs's undo I/O
				   manager; e2undo restores), or NULL */
	const char *fault;	/* a test's injected fault (io_guard_parse) */
	size_t stage_budget;	/* bytes of staged inodes kept in memory before
				   they spill (0: the default) */
	enum image_commit commit;
	const char **in_place_why; /* set when AUTO writes an image file in
				      place: why no copy (static text) */
	int dry;		/* --dry-run: opened read-only, nothing written */
	int *mount_unknown;	/* set when it cannot be told if it is mounted */
	int has_now;		/* the superblock's write time is @now */
	uint32_t now;		/* (SOURCE_DATE_EPOCH), not the clock */
	const int *held_fd;	/* the caller holds the flock of the file
				   at the path, on *held_fd; or NULL */
	unsigned int *stale;	/* set to the stale copies removed */
	unsigned int *restored;	/* rollback files applied (partition.h) */
	int ext4_driver;	/* --driver ext4: its features pass the gate */
	const struct image_region *region; /* where in the file the
				   filesystem is (partition.h); NULL: all */
};

/* Open read-write; refuses a mounted image, a dirty or unrecovered one,
 * and features the ext2 driver cannot write.  @opts may be NULL.  @ec
 * gets what failed, on the image by its name, with the feature refused
 * or what else the file is. */
errcode_t image_open(const char *path, const struct image_opts *opts,
		     struct image **out, struct errctx *ec);
/* Run e2fsck -fn on @path: 0 when it finds nothing, ORLOV_ERR_DAMAGED when
 * it does, ORLOV_ERR_NO_FSCK / ORLOV_ERR_FSCK_FAILED when it cannot say. */
errcode_t image_fsck(const char *path, const struct image_region *region);
/* The step of making a copy of the image that failed. */
enum temp_step { TEMP_CREATE, TEMP_MODE, TEMP_OWNER, TEMP_XATTR, TEMP_COPY };

/* A new empty file next to @path (.NAME.orlov-INODE), flocked on *fd
 * for as long as it stays open (image_remove_stale leaves it alone), with
 * @st's mode and, where it may be given (or must, @keep_owner), owner,
 * and the extended attributes and ACL of the file open as @from (-1:
 * none); else the mode of a new file.  *step says which step failed. */
errcode_t image_temp_create(const char *path, const struct stat *st,
			    int keep_owner, int from, char **tmp, int *fd,
			    enum temp_step *step);
/* Rename @tmp over @path and sync the directory.  @path must still be the
 * file open as @locked (ORLOV_ERR_IMAGE_REPLACED if not) or, with
 * @locked -1, not exist (EEXIST). */
errcode_t image_temp_commit(const char *tmp, const char *path, int locked);

/* The file @path names once a final symbolic link is followed (a link
 * to a link too): what a copy is renamed over. */
errcode_t image_resolve(const char *path, char **out);
/* An exclusive flock on the file @path; when there is none, *fd -1 (no
 * error), or with @create a new empty file, locked.  ORLOV_ERR_BUSY when
 * another holds it. */
errcode_t image_lock(const char *path, int create, int *fd);
/* Remove the copies of @path (.NAME.orlov-INODE) that killed runs left:
 * named for their own inode, non-empty, one link, and flocked by no live
 * process (no other file: a user's is never removed).  The caller holds
 * the image's lock.  *removed counts them. */
void image_remove_stale(const char *path, unsigned int *removed);

/* What a file holds, as far as --create and SOURCE care. */
enum image_probe { PROBE_MISSING, PROBE_EMPTY, PROBE_EXT, PROBE_OTHER };
/* PROBE_EMPTY: no byte, or only zeros (of a device, in its first MiB). */
errcode_t image_probe(const char *path, enum image_probe *kind);

/* The files the open image is (the image, the copy being written): a
 * walk of a SOURCE they lie in leaves them out.  Returns how many of
 * @max it put into @ids. */
size_t image_files(const struct image *img, struct file_id *ids, size_t max);

/*
 * What mounting the image at @path without options gives: *ext4 when it
 * has a feature only the ext4 driver writes (blkid calls it ext4, so
 * mount -t auto mounts it -t ext4), *delalloc when that mount delays
 * allocation (ext4 images, unless s_default_mount_opts has nodelalloc).
 * Both 0 for an image that cannot be read: image_open reports that.
 */
void image_mount_defaults(const char *path, const struct image_region *region,
			  int *ext4, int *delalloc);

/* Close without writing metadata back. */
void image_abort(struct image *img);

void image_hash_seed(const struct image *img, uint32_t seed[4]);
int image_has_filetype(const struct image *img);
/* dir_nlink: ext4 lets an htree directory past EXT4_LINK_MAX links. */
int image_has_dir_nlink(const struct image *img);
/* has_journal: the ext4 driver runs every change in a transaction */
int image_has_journal(const struct image *img);
/* huge_file: i_blocks in filesystem blocks past 2^32 sectors, and so
 * ext4_max_size's larger bound for extent-mapped files */
int image_has_huge_file(const struct image *img);
/* The project feature: the project id ext4_iget reads from @in (new
 * inodes get their parent's under PROJINHERIT); 0 (EXT4_DEF_PROJID)
 * without the feature or where the inode has no room for the field. */
uint32_t image_inode_projid(const struct image *img,
			    const struct ext2_inode_large *in);
/* The dir_index feature; the default hash and the unsigned adjustment. */
int image_dir_hash(const struct image *img, int *def_version, int *unsigned_adj);
/* The casefold feature's encoding (NULL without the feature), and
 * whether it is strict (EXT4_ENC_STRICT_MODE_FL). */
const struct ext2fs_nls_table *image_encoding(const struct image *img,
					     int *strict);

/* Resolve @path (absolute, inside the image) without following a final
 * symlink; ORLOV_ERR_NOT_DIR when it is no directory. */
errcode_t image_lookup_dir(struct image *img, const char *path, uint32_t *ino);
errcode_t image_read_inode(struct image *img, uint32_t ino,
			   struct ext2_inode_large *inode);

errcode_t image_write_blocks(struct image *img, uint64_t blk, uint32_t count,
			     const void *buf);

/* "writing" or "reading" when the staged inodes' spill file in TMPDIR
 * failed (the error is TMPDIR's, not the entry's), else NULL. */
const char *image_scratch_failed(const struct image *img);
/* Metadata: queue the inode; written at commit. */
errcode_t image_stage_inode(struct image *img, uint32_t ino,
			    const struct ext2_inode_large *inode);
/* A copy of the inode staged for @ino (ORLOV_ERR_CORRUPT: none): a
 * change reaches the image only through image_stage_inode again. */
errcode_t image_read_staged(struct image *img, uint32_t ino,
			    struct ext2_inode_large *inode);

void image_set_large_file(struct image *img);
/* Bytes of an inode past struct ext2_inode_large (ext4's in-inode
 * attributes live there), 0 for small inodes. */
size_t image_inode_tail_size(const struct image *img);
/* Give the staged inode @ino that tail (written with it at commit). */
errcode_t image_stage_inode_tail(struct image *img, uint32_t ino,
				 const unsigned char *tail);
errcode_t image_read_inode_tail(struct image *img, uint32_t ino,
				unsigned char *tail);
void image_set_ext_attr(struct image *img);
/* acl among the default mount options: new inodes inherit default ACLs */
int image_posix_acl(const struct image *img);
/* user_xattr among the default mount options: user.* can be set */
int image_user_xattr(const struct image *img);
errcode_t image_read_block(struct image *img, uint64_t blk, void *buf);

/* The quota feature (image/quota_usage.c): does the image keep usage of
 * quota type @type (0 user, 1 group, 2 project: model/quota_tree.h's
 * QT_USR, QT_GRP, QT_PRJ) in a hidden quota inode? */
int image_quota_on(const struct image *img, int type);
/* What the staged inodes changed in each owner's usage since the image
 * was opened: inodes and bytes, by quota type and id. */
struct quota_charge {
	uint32_t type, id;
	int64_t inodes, space;
};
const struct quota_charge *image_quota_charges(const struct image *img,
					       size_t *n);

#endif
