/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the image layer: the open image as its files share it.  Nothing
 * outside src/image/ includes this; the API is image.h (and bridge.h for
 * what crosses to the model).
 */
#ifndef ORLOV_IMAGE_INT_H
#define ORLOV_IMAGE_INT_H

#include <ext2fs/ext2fs.h>

#include "image/image.h"
#include "lib/keymap.h"

struct staged {
	uint32_t ino;
	struct ext2_inode_large inode;
	unsigned char *tail;	/* the rest of a large inode, or NULL */
	int existed;		/* in use on disk before this run */
};

/* A write to a block in use on disk before this run, held until commit. */
struct late {
	uint32_t blk;
	int link;		/* a directory or its map: written last */
	unsigned char *data;
};

/* The staged inodes: the cache the engine reads back and edits
 * (image_read_staged) and the commit writes, in inode order once
 * icache_sort has run. */
struct inode_cache {
	struct staged *inodes;
	size_t n, cap;
	struct keymap idx;	/* positions in inodes[], by number */
};

/* The writes to blocks in use, held for the commit. */
struct held_writes {
	struct late *late;
	size_t n, cap;
};

struct image {
	ext2_filsys fs;
	int lock_fd;		/* holds the flock, -1 when none */
	int dry;		/* --dry-run: every write dropped */
	char *shadow;		/* a copy being written (image_opts.commit) */
	int shadow_fd;		/* holds the copy's flock, -1 when none */
	char *path;		/* the image as opened: what the copy replaces */
	const char *name;	/* ... as messages name it (image_opts.name) */
	enum image_commit commit;
	int copy_at_commit;	/* no journal takes it: copy, then rename */
	const char **links_why;	/* ... or in place, hard links: say so */
	const char *in_place;	/* ... the reason said (LINKS_WHY) */
	struct image_region region;	/* the filesystem's bytes in the file */
	struct inode_cache icache;
	struct held_writes held;
	char *buf;		/* one block, for reads */
	unsigned char *ibuf;	/* one whole inode, for writes */
};

/* Why an image file is written in place rather than through a copy. */
#define LINKS_WHY "it has more than one hard link"
/* ... or a partition of it: a copy of the whole disk is not made */
#define REGION_WHY "it holds the filesystem at an offset (a partition): " \
	"no copy of a whole disk image is made"

/* lock.c */
errcode_t lock_image(const char *path, int dry, int held, int *fd);
void unlock_image(struct image *img);
errcode_t image_names_locked(const char *path, int fd);

/* shadow.c */
errcode_t make_shadow(struct image *img, int keep_owner, int *fd,
		      enum temp_step *step);
errcode_t open_shadow(struct image *img, int keep_owner, enum temp_step *step);
void drop_shadow(struct image *img);

/* stage.c */
errcode_t put_blocks(struct image *img, uint32_t blk, uint32_t count,
		     const void *buf, int link);
void free_held(struct image *img);
void icache_sort(struct inode_cache *c);
/* The staged inodes that existed on disk before this run, or the new
 * ones, into the inode tables (@c sorted). */
errcode_t write_inodes(struct image *img, const struct inode_cache *c,
		       int existed);
/* The held writes of one kind: @link, directories and their maps. */
errcode_t write_late(struct image *img, const struct held_writes *h, int link);

/* reserve.c: every block the in-place commit writes (and @extra)
 * allocated in the image file first; ORLOV_ERR_NO_HOST_SPACE. */
errcode_t reserve_commit(struct image *img, const blk64_t *extra,
			 size_t nextra);

/* journal.c: the commit through the image's own JBD2 journal */
struct journal {
	blk64_t *map;		/* physical block of each journal block */
	uint32_t len, first, seq;
	struct journal_superblock_s *sb;	/* as read */
};
struct io_captured;

errcode_t journal_open(struct image *img, size_t need, struct journal *j);
void journal_free(struct journal *j);
size_t commit_bound(const struct image *img);
errcode_t journal_commit(struct image *img, const struct journal *j,
			 const struct io_captured *c, size_t n,
			 const char **what);

#endif
