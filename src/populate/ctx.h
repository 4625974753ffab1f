/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state of one run of the engine (populate.h): what it reads from,
 * the image and the allocator model, the driver chosen for it, and one
 * part for each job: the first pass's estimate, the write pass's stack of
 * directories, hard links, attributes, file data and progress.
 */
#ifndef ORLOV_POPULATE_CTX_H
#define ORLOV_POPULATE_CTX_H

#include <stdio.h>
#include <time.h>
#include <sys/types.h>

#include "lib/util.h"
#include "populate/populate.h"
#include "populate/driver.h"
#include "image/image.h"
#include "image/bridge.h"
#include "source/source.h"
#include "source/reread.h"
#include "populate/dirnames.h"
#include "populate/dirspill.h"
#include "populate/inputs.h"
#include "populate/hardlinks.h"
#include "model/ialloc.h"
#include "model/write.h"
#include "model/xattr_set.h"
#include "model/casefold.h"
#include "lib/keymap.h"

#define RUN_BLOCKS 256		/* data written in runs of up to this */
#define DELAYED_BUDGET (1 << 20)	/* delayed files' records in memory */

/* A directory of the write pass, from the target down. */
struct frame {
	struct dirbuf d;
	struct ext2_inode_large inode;
	fsblk_t xblk;		/* its attribute block (i_file_acl, 48 bits) */
	uint32_t flags;		/* i_flags, for inheritance and TOPDIR */
	int is_target;
	int existing;		/* in the image already: the target, or a
				   directory --merge goes into */
	struct dir_names old_names;	/* an existing one's names as loaded */
	int acl_unread;		/* its attribute block, not read by get_acl yet */
	int added;		/* entries added to it */
	int last_alloc_group;	/* ext4's i_last_alloc_group */
};

struct frames {
	struct frame *v;
	size_t depth, cap;
};

/* A directory of the first pass, from the target down. */
struct scan_dir {
	uint32_t links;		/* its link count */
	int defacl;		/* it has a default ACL to pass on */
	uint32_t blocks, used;	/* its entries packed: blocks, and bytes
				   used in the last one */
	uint32_t had;		/* blocks it had before (the target) */
	struct dirbuf *existing;	/* the image's: target, merged */
	struct dir_names old_names;	/* existing's names (the target's
					   borrowed, a merged one's owned) */
	int owned;		/* existing is a merged one, ours */
	int cf;			/* casefolded: its names in cf_names */
	struct cf_set cf_names;
};

struct scan_dirs {
	struct scan_dir *v;
	size_t depth, cap;
};

/* A distinct attribute block of the first pass: the kernel shares
 * identical ones. */
struct xset {
	uint64_t hash;
	uint32_t refs;
	unsigned char *data;
	size_t next;		/* the next with the same hash, index + 1 */
};

struct xsets {
	struct xset *v;
	size_t n, cap;
	struct keymap by_hash;	/* the first of each hash */
};

/* The first pass: whether the tree fits, and the names it checked. */
struct pop_scan {
	struct scan_dirs dirs;
	uint64_t need_inodes, need_blocks;
	/* The source root's names as the first pass saw them (sorted): the
	 * write pass takes no name there that was not checked. */
	struct walk_names root_names;
	struct xsets xsets;
	unsigned char *cf_seen;	/* per --casefold path: a directory had it */
};

/* The directory the source root goes into. */
struct target {
	uint32_t ino, links;
	struct dirbuf *d;	/* its blocks until the write pass takes them */
	struct dir_names names;	/* its names, for both passes: the same */
};

/* Extended attributes and ACLs. */
struct attrs {
	struct xattr_blocks xb;
	struct xattr_set xs;	/* xs.posix_acl: new inodes inherit
				   default ACLs */
	int user_xattr;		/* user.* attributes can be set */
};

/* File data on its way to the image. */
struct pop_data {
	unsigned char *run, *chunk;
	fsblk_t run_start;	/* the run's first image block */
	uint32_t run_len;
	struct strbuf run_path;	/* the file whose data starts the run */
	/* the writeback's pending run in @run: image block, blocks */
	fsblk_t wb_phys;
	uint32_t wb_len;
	/* --delalloc: file data is read from the source at the writeback,
	 * by each file's note */
	int delalloc;
	struct delalloc da;
	struct strbuf note;	/* the file being written's */
	struct src_reread rr;
	struct wb_ahead *ahead;	/* while a writeback runs, or NULL */
	/* the last file written back in part while being written, on a
	 * dioread_nolock mount (0: none) */
	uint32_t pushed_ino;
	/* a delayed file's data read now (a block ext4_nonda_switch writes
	 * at once): @chunk holds [chunk_off, chunk_off + chunk_len) of
	 * the file being written */
	uint64_t chunk_off;
	size_t chunk_len;
	/* the delayed files' records past DELAYED_BUDGET (or the tests'
	 * stage_budget): a scratch file of their own, oldest first */
	int rec_open, rec_fd;
	uint64_t rec_len;	/* bytes of records in it */
	unsigned char *rec_win;	/* the writeback's window on it */
	size_t rec_win_cap;
};

/* The progress line and the summary's figures. */
struct progress {
	int on;
	time_t last;
	struct timespec t0;
	uint64_t total_entries, total_bytes;	/* the first pass's */
	uint8_t *group_used;
};

/* The quota files' trees (the quota feature): the write pass's, or the
 * first pass's, which only checks that they fit their blocks. */
struct pop_quota {
	struct qtree t[QT_NTYPES];
	struct ifile f[QT_NTYPES];	/* the write pass's: their maps */
	int on[QT_NTYPES];
	int write_pass;			/* else no map in f */
	uint64_t room[QT_NTYPES];	/* bytes their blocks hold */
	struct {			/* the entries the write pass made */
		uint32_t type, id;
	} *made;
	size_t nmade, made_cap;
};

struct pop_ctx {
	const struct populate_opts *o;
	struct populate_result *res;
	struct inputs *in;	/* SOURCE and the device table, read once */
	enum run_mode mode;
	const struct driver *drv;
	struct image *img;
	struct fs_state fs;
	uint64_t max_size;	/* the driver's s_maxbytes */
	struct ialloc_policy ia;
	struct target target;
	struct pop_scan scan;
	struct frames st;
	struct pop_links links;
	struct attrs xa;
	struct pop_data data;
	struct pop_dirspill dspill;	/* directories' blocks past budget */
	struct progress pr;
	struct pop_quota quota;
	unsigned char *xblock;	/* a block to build in */
};

/* The write pass's current directory. */
static inline struct frame *pop_top(struct pop_ctx *c)
{
	return &c->st.v[c->st.depth - 1];
}

errcode_t frame_push(struct pop_ctx *c);
void ctx_free(struct pop_ctx *c);

#endif
