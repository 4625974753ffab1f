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
#include "lib/clock.h"
#include "lib/keymap.h"

struct fs_state;
struct ifile;

/* A write to a block in use on disk before this run, held until commit. */
struct late {
	blk64_t blk;
	int link;		/* a directory or its map: written last */
	unsigned char *data;
};

/* ICHUNK consecutive inode numbers: which of them are staged, and where
 * their records are (stage.c). */
struct ichunk {
	uint64_t staged, existed, tailed;	/* bit k: inode first + k;
						   existed: in use on disk
						   before this run; tailed:
						   the record has the rest of
						   a large inode */
	uint32_t slot;		/* its place in memory + 1, 0: not there */
	int on_file;		/* written to the spill file */
};

/* A chunk's records in memory. */
/* The staged inodes: the cache the engine reads back and edits
 * (image_read_staged) and the commit writes, in inode order.  Records
 * are held by inode number in chunks; beyond a budget of chunks in
 * memory the least recently used go to an unlinked spill file, so that
 * memory does not grow with the tree. */
struct inode_cache {
	size_t n;		/* inodes staged */
	uint32_t recsz, tailsz;	/* a record: the inode, then the tail */
	uint64_t nchunks;
	struct ichunk **leaf;	/* by chunk number, in leaves made on use */
	size_t nleaf;
	struct slot_clock clk;	/* chunks in memory, chunk n at n on its
				   spill file */
	unsigned char *rbuf;	/* a chunk read back for the commit */
	uint64_t rbuf_chunk;	/* ... which one, + 1 */
	const char *spill_failed; /* "writing", "reading": its spill file's
				     error (TMPDIR's), for image_scratch_failed */
};

/* The staged inodes in inode order: start zeroed. */
struct icache_it {
	uint64_t chunk;
	uint32_t k;
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
	size_t stage_budget;	/* image_opts.stage_budget */
	int copy_at_commit;	/* no journal takes it: copy, then rename */
	const char **links_why;	/* ... or in place, hard links: say so */
	const char *in_place;	/* ... the reason said (LINKS_WHY) */
	struct image_region region;	/* the filesystem's bytes in the file */
	struct inode_cache icache;
	struct held_writes held;
	char *buf;		/* one block, for reads */
	unsigned char *ibuf;	/* one whole inode, for writes */
	struct quota_charges {	/* image_quota_charges, by (type, id) */
		struct quota_charge *v;
		size_t n, cap;
		struct keymap map;
	} qc;
};

/* Why an image file is written in place rather than through a copy. */
#define LINKS_WHY "it has more than one hard link"
/* ... or a partition of it: a copy of the whole disk is not made */
#define REGION_WHY "it holds the filesystem at an offset (a partition): " \
	"no copy of a whole disk image is made"

/* bridge.c: the block map of an existing inode into @f (ifile_init'ed):
 * extents or indirect blocks */
errcode_t load_map(struct image *img, const struct fs_state *fs,
		   const struct ext2_inode_large *inode, struct ifile *f);

/* quota_usage.c: the quota inode of @type, 0 when none */
uint32_t quota_inum(struct ext2_super_block *sb, int type);
/* the staged inode @ino changes from @old (NULL: as on disk,
 * or none) to @in: its owners' usage moves with it. */
errcode_t quota_charge_staged(struct image *img, uint32_t ino,
			      const struct ext2_inode_large *old,
			      const struct ext2_inode_large *in);
void quota_charges_free(struct quota_charges *qc);

/* lock.c */
errcode_t lock_image(const char *path, int dry, int held, int *fd);
errcode_t image_names_locked(const char *path, int fd);

/* shadow.c */
errcode_t make_shadow(struct image *img, int keep_owner, int *fd,
		      enum temp_step *step);
errcode_t open_shadow(struct image *img, int keep_owner, enum temp_step *step);
void drop_shadow(struct image *img);

/* stage.c */
errcode_t put_blocks(struct image *img, blk64_t blk, uint32_t count,
		     const void *buf, int link);
void free_held(struct image *img);
/* The next staged inode's number after @it (0: no more). */
uint32_t icache_next(const struct inode_cache *c, struct icache_it *it);
/* The staged inodes that existed on disk before this run, or the new
 * ones, into the inode tables. */
errcode_t write_inodes(struct image *img, struct inode_cache *c, int existed);
/* The held writes of one kind: @link, directories and their maps. */
errcode_t write_late(struct image *img, const struct held_writes *h, int link);

/* reserve.c: every block the in-place commit writes (and @extra)
 * allocated in the image file first; ORLOV_ERR_NO_HOST_SPACE. */
errcode_t reserve_commit(struct image *img, const struct fs_state *fs,
			 const blk64_t *extra, size_t nextra);
/* Does the commit's flush write group @g's block bitmap (@inode 0) or
 * inode bitmap (@inode 1)?  With the descriptors' checksums libext2fs
 * skips a bitmap its group's flags (ext4_group_after's, after the run)
 * call uninitialised: on an image of many groups, nearly all. */
int commit_writes_bitmap(ext2_filsys e, const struct fs_state *fs,
			 uint32_t g, int inode);

/* journal.c: the commit through the image's own JBD2 journal */
struct journal {
	blk64_t *map;		/* physical block of each journal block */
	uint32_t len, first, seq;
	struct journal_superblock_s *sb;	/* as read */
};
struct io_capture;

errcode_t journal_open(struct image *img, const struct fs_state *fs,
		       size_t need, struct journal *j);
void journal_free(struct journal *j);
size_t commit_bound(const struct image *img, const struct fs_state *fs);
/* Would journal_open take a transaction of @need blocks (*takes)? */
errcode_t journal_takes(struct image *img, const struct fs_state *fs,
			size_t need, int *takes);
errcode_t journal_commit(struct image *img, const struct journal *j,
			 struct io_capture *c, const char **what);

/* shadow.c: image_temp_create's file named .NAME.orlov-TAGINODE, for the
 * rollback file of a copy into a partition (partition.c) */
errcode_t image_temp_create_tag(const char *path, const char *tag,
				const struct stat *st, int keep_owner, int from,
				char **tmp, int *fd, enum temp_step *step);

#endif
