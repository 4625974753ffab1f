// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The populate loop.  Entries come from the walker in the creation order
 * of the kernel contract, and each is created with the same steps, in the
 * same order, as the ext2 driver's namei.c does them:
 *   mkdir:   new inode, its first block, then the entry in the parent
 *   file:    new inode, the entry in the parent, data front to back, close
 *   symlink: new inode, its block if slow, then the entry in the parent
 *   other:   new inode, the entry in the parent
 *   link:    the entry in the parent
 * A first pass checks names, sizes and readability and that the tree fits,
 * before anything is written.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "populate/populate.h"
#include "image/image.h"
#include "image/image_read.h"
#include "model/ialloc.h"
#include "model/ext4_ialloc.h"
#include "model/write.h"
#include "model/xattr_set.h"
#include "model/mballoc.h"
#include "source/walk.h"
#include "source/source.h"
#include "image/mkfs.h"
#include "source/tar.h"
#include "model/xattr.h"
#include "model/xblock.h"
#include "model/acl.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* EXT2_FL_INHERITED, EXT2_REG_FLMASK, EXT2_OTHER_FLMASK of fs/ext2/ext2.h */
#define FL_INHERITED (FS_SECRM_FL | FS_UNRM_FL | FS_COMPR_FL | FS_SYNC_FL | \
		      FS_NODUMP_FL | FS_NOATIME_FL | FS_COMPRBLK_FL | \
		      FS_NOCOMP_FL | FS_JOURNAL_DATA_FL | FS_NOTAIL_FL | \
		      FS_DIRSYNC_FL)
#define FL_REG_MASK (~(uint32_t)(FS_DIRSYNC_FL | FS_TOPDIR_FL))
#define FL_OTHER_MASK ((uint32_t)(FS_NODUMP_FL | FS_NOATIME_FL))

#define RUN_BLOCKS 256		/* data written in runs of up to this */
#define EXT2_DRIVER_LINK_MAX 32000	/* fs/ext2/ext2.h: mkdir and link fail past it */

struct frame {
	struct dirbuf d;
	struct ext2_inode_large inode;
	uint32_t flags;		/* i_flags, for inheritance and TOPDIR */
	int is_target;
	int existing;		/* in the image already: the target, or a
				   directory --merge goes into */
	int acl_unread;		/* its attribute block, not read by get_acl yet */
	int added;		/* entries added to it */
	int last_alloc_group;	/* ext4's i_last_alloc_group */
};

struct link_ent {
	dev_t dev;
	ino_t src_ino;
	uint32_t ino;
};

/* What a run goes as far as: the first pass (sizing an image for
 * --create auto), the write pass without a byte written (--dry-run), or
 * all of it. */
enum run_mode { RUN_CHECK, RUN_DRY, RUN_WRITE };

/* What every run reads from: kept across the runs of --create auto. */
struct inputs {
	struct source src;	/* SOURCE: a directory or an archive */
	struct devtable dt;	/* --devtable */
	struct devtable *dtp;	/* &dt, or NULL without one */
	const char *path;	/* the image opened: IMAGE, or ... */
	char *tmp;		/* --create's new image until it is renamed */
	char *image;		/* IMAGE, a final symlink followed */
	int image_fd;		/* --create: IMAGE's flock, or -1 */
	int tmp_fd;		/* --create: @tmp's flock, or -1 */
	struct file_id skip[3];	/* the image's own files: not walked */
	size_t nskip;
	uint64_t digest;	/* --create: of the tree and options, for the
				   UUID (0: none) */
};

struct ctx {
	const struct options *o;
	/* The source root's names as the first pass saw them (sorted): the
	 * write pass takes no name there that was not checked. */
	struct walk_name *root_names;
	size_t nroot, root_cap;
	struct populate_result *res;
	struct image *img;
	struct fs_state fs;
	uint64_t max_size;	/* the driver's s_maxbytes */
	struct ialloc_policy ia;
	ialloc_find_group_fn *find_group;
	struct frame *stack;
	size_t depth, cap;
	struct link_ent *links;	/* sorted on (dev, ino) as they come: hashed */
	size_t nlinks, links_cap;
	size_t *link_slot;
	size_t link_slots;
	struct xattr_blocks xb;
	struct xattr_set xs;	/* new inodes inherit default ACLs: xs.posix_acl */
	int user_xattr;		/* user.* attributes can be set */
	unsigned char *run, *chunk, *xblock;
	uint32_t run_start, run_len;
	uint8_t *group_used;
	int progress;
	time_t last_progress;
	/* first pass */
	uint64_t need_inodes, need_blocks;
	uint32_t target_ino, target_links;
	struct scan_dir {	/* the directories being scanned */
		uint32_t links;	/* their link counts */
		int defacl;	/* they have a default ACL to pass on */
		uint32_t blocks, used;	/* its entries packed: blocks, and
					   bytes used in the last one */
		uint32_t had;	/* blocks it had before (the target) */
		struct dirbuf *existing;	/* the image's: target, merged */
		int owned;		/* existing is a merged one, ours */
	} *scan;
	size_t scan_cap;
	/* distinct attribute blocks: the kernel shares identical ones */
	struct xset {
		uint64_t hash;
		uint32_t refs;
		unsigned char *data;
	} *xsets;
	size_t nxsets, xsets_cap;
	uint32_t *xslot;	/* their index by hash (UINT32_MAX: empty) */
	size_t xslots;
	struct dirbuf *target;
	struct inputs *in;	/* SOURCE and the device table, read once */
	enum run_mode mode;
	uint64_t total_entries, total_bytes;	/* the first pass's, for progress */
	struct timespec t0;
	/* --delalloc: file data waits in a spill file for the writeback */
	struct delalloc da;
	FILE *spill;
	write_truncate_fn *truncate;
	write_release_fn *release;
};

/* The progress line on a terminal: not with -v, -q or --json. */
static int progress_wanted(const struct options *o)
{
	return o->verbosity == 0 && !o->json && isatty(STDERR_FILENO);
}

/* Record the first error with what was being done and where (verbatim). */
static errcode_t fail_at(struct ctx *c, errcode_t err, const char *what,
			 const char *where)
{
	if (!c->res->what) {
		c->res->what = what;
		c->res->where = where ? strdup(where) : NULL;
	}
	return err;
}

/* SOURCE/path, as messages name an entry (NULL without memory). */
static char *source_path(const struct ctx *c, const char *path)
{
	size_t sl = strlen(c->o->source), pl = strlen(path), n = sl + pl + 2;
	char *where = malloc(n);

	if (where)
		snprintf(where, n, "%s%s%s", c->o->source, pl ? "/" : "", path);
	return where;
}

/* fail_at for a path relative to the source root, shown under SOURCE. */
static errcode_t fail(struct ctx *c, errcode_t err, const char *what,
		      const char *path)
{
	char *where = source_path(c, path);

	fail_at(c, err, what, where);
	free(where);
	return err;
}

/* A device table names paths in the image: its errors say those, not
 * SOURCE's (where the entry may not even be). */
static int devtable_error(errcode_t err)
{
	return err == ORLOV_ERR_DEVTABLE_TYPE ||
	       err == ORLOV_ERR_DEVTABLE_MISSING;
}

/* @path of the source root as it is in the image: under the target. */
static char *image_path(const struct options *o, const char *path)
{
	size_t n = strlen(o->target) + strlen(path) + strlen(o->image) + 8;
	char *where = malloc(n);

	if (where)
		snprintf(where, n, "%s%s%s in %s", o->target,
			 strcmp(o->target, "/") && *path ? "/" : "", path,
			 o->image);
	return where;
}

static void walk_error(void *ctx, errcode_t err, const char *what,
		       const char *path)
{
	struct ctx *c = ctx;
	char *where;

	/* The reader's words may not outlive the walk (a device table's
	 * line number): keep a copy. */
	if (!c->res->what) {
		snprintf(c->res->what_buf, sizeof(c->res->what_buf), "%s", what);
		what = c->res->what_buf;
	}
	if (!devtable_error(err)) {
		fail(c, err, what, path);
		return;
	}
	where = image_path(c->o, path);
	fail_at(c, err, what, where);
	free(where);
}

/* ---- hard links ---------------------------------------------------- */

static size_t link_hash(const struct ctx *c, dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ULL ^ (uint64_t)dev;

	return (size_t)(h ^ (h >> 29)) & (c->link_slots - 1);
}

static struct link_ent *link_find(struct ctx *c, dev_t dev, ino_t ino)
{
	size_t s;

	if (!c->link_slots)
		return NULL;
	for (s = link_hash(c, dev, ino); c->link_slot[s] != SIZE_MAX;
	     s = (s + 1) & (c->link_slots - 1)) {
		struct link_ent *l = &c->links[c->link_slot[s]];

		if (l->dev == dev && l->src_ino == ino)
			return l;
	}
	return NULL;
}

static errcode_t link_add(struct ctx *c, dev_t dev, ino_t ino, uint32_t img_ino)
{
	size_t s, i;

	if (grow_array(&c->links, &c->links_cap, c->nlinks + 1,
		       sizeof(*c->links), 256))
		return ENOMEM;
	c->links[c->nlinks].dev = dev;
	c->links[c->nlinks].src_ino = ino;
	c->links[c->nlinks].ino = img_ino;
	c->nlinks++;
	if (2 * c->nlinks > c->link_slots) {
		size_t n = c->link_slots ? c->link_slots * 2 : 1024;
		size_t *ns = malloc(n * sizeof(*ns));

		if (!ns)
			return ENOMEM;
		free(c->link_slot);
		c->link_slot = ns;
		c->link_slots = n;
		for (s = 0; s < n; s++)
			ns[s] = SIZE_MAX;
		for (i = 0; i < c->nlinks; i++) {
			for (s = link_hash(c, c->links[i].dev, c->links[i].src_ino);
			     ns[s] != SIZE_MAX; s = (s + 1) & (n - 1))
				;
			ns[s] = i;
		}
		return 0;
	}
	for (s = link_hash(c, dev, ino); c->link_slot[s] != SIZE_MAX;
	     s = (s + 1) & (c->link_slots - 1))
		;
	c->link_slot[s] = c->nlinks - 1;
	return 0;
}

/* ---- small helpers -------------------------------------------------- */

static unsigned int ftype_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return EXT2_FT_REG_FILE;
	case S_IFDIR: return EXT2_FT_DIR;
	case S_IFCHR: return EXT2_FT_CHRDEV;
	case S_IFBLK: return EXT2_FT_BLKDEV;
	case S_IFIFO: return EXT2_FT_FIFO;
	case S_IFSOCK: return EXT2_FT_SOCK;
	case S_IFLNK: return EXT2_FT_SYMLINK;
	}
	return EXT2_FT_UNKNOWN;
}

static uint32_t mask_flags(mode_t mode, uint32_t flags)
{
	if (S_ISDIR(mode))
		return flags;
	if (S_ISREG(mode))
		return flags & FL_REG_MASK;
	return flags & FL_OTHER_MASK;
}

static struct frame *top(struct ctx *c)
{
	return &c->stack[c->depth - 1];
}

static uint32_t extra_time(const struct timespec *ts)
{
	int64_t sec = (int64_t)ts->tv_sec;
	uint32_t epoch = (uint32_t)(((sec - (int64_t)(int32_t)sec) >> 32) & 3);

	return ((uint32_t)ts->tv_nsec << 2) | epoch;
}

static void fill_inode(const struct ctx *c, const struct src_entry *e,
		       uint32_t flags, struct ext2_inode_large *in)
{
	const struct stat *st = &e->st;
	int extra = c->fs.g.inode_size >= EXT2_GOOD_OLD_INODE_SIZE + 32;
	struct timespec at = st->st_atim, mt = st->st_mtim, ct = st->st_ctim;
	int64_t tmin, tmax;

	meta_time_range(extra, &tmin, &tmax);
	meta_fit_time(&at, tmin, tmax);
	meta_fit_time(&mt, tmin, tmax);
	meta_fit_time(&ct, tmin, tmax);
	memset(in, 0, sizeof(*in));
	in->i_mode = (uint16_t)st->st_mode;
	in->i_uid = (uint16_t)st->st_uid;
	in->osd2.linux2.l_i_uid_high = (uint16_t)(st->st_uid >> 16);
	in->i_gid = (uint16_t)st->st_gid;
	in->osd2.linux2.l_i_gid_high = (uint16_t)(st->st_gid >> 16);
	in->i_atime = (uint32_t)at.tv_sec;
	in->i_mtime = (uint32_t)mt.tv_sec;
	in->i_ctime = (uint32_t)ct.tv_sec;
	in->i_links_count = 1;
	in->i_flags = flags;
	if (extra) {
		/* Room for the nanosecond fields, as mke2fs sizes them. */
		in->i_extra_isize = 32;
		in->i_atime_extra = extra_time(&at);
		in->i_mtime_extra = extra_time(&mt);
		in->i_ctime_extra = extra_time(&ct);
	}
}

static void set_blocks(const struct ctx *c, struct ext2_inode_large *in,
		       const struct ifile *f, int has_xattr)
{
	uint64_t sectors = (f->nblocks + (has_xattr ? 1 : 0)) *
			   (c->fs.g.block_size / 512);

	memcpy(in->i_block, f->i_block, sizeof(in->i_block));
	in->i_blocks = (uint32_t)sectors;
	in->osd2.linux2.l_i_blocks_hi = 0;
}

static void trace_inode(struct ctx *c, const struct frame *parent,
			const struct src_entry *e, int is_dir,
			const struct orlov_figures *f, uint32_t ino)
{
	if (!c->fs.trace)
		return;
	fprintf(c->fs.trace, "ext2_inode_alloc: dir=%u name=", parent->d.map.ino);
	fput_escaped(c->fs.trace, e->name, e->name_len);
	fprintf(c->fs.trace,
		" mode=%s branch=%s pgroup=%d avefreei=%d avefreeb=%d max_dirs=%d min_inodes=%d min_blocks=%d max_debt=%d group=%u ino=%u path=",
		is_dir ? "dir" : "other", orlov_branch_name(f->branch),
		f->pgroup, f->avefreei, f->avefreeb, f->max_dirs,
		f->min_inodes, f->min_blocks, f->max_debt,
		(ino - 1) / c->fs.g.inodes_per_group, ino);
	fput_escaped(c->fs.trace, e->path, strlen(e->path));
	putc('\n', c->fs.trace);
}

static void report(struct ctx *c, const struct src_entry *e, uint32_t ino)
{
	uint32_t group = (ino - 1) / c->fs.g.inodes_per_group;

	c->res->entries++;
	c->group_used[group] = 1;
	if (c->o->verbosity > 0) {
		/* --json keeps standard output for the one object */
		FILE *f = c->o->json ? stderr : stdout;

		fput_escaped(f, c->o->target, strlen(c->o->target));
		if (strcmp(c->o->target, "/"))
			putc('/', f);
		fput_escaped(f, e->path, strlen(e->path));
		fprintf(f, " %u %u\n", ino, group);
	} else if (c->progress) {
		time_t now = time(NULL);

		if (now != c->last_progress) {
			struct timespec t;
			double done, all, secs, rate;

			c->last_progress = now;
			clock_gettime(CLOCK_MONOTONIC, &t);
			secs = (double)(t.tv_sec - c->t0.tv_sec) +
			       (double)(t.tv_nsec - c->t0.tv_nsec) / 1e9;
			/* an entry weighs as much as a block of data */
			done = (double)c->res->entries +
			       (double)c->res->bytes / 4096.0;
			all = (double)c->total_entries +
			      (double)c->total_bytes / 4096.0;
			rate = secs > 0 ? (double)c->res->bytes / secs / 1048576.0 : 0;
			fprintf(stderr, "\r%3.0f%% %llu/%llu entries, %llu MiB, "
				"%.1f MiB/s, ",
				all > 0 ? 100.0 * done / all : 100.0,
				(unsigned long long)c->res->entries,
				(unsigned long long)c->total_entries,
				(unsigned long long)(c->res->bytes >> 20), rate);
			/* from the write pass's own pace, once it has one: a
			 * first entry over the whole run said hours */
			if (secs >= 1.0 && done > 0 && all >= done)
				fprintf(stderr, "ETA %.0f s   ",
					secs * (all - done) / done);
			else
				fprintf(stderr, "ETA ?   ");
		}
	}
}

/* ext2_new_inode: choose the group by policy, take the inode.  The caller
 * then inherits ACLs (init_acl) and calls new_inode_done: the kernel's
 * trace record comes at the end of ext2_new_inode. */
static errcode_t new_inode(struct ctx *c, const struct src_entry *e,
			   int is_dir, uint32_t *ino, struct orlov_figures *fig)
{
	struct frame *p = top(c);
	struct ialloc_parent par = {
		.group = (int)p->d.map.group, .ino = p->d.map.ino,
		.topdir = p->d.map.ino == EXT2_ROOT_INO ||
			  (p->flags & FS_TOPDIR_FL),
		.last_alloc_group = p->last_alloc_group,
	};
	struct orlov_figures f;
	int group;
	errcode_t err;

	group = c->find_group(&c->fs, &c->ia, &par, is_dir, e->name,
			      (int)e->name_len, &f);
	/* ext4_new_inode: the parent remembers the group chosen */
	p->last_alloc_group = group;
	err = orlov_take_inode(&c->fs, group, is_dir, ino);
	if (err)
		return fail(c, err, "allocating an inode for", e->path);
	*fig = f;
	return 0;
}

static void new_inode_done(struct ctx *c, const struct frame *parent,
			   const struct src_entry *e, int is_dir,
			   const struct orlov_figures *fig, uint32_t ino)
{
	trace_inode(c, parent, e, is_dir, fig, ino);
	report(c, e, ino);
}

static errcode_t add_link(struct ctx *c, const struct src_entry *e,
			  uint32_t ino)
{
	errcode_t err = dir_add_link(&c->fs, &top(c)->d, e->name, e->name_len,
				     ino, ftype_of(e->st.st_mode));

	top(c)->added++;
	return err ? fail(c, err, "adding a directory entry for", e->path) : 0;
}

/* ---- file data -------------------------------------------------------- */

static errcode_t run_flush(struct ctx *c)
{
	errcode_t err = 0;

	if (c->run_len)
		err = image_write_blocks(c->img, c->run_start, c->run_len, c->run);
	c->run_len = 0;
	return err;
}

static errcode_t run_add(struct ctx *c, uint32_t phys, const unsigned char *blk)
{
	uint32_t bs = c->fs.g.block_size;
	errcode_t err;

	if (c->run_len && (phys != c->run_start + c->run_len ||
			   c->run_len == RUN_BLOCKS)) {
		err = run_flush(c);
		if (err)
			return err;
	}
	if (!c->run_len)
		c->run_start = phys;
	memcpy(c->run + (size_t)c->run_len * bs, blk, bs);
	c->run_len++;
	return 0;
}

/* ---- delayed allocation (--delalloc) ---------------------------------- */

/* ext4_da_write_begin: no block yet, only a reservation; the data waits
 * in the spill file. */
static errcode_t delay_block(struct ctx *c, const struct src_entry *e,
			     uint64_t lb, const unsigned char *blk)
{
	if (fwrite(blk, c->fs.g.block_size, 1, c->spill) != 1 ||
	    ext4_da_reserve_block(&c->fs, &c->da, lb))
		return fail(c, errno ? errno : ENOMEM, "writing data of", e->path);
	return 0;
}

/* The writeback's sink: @n blocks of the spill file from @spill on into
 * the image at @phys, in runs. */
static errcode_t writeback_data(void *ctx, uint64_t spill, uint32_t phys,
				uint32_t n)
{
	struct ctx *c = ctx;
	uint32_t bs = c->fs.g.block_size;
	errcode_t err = 0;

	while (!err && n) {
		uint32_t m = n < RUN_BLOCKS ? n : RUN_BLOCKS;
		size_t len = (size_t)m * bs;

		if (pread(fileno(c->spill), c->run, len, (off_t)spill) !=
		    (ssize_t)len)
			err = errno ? errno : EIO;
		if (!err)
			err = image_write_blocks(c->img, phys, m, c->run);
		phys += m;
		n -= m;
		spill += len;
	}
	return err;
}

/* A file written back: its indirect blocks, and its inode's block map. */
static errcode_t writeback_done(void *ctx, const struct delayed *d)
{
	struct ctx *c = ctx;
	struct ext2_inode_large *in;
	errcode_t err = image_write_indirect(c->img, &c->fs, d->f);

	in = err ? NULL : image_staged_inode(c->img, d->ino);
	if (in)
		set_blocks(c, in, d->f, in->i_file_acl != 0);
	return err;
}

static errcode_t writeback(struct ctx *c)
{
	struct writeback_sink sink = {
		.data = writeback_data, .file_done = writeback_done, .ctx = c,
	};
	errcode_t err;

	if (c->spill && fflush(c->spill))
		return fail(c, errno, "writing data of", c->o->source);
	err = ext4_writeback(&c->fs, &c->da, &sink);
	return err ? fail_at(c, err, "writing back delayed data to", c->o->image) : 0;
}

/* Map logical block @lb (UINT64_MAX: none yet) and queue its contents.
 * @isize: i_size when the kernel maps it (ext4's mballoc sizes its
 * request by it). */
static errcode_t put_block(struct ctx *c, const struct src_entry *e,
			   struct ifile *f, uint64_t lb, uint64_t isize,
			   const unsigned char *blk)
{
	uint32_t phys;
	errcode_t err;

	if (lb == UINT64_MAX)
		return 0;
	if (c->spill) {
		int racy, nonda = ext4_nonda_switch(&c->fs, &c->da, lb,
						    c->o->cpus, &racy);

		if (racy && !c->res->racy_at)
			c->res->racy_at = source_path(c, e->path);
		if (!nonda)
			return delay_block(c, e, lb, blk);
	}
	err = write_begin_block(&c->fs, f, (uint32_t)lb, isize, &phys);
	if (!err)
		err = run_add(c, phys, blk);
	return err ? fail(c, err, "writing data of", e->path) : 0;
}

/*
 * Write the data ranges front to back.  The kernel maps a block when a
 * write() first touches it, so blocks are allocated in logical order and
 * only where data is; a block shared by two ranges is written once.
 */
static errcode_t copy_data(struct ctx *c, const struct src_entry *e,
			   struct ifile *f)
{
	uint32_t bs = c->fs.g.block_size;
	uint64_t size = (uint64_t)e->st.st_size, off = 0, s, t;
	uint64_t end = 0;		/* end of the last data range */
	uint64_t cur = UINT64_MAX;	/* logical block being filled */
	uint64_t cur_isize = 0;		/* i_size when it is mapped */
	unsigned char *blk = c->xblock;
	size_t chunk_cap = (size_t)RUN_BLOCKS * bs;
	errcode_t err;

	if (c->spill && delalloc_start(&c->da, f->ino))
		return fail(c, ENOMEM, "writing data of", e->path);
	while (off < size) {
		uint64_t r0;

		err = e->data->next_data(e, off, &s, &t);
		if (err)
			return fail(c, err, "reading", e->path);
		if (s >= size || s >= t)
			break;
		r0 = s;
		while (s < t) {
			size_t n = (size_t)(t - s < chunk_cap ? t - s : chunk_cap);
			size_t k = 0;

			/* a dry run allocates by the ranges alone */
			err = c->mode == RUN_DRY ? 0 :
			      e->data->read(e, c->chunk, n, s);
			if (err)
				return fail(c, err, "reading", e->path);
			while (k < n) {
				uint64_t lb = (s + k) / bs;
				size_t in = (size_t)((s + k) % bs);
				size_t m = bs - in < n - k ? bs - in : n - k;

				if (lb != cur) {
					err = put_block(c, e, f, cur, cur_isize,
							blk);
					if (err)
						return err;
					memset(blk, 0, bs);
					cur = lb;
					cur_isize = write_isize_at(r0, end, s + k);
				}
				memcpy(blk + in, c->chunk + k, m);
				k += m;
			}
			s += n;
		}
		off = end = t;
	}
	err = put_block(c, e, f, cur, cur_isize, blk);
	if (err)
		return err;
	if (c->spill)
		delalloc_cur(&c->da)->size = size;
	/* a trailing hole is made with ftruncate */
	if (end < size)
		c->truncate(&c->fs, f);
	err = run_flush(c);
	if (!err)
		err = image_write_indirect(c->img, &c->fs, f);
	return err ? fail(c, err, "writing data of", e->path) : 0;
}

/* ext4: a new inode's attribute space (i_extra_isize 32, zeroed as
 * __ext4_new_inode leaves it); none for small inodes or ext2. */
static errcode_t ibody_new(struct ctx *c, struct ifile *f)
{
	size_t n = c->fs.mb ? image_inode_tail_size(c->img) : 0;

	/* EXT4_INODE_HAS_XATTR_SPACE: the header and a terminator fit */
	if (n < 8)
		return 0;
	f->ibody = calloc(1, n);
	if (!f->ibody)
		return ENOMEM;
	f->ibody_size = n;
	return 0;
}

static errcode_t stage_inode(struct ctx *c, const struct ifile *f,
			     const struct ext2_inode_large *in)
{
	errcode_t err = image_stage_inode(c->img, f->ino, in);

	if (!err && f->ibody)
		err = image_stage_inode_tail(c->img, f->ino, f->ibody);
	return err;
}

/*
 * ext2_init_acl, inside ext2_new_inode: in a directory with a default ACL
 * a new directory inherits it, and any new inode but a symlink gets an
 * access ACL made from it and the create mode (the replay creates with
 * the permission bits and umask 0) unless that says no more than the mode.
 */
static errcode_t init_acl(struct ctx *c, struct frame *p, struct ifile *f,
			  const struct src_entry *e, uint32_t *file_acl)
{
	errcode_t err;

	if (!c->xs.posix_acl || S_ISLNK(e->st.st_mode))
		return 0;
	if (p->existing && p->acl_unread) {
		/* get_acl reads the directory's block: it joins the cache */
		xattr_blocks_cache_insert(&c->xb, p->inode.i_file_acl);
		p->acl_unread = 0;
	}
	err = ext2_init_acl(&c->xs, &p->d.map, p->inode.i_file_acl, f, file_acl,
			    e->st.st_mode);
	return err ? fail(c, err, "inheriting the default ACL for", e->path) : 0;
}

/*
 * The replay's chmod: with an access ACL, posix_acl_chmod rewrites its
 * owner, mask (or group) and other entries from the mode, and ext2_set_acl
 * drops it if it then says no more than the mode.
 */
static errcode_t chmod_acl(struct ctx *c, struct ifile *f,
			   const struct src_entry *e, uint32_t *file_acl)
{
	errcode_t err = xattr_chmod_acl(&c->xs, f, file_acl, e->st.st_mode);

	return err ? fail(c, err, "changing the mode of", e->path) : 0;
}

static int has_src_xattr(const struct src_entry *e, const char *name)
{
	size_t i;

	for (i = 0; i < e->nxattrs; i++)
		if (!strcmp(e->xattrs[i].name, name))
			return 1;
	return 0;
}

/*
 * Last, the ACLs the entry inherited but its source does not have are
 * removed (the replay's removexattr), so that the image holds exactly the
 * source's attributes.
 */
static errcode_t drop_acls(struct ctx *c, struct ifile *f,
			   const struct src_entry *e, uint32_t *file_acl)
{
	errcode_t err = xattr_drop_acls(&c->xs, f, file_acl, e->st.st_mode,
			has_src_xattr(e, "system.posix_acl_access"),
			has_src_xattr(e, "system.posix_acl_default"));

	return err ? fail(c, err, "removing inherited ACLs of", e->path) : 0;
}

/* The file's attributes, set one by one in table order (ext2_xattr_set
 * for each), which is how the replay sets them. */
static errcode_t write_xattrs(struct ctx *c, const struct src_entry *e,
			      struct ifile *f, uint32_t *file_acl)
{
	struct xattr_disk *d;
	errcode_t err = 0;
	size_t i, done = 0;
	const char *doing = "storing extended attributes of";

	if (!c->o->xattrs || !e->nxattrs)
		return 0;
	d = calloc(e->nxattrs, sizeof(*d));
	if (!d)
		return fail(c, ENOMEM, doing, e->path);
	for (; !err && done < e->nxattrs; done++)
		err = xattr_to_disk(&e->xattrs[done], &d[done]);
	if (!err) {
		xattr_disk_sort(d, e->nxattrs);
		for (i = 0; !err && i < e->nxattrs; i++)
			err = c->xs.set(&c->xs, f, file_acl, &d[i],
					xattr_mode_says_all(&c->xs, &d[i]));
	}
	for (i = 0; i < done; i++)
		xattr_disk_free(&d[i]);
	free(d);
	if (err)
		return fail(c, err, err == ORLOV_ERR_NO_BLOCKS ?
			    "allocating an attribute block for" : doing, e->path);
	return 0;
}

/* ---- the visitor ------------------------------------------------------ */

static errcode_t push(struct ctx *c)
{
	if (grow_array(&c->stack, &c->cap, c->depth + 1, sizeof(*c->stack), 32))
		return ENOMEM;
	memset(&c->stack[c->depth], 0, sizeof(c->stack[0]));
	c->stack[c->depth].last_alloc_group = EXT4_NO_LAST_ALLOC_GROUP;
	c->depth++;
	return 0;
}

static errcode_t recheck(struct ctx *c, const struct src_entry *e);

/* The blocks of a directory the image has (@in its inode) into @d, set
 * up by dirbuf_init: an htree where ext4 would use its index. */
static errcode_t load_dir(struct ctx *c, const struct ext2_inode_large *in,
			  struct dirbuf *d)
{
	errcode_t err = image_load_dir(c->img, &c->fs, in, d);

	d->indexed = c->fs.dx.enabled && (in->i_flags & EXT2_INDEX_FL) &&
		     d->nblocks > 1;
	return err;
}

/* May the source directory @e go into one the image has of its name?
 * With --merge, yes; lost+found at the root of the image always (mke2fs
 * made it; mke2fs -d reuses it too). */
static int merges(const struct ctx *c, const struct src_entry *e)
{
	return S_ISDIR(e->st.st_mode) &&
	       (c->o->merge || (c->depth == 1 && !strcmp(c->o->target, "/") &&
				e->name_len == 10 &&
				!memcmp(e->name, "lost+found", 10)));
}

/* Mode bits, owners and times of @e onto an inode the image has. */
static void take_attrs(const struct ctx *c, const struct src_entry *e,
		       struct ext2_inode_large *in)
{
	struct ext2_inode_large fresh;

	fill_inode(c, e, in->i_flags, &fresh);
	in->i_mode = (uint16_t)((in->i_mode & S_IFMT) | (fresh.i_mode & 07777));
	in->i_uid = fresh.i_uid;
	in->osd2.linux2.l_i_uid_high = fresh.osd2.linux2.l_i_uid_high;
	in->i_gid = fresh.i_gid;
	in->osd2.linux2.l_i_gid_high = fresh.osd2.linux2.l_i_gid_high;
	in->i_atime = fresh.i_atime;
	in->i_mtime = fresh.i_mtime;
	in->i_ctime = fresh.i_ctime;
	if (in->i_extra_isize >= 24 && fresh.i_extra_isize) {
		in->i_atime_extra = fresh.i_atime_extra;
		in->i_mtime_extra = fresh.i_mtime_extra;
		in->i_ctime_extra = fresh.i_ctime_extra;
	}
}

/* A frame for a directory the image has (the target, or one merged
 * into; @in its inode as read): its flags, and the attributes its new
 * entries inherit. */
static errcode_t load_existing(struct ctx *c, struct frame *n, uint32_t ino,
			       const struct ext2_inode_large *in)
{
	errcode_t err = 0;

	n->inode = *in;
	n->existing = 1;
	n->flags = n->inode.i_flags;
	if (!err && n->inode.i_file_acl &&
	    !xattr_blocks_known(&c->xb, n->inode.i_file_acl)) {
		/* Its default ACL is inherited, and its block can be shared
		 * once ext2 has read it. */
		err = image_read_block(c->img, n->inode.i_file_acl, c->xblock);
		if (!err && !xattr_block_valid(c->xblock, c->fs.g.block_size))
			err = ORLOV_ERR_CORRUPT;
		if (!err)
			err = xattr_blocks_adopt(&c->xb, n->inode.i_file_acl,
						 c->xblock);
		n->acl_unread = 1;
	}
	/* ext4 reads attributes in the inode first (a default ACL there is
	 * inherited) */
	if (!err && c->fs.mb && n->inode.i_extra_isize == 32)
		err = ibody_new(c, &n->d.map);
	if (!err && n->d.map.ibody) {
		err = image_read_inode_tail(c->img, ino, n->d.map.ibody);
		if (!err && !xattr_ibody_valid(n->d.map.ibody,
					       n->d.map.ibody_size))
			err = ORLOV_ERR_CORRUPT;
	}
	return err;
}

static errcode_t enter_dir(void *ctx, const struct src_entry *e)
{
	struct ctx *c = ctx;
	struct ext2_inode_large in;
	struct frame *p, *n;
	struct orlov_figures fig;
	uint32_t ino, flags;
	errcode_t err;

	if (!c->depth) {
		/* The source root maps onto the target directory. */
		err = push(c);
		if (err)
			return err;
		n = top(c);
		/* The frame owns the target's blocks from now on. */
		n->d = *c->target;
		free(c->target);
		c->target = NULL;
		n->is_target = 1;
		err = image_read_inode(c->img, c->target_ino, &in);
		if (!err)
			err = load_existing(c, n, c->target_ino, &in);
		if (err)
			return fail_at(c, err, "reading target directory", c->o->target);
		if (!c->o->root_attrs)
			return 0;
		/* --root-attrs: SOURCE's own mode, owners, times and
		 * attributes, as cp -a SOURCE/. TARGET gives them */
		take_attrs(c, e, &n->inode);
		if (c->o->xattrs && e->nxattrs &&
		    (n->inode.i_file_acl || (n->d.map.ibody &&
		     !xattr_ibody_empty(n->d.map.ibody, n->d.map.ibody_size))))
			return fail_at(c, ORLOV_ERR_TARGET_XATTRS,
				       "applying SOURCE's attributes to", c->o->target);
		return write_xattrs(c, e, &n->d.map, &n->inode.i_file_acl);
	}
	err = recheck(c, e);
	if (err)
		return err;
	p = top(c);
	if (p->existing && dir_lookup(&p->d, c->fs.g.block_size, e->name,
				      e->name_len, &ino)) {
		/* --merge: into the directory that is there, as cp -a does
		 * after mkdir's EEXIST */
		err = image_read_inode(c->img, ino, &in);
		if (!err && (!merges(c, e) || !S_ISDIR(in.i_mode)))
			err = ORLOV_ERR_EXISTS;
		if (!err)
			err = push(c);
		if (err)
			return fail(c, err, "merging", e->path);
		n = top(c);
		dirbuf_init(&n->d, ino, c->fs.g.inodes_per_group,
			    image_has_filetype(c->img));
		err = load_dir(c, &in, &n->d);
		if (!err)
			err = load_existing(c, n, ino, &in);
		/* cp -a then gives it the source's mode, owners and times
		 * (and so does mke2fs -d); its attributes stay */
		take_attrs(c, e, &n->inode);
		return err ? fail(c, err, "merging", e->path) : 0;
	}
	if (top(c)->inode.i_links_count >= EXT2_DRIVER_LINK_MAX)
		return fail(c, ORLOV_ERR_TOO_MANY_LINKS, "creating directory", e->path);
	err = new_inode(c, e, 1, &ino, &fig);
	if (err)
		return err;
	p = top(c);
	flags = mask_flags(e->st.st_mode, p->flags & FL_INHERITED) |
		(e->fsflags & FS_TOPDIR_FL);
	err = push(c);
	if (err)
		return err;
	p = &c->stack[c->depth - 2];
	n = top(c);
	dirbuf_init(&n->d, ino, c->fs.g.inodes_per_group, image_has_filetype(c->img));
	err = ibody_new(c, &n->d.map);
	if (err)
		return fail(c, err, "creating directory", e->path);
	n->flags = flags;
	fill_inode(c, e, flags, &n->inode);
	n->inode.i_links_count = 2;
	err = init_acl(c, p, &n->d.map, e, &n->inode.i_file_acl);
	if (err)
		return err;
	new_inode_done(c, p, e, 1, &fig, ino);
	err = dir_make_empty(&c->fs, &n->d, p->d.map.ino);
	if (err)
		return fail(c, err, "creating directory", e->path);
	err = dir_add_link(&c->fs, &p->d, e->name, e->name_len, ino, EXT2_FT_DIR);
	p->added++;
	if (err)
		return fail(c, err, "adding a directory entry for", e->path);
	p->inode.i_links_count++;
	err = chmod_acl(c, &n->d.map, e, &n->inode.i_file_acl);
	if (!err)
		err = write_xattrs(c, e, &n->d.map, &n->inode.i_file_acl);
	return err ? err : drop_acls(c, &n->d.map, e, &n->inode.i_file_acl);
}

static errcode_t leave_dir(void *ctx, const struct src_entry *e)
{
	struct ctx *c = ctx;
	struct frame *n = top(c);
	errcode_t err;

	if (n->is_target)
		return 0;	/* written back at commit */
	if (n->existing && !n->added) {
		/* merged into, nothing added: its blocks stay as they are */
		err = stage_inode(c, &n->d.map, &n->inode);
		dirbuf_release(&c->fs, &n->d);
		c->depth--;
		return err ? fail(c, err, "writing directory", e->path) : 0;
	}
	/* ext2_add_link clears the index flag ext2 does not use */
	if (n->existing && !c->fs.dx.enabled)
		n->inode.i_flags &= ~(uint32_t)EXT2_INDEX_FL;
	n->inode.i_size = (uint32_t)dir_size(&n->d, c->fs.g.block_size);
	set_blocks(c, &n->inode, &n->d.map, n->inode.i_file_acl != 0);
	if (n->d.indexed)
		n->inode.i_flags |= EXT2_INDEX_FL;
	err = image_write_dir(c->img, &c->fs, &n->d);
	if (!err)
		err = stage_inode(c, &n->d.map, &n->inode);
	dirbuf_release(&c->fs, &n->d);
	c->depth--;
	return err ? fail(c, err, "writing directory", e->path) : 0;
}

static errcode_t leaf(void *ctx, const struct src_entry *e)
{
	struct ctx *c = ctx;
	struct ext2_inode_large in;
	struct ifile f;
	struct link_ent *l = NULL;
	uint32_t ino, xblk = 0, flags, bs = c->fs.g.block_size;
	struct orlov_figures fig;
	mode_t m = e->st.st_mode;
	errcode_t err = recheck(c, e);

	if (err)
		return err;
	/* a name a directory merged into has (the first pass saw none) */
	if (top(c)->existing && dir_lookup(&top(c)->d, bs, e->name,
					   e->name_len, NULL))
		return fail(c, ORLOV_ERR_EXISTS, "copying", e->path);
	if (e->st.st_nlink > 1)
		l = link_find(c, e->st.st_dev, e->st.st_ino);
	if (l) {
		struct ext2_inode_large *old = image_staged_inode(c->img, l->ino);

		err = add_link(c, e, l->ino);
		if (err)
			return err;
		if (!old || old->i_links_count >= EXT2_DRIVER_LINK_MAX)
			return fail(c, ORLOV_ERR_TOO_MANY_LINKS, "linking", e->path);
		old->i_links_count++;
		report(c, e, l->ino);
		return 0;
	}

	err = new_inode(c, e, 0, &ino, &fig);
	if (err)
		return err;
	flags = mask_flags(m, top(c)->flags & FL_INHERITED);
	fill_inode(c, e, flags, &in);
	ifile_init(&f, ino, c->fs.g.inodes_per_group);
	err = ibody_new(c, &f);
	if (err) {
		fail(c, err, "creating", e->path);
		goto out;
	}
	err = init_acl(c, top(c), &f, e, &xblk);
	if (err)
		goto out;
	new_inode_done(c, top(c), e, 0, &fig, ino);

	if (S_ISLNK(m) && e->link_len + 1 > sizeof(in.i_block)) {
		/* Slow symlink: its one block before the parent's entry. */
		uint32_t phys;

		err = bmap_get_block(&c->fs, &f, 0, 0, &phys);
		if (!err) {
			memset(c->xblock, 0, bs);
			memcpy(c->xblock, e->link_target, e->link_len);
			err = image_write_blocks(c->img, phys, 1, c->xblock);
		}
		if (err) {
			err = fail(c, err, "writing symlink", e->path);
			goto out;
		}
	} else if (S_ISLNK(m)) {
		memcpy(in.i_block, e->link_target, e->link_len);
	}
	err = add_link(c, e, ino);
	if (err)
		goto out;

	if (S_ISREG(m)) {
		/* Attributes are set on the open file (fsetxattr, as cp -a
		 * does), so their block may use its window too. */
		err = copy_data(c, e, &f);
		if (!err)
			err = chmod_acl(c, &f, e, &xblk);
		if (!err)
			err = write_xattrs(c, e, &f, &xblk);
		if (!err)
			err = drop_acls(c, &f, e, &xblk);
		/* last close */
		c->release(&c->fs, &f, c->spill && delalloc_cur(&c->da)->n);
		if (err)
			goto out;
		c->res->bytes += (uint64_t)e->st.st_size;
		if ((uint64_t)e->st.st_size > 0x7fffffffULL)
			image_set_large_file(c->img);
	} else {
		err = chmod_acl(c, &f, e, &xblk);
		if (!err)
			err = write_xattrs(c, e, &f, &xblk);
		if (!err)
			err = drop_acls(c, &f, e, &xblk);
		if (err)
			goto out;
	}

	if (S_ISLNK(m)) {
		in.i_size = (uint32_t)e->link_len;
		if (e->link_len + 1 > sizeof(in.i_block))
			set_blocks(c, &in, &f, xblk != 0);
		else
			in.i_blocks = xblk ? bs / 512 : 0;
	} else if (S_ISREG(m)) {
		in.i_size = (uint32_t)e->st.st_size;
		in.i_size_high = (uint32_t)((uint64_t)e->st.st_size >> 32);
		set_blocks(c, &in, &f, xblk != 0);
	} else {
		in.i_blocks = xblk ? bs / 512 : 0;
		if (S_ISCHR(m) || S_ISBLK(m)) {
			unsigned int ma = major(e->st.st_rdev), mi = minor(e->st.st_rdev);

			/* old_encode_dev when it fits, else new_encode_dev */
			if (ma < 256 && mi < 256)
				in.i_block[0] = (ma << 8) | mi;
			else
				in.i_block[1] = (mi & 0xff) | (ma << 8) |
						((mi & ~0xffU) << 12);
		}
	}
	in.i_file_acl = xblk;
	err = stage_inode(c, &f, &in);
	if (!err && e->st.st_nlink > 1)
		err = link_add(c, e->st.st_dev, e->st.st_ino, ino);
	if (err)
		fail(c, err, "recording", e->path);
	if (!err && c->spill && S_ISREG(m)) {
		struct delayed *d = delalloc_cur(&c->da);

		/* the block map waits for the writeback; the inode's tail
		 * is staged already */
		if (d->n && !(d->f = malloc(sizeof(*d->f)))) {
			err = fail(c, ENOMEM, "recording", e->path);
		} else if (d->n) {
			free(f.ibody);
			f.ibody = NULL;
			*d->f = f;
			mb_inode_moved(&d->f->mb);
			memset(&f, 0, sizeof(f));
		} else {
			free(d->lb);
			c->da.n--;
		}
	}
out:
	ifile_release(&c->fs, &f);
	return err;
}

/* ---- first pass: will it fit, is every name and file acceptable ------- */

/* Refuse a name the image has where the entry goes; a directory it may
 * merge into is loaded, as the scan's next frame's. */
static errcode_t check_name(struct ctx *c, const struct src_entry *e,
			    struct dirbuf **merged, uint32_t *links)
{
	struct dirbuf *parent = c->scan[c->depth - 1].existing;
	struct walk_name *n;
	uint32_t ino;

	*merged = NULL;
	if (e->name_len > EXT2_NAME_LEN)
		return fail(c, ORLOV_ERR_NAME_TOO_LONG, "checking", e->path);
	/* Only names in directories the image has can collide. */
	if (parent && dir_lookup(parent, c->fs.g.block_size, e->name,
				 e->name_len, &ino)) {
		struct ext2_inode_large in;
		struct dirbuf *d;
		errcode_t err = image_read_inode(c->img, ino, &in);

		if (err)
			return fail(c, err, "checking", e->path);
		if (!merges(c, e) || !S_ISDIR(in.i_mode))
			return fail(c, ORLOV_ERR_EXISTS, "checking", e->path);
		d = calloc(1, sizeof(*d));
		if (!d)
			return ENOMEM;
		dirbuf_init(d, ino, c->fs.g.inodes_per_group,
			    image_has_filetype(c->img));
		err = load_dir(c, &in, d);
		if (err) {
			dirbuf_release(&c->fs, d);
			free(d);
			return fail(c, err, "reading directory", e->path);
		}
		*merged = d;
		*links = in.i_links_count;
	}
	if (c->depth != 1)
		return 0;
	if (grow_array(&c->root_names, &c->root_cap, c->nroot + 1,
		       sizeof(*c->root_names), 64))
		return ENOMEM;
	n = &c->root_names[c->nroot];
	n->s = malloc(e->name_len + 1);
	if (!n->s)
		return ENOMEM;
	memcpy(n->s, e->name, e->name_len + 1);
	n->len = e->name_len;
	c->nroot++;
	return 0;
}

static int root_name_cmp(const void *key, const void *elt)
{
	const struct src_entry *e = key;
	const struct walk_name *n = elt;

	return walk_name_cmp(e->name, e->name_len, n->s, n->len);
}

/*
 * The attributes must fit one block, and the kernel must accept them on a
 * mount with the image's default options: user.* needs user_xattr, ACLs
 * need acl (else setxattr fails with EOPNOTSUPP, and they could not be
 * read back either).
 */
static errcode_t xattrs_acceptable(struct ctx *c, const struct src_entry *e)
{
	const char *bad = NULL;
	errcode_t err;
	size_t i;

	if (!e->nxattrs || !c->o->xattrs)
		return 0;
	for (i = 0; i < e->nxattrs; i++) {
		const char *n = e->xattrs[i].name;

		if (!c->user_xattr && !strncmp(n, "user.", 5))
			return fail(c, ORLOV_ERR_NO_USER_XATTR,
				    "checking extended attributes of", e->path);
		if (!c->xs.posix_acl && !strncmp(n, "system.posix_acl_", 17))
			return fail(c, ORLOV_ERR_NO_ACL,
				    "checking extended attributes of", e->path);
	}
	err = xattr_build_block(e->xattrs, e->nxattrs, c->xblock,
				c->fs.g.block_size, c->xb.name_hash, &bad);
	if (err)
		return fail(c, err, "checking extended attributes of", e->path);
	return 0;
}

/*
 * A block for the attributes just built in c->xblock, unless an identical
 * one is already counted and has references to spare: the kernel's
 * mbcache shares it (up to 1024 references).
 */
/* The index of c->xsets, open addressing on the hash: a tree with a
 * million distinct sets is counted in linear time. */
static errcode_t xset_index_grow(struct ctx *c)
{
	size_t cap = c->xslots ? c->xslots * 2 : 256, k, i;
	uint32_t *slot = malloc(cap * sizeof(*slot));

	if (!slot)
		return ENOMEM;
	memset(slot, 0xff, cap * sizeof(*slot));
	for (k = 0; k < c->nxsets; k++) {
		for (i = (size_t)c->xsets[k].hash & (cap - 1); slot[i] != UINT32_MAX;
		     i = (i + 1) & (cap - 1))
			;
		slot[i] = (uint32_t)k;
	}
	free(c->xslot);
	c->xslot = slot;
	c->xslots = cap;
	return 0;
}

static errcode_t count_xattr_block(struct ctx *c)
{
	uint32_t bs = c->fs.g.block_size, i;
	uint64_t h = 0xcbf29ce484222325ULL;
	struct xset *x;
	size_t k;

	for (i = 0; i < bs; i++)
		h = (h ^ c->xblock[i]) * 0x100000001b3ULL;
	if ((c->nxsets + 1) * 2 > c->xslots && xset_index_grow(c))
		return ENOMEM;
	for (k = (size_t)h & (c->xslots - 1); c->xslot[k] != UINT32_MAX;
	     k = (k + 1) & (c->xslots - 1)) {
		x = &c->xsets[c->xslot[k]];
		if (x->hash == h && !memcmp(x->data, c->xblock, bs)) {
			if (x->refs++ % 1024 == 0)
				c->need_blocks++;
			return 0;
		}
	}
	if (grow_array(&c->xsets, &c->xsets_cap, c->nxsets + 1,
		       sizeof(*c->xsets), 16))
		return ENOMEM;
	x = &c->xsets[c->nxsets];
	x->data = malloc(bs);
	if (!x->data)
		return ENOMEM;
	memcpy(x->data, c->xblock, bs);
	x->hash = h;
	x->refs = 1;
	c->xslot[k] = (uint32_t)c->nxsets;
	c->nxsets++;
	c->need_blocks++;
	return 0;
}

static errcode_t check_xattrs(struct ctx *c, const struct src_entry *e)
{
	errcode_t err = xattrs_acceptable(c, e);

	if (!err && e->nxattrs && c->o->xattrs)
		err = count_xattr_block(c);
	return err;
}

/* One more entry of @name_len in the directory @d: ext2_add_link fills a
 * block before it takes the next (an upper bound: it also fills slack
 * left in earlier blocks). */
static void scan_add_entry(struct ctx *c, struct scan_dir *d, size_t name_len)
{
	uint32_t rec = 8 + (((uint32_t)name_len + 3) & ~3U);

	if (d->used + rec > c->fs.g.block_size) {
		d->blocks++;
		d->used = rec;
	} else {
		d->used += rec;
	}
}

/* The blocks a directory of @nblocks blocks of entries takes, indirect
 * ones included; an htree's leaves are split half full, and it has a root
 * and, past one index block, a second level. */
static uint64_t dir_blocks_needed(const struct ctx *c, uint64_t nblocks)
{
	uint32_t bs = c->fs.g.block_size;

	if (c->fs.dx.enabled && nblocks > 1)
		nblocks = 2 * nblocks + 1 + 2 * nblocks / (bs / 8 - 1);
	return bmap_blocks_needed(bs / 4, nblocks);
}

/*
 * The write pass reads the tree again, and it may have changed since the
 * first pass checked it: whatever that pass would have refused is refused
 * here too, before anything of the entry is written (and nothing written
 * so far is visible: image.h).  A name in the source root that the first
 * pass did not see was never checked against the target's entries.
 */
/* What the driver cannot store whatever the space: a symlink target
 * past a block, a size past s_maxbytes, a type it has no inode for.  Both
 * passes ask (@what: "checking", "copying"). */
static errcode_t check_kind(struct ctx *c, const struct src_entry *e,
			    const char *what)
{
	mode_t m = e->st.st_mode;

	if (S_ISLNK(m) && e->link_len + 1 > c->fs.g.block_size)
		return fail(c, ORLOV_ERR_SYMLINK_TOO_LONG, what, e->path);
	if (S_ISREG(m) && (uint64_t)e->st.st_size > c->max_size)
		return fail(c, ORLOV_ERR_FILE_TOO_BIG, what, e->path);
	if (!S_ISDIR(m) && !S_ISREG(m) && !S_ISLNK(m) && !S_ISCHR(m) &&
	    !S_ISBLK(m) && !S_ISFIFO(m) && !S_ISSOCK(m))
		return fail(c, ORLOV_ERR_UNSUPP_FILETYPE, what, e->path);
	return 0;
}

static errcode_t recheck(struct ctx *c, const struct src_entry *e)
{
	errcode_t err;

	if (e->name_len > EXT2_NAME_LEN)
		return fail(c, ORLOV_ERR_NAME_TOO_LONG, "checking", e->path);
	if (c->depth == 1 && !bsearch(e, c->root_names, c->nroot,
				      sizeof(*c->root_names), root_name_cmp))
		return fail(c, ORLOV_ERR_SOURCE_CHANGED, "copying", e->path);
	err = check_kind(c, e, "copying");
	return err ? err : xattrs_acceptable(c, e);
}

/* ORLOV_ERR_TARGET_XATTRS when the target has attributes (block or,
 * for ext4, inode) that --root-attrs would have to replace. */
static errcode_t target_has_xattrs(struct ctx *c)
{
	struct ext2_inode_large in;
	struct ifile f;
	errcode_t err = image_read_inode(c->img, c->target_ino, &in);

	if (err || in.i_file_acl)
		return err ? err : ORLOV_ERR_TARGET_XATTRS;
	memset(&f, 0, sizeof(f));
	if (in.i_extra_isize == 32)
		err = ibody_new(c, &f);
	if (!err && f.ibody)
		err = image_read_inode_tail(c->img, c->target_ino, f.ibody);
	if (!err && f.ibody && !xattr_ibody_empty(f.ibody, f.ibody_size))
		err = ORLOV_ERR_TARGET_XATTRS;
	free(f.ibody);
	return err;
}

static errcode_t scan_enter(void *ctx, const struct src_entry *e)
{
	struct ctx *c = ctx;
	struct dirbuf *merged = NULL;
	struct scan_dir *d;
	uint32_t links = 0;
	errcode_t err;

	if (grow_array(&c->scan, &c->scan_cap, c->depth + 1,
		       sizeof(*c->scan), 32))
		return ENOMEM;
	d = &c->scan[c->depth];
	memset(d, 0, sizeof(*d));
	/* An inherited ACL may take a block of its own (more at most). */
	if (c->depth && c->scan[c->depth - 1].defacl)
		c->need_blocks++;
	d->defacl = c->depth && c->xs.posix_acl &&
		has_src_xattr(e, "system.posix_acl_default");
	if (c->depth) {
		err = check_name(c, e, &merged, &links);
		if (err)
			return err;
	}
	if (merged) {
		/* like the target: its links, new entries in new blocks */
		d->existing = merged;
		d->owned = 1;
		d->links = links;
		d->blocks = d->had = merged->nblocks;
		d->used = c->fs.g.block_size;
		c->total_entries++;
		c->depth++;
		return 0;
	}
	if (c->depth) {
		/* ext2 refuses a mkdir past its link limit: so do we, early. */
		if (c->scan[c->depth - 1].links++ >= EXT2_DRIVER_LINK_MAX)
			return fail(c, ORLOV_ERR_TOO_MANY_LINKS, "creating directory", e->path);
		c->need_inodes++;
		c->total_entries++;
		scan_add_entry(c, &c->scan[c->depth - 1], e->name_len);
		err = check_xattrs(c, e);
		if (err)
			return err;
	}
	d->links = c->depth ? 2 : c->target_links;
	if (c->depth) {
		/* "." and ".." in its first block */
		d->blocks = 1;
		d->used = 24;
		d->had = 0;
	} else {
		if (c->o->root_attrs && c->o->xattrs && e->nxattrs) {
			/* its attribute block (at most), where it has none */
			err = target_has_xattrs(c);
			if (err)
				return fail_at(c, err, "applying SOURCE's attributes to",
					       c->o->target);
			err = check_xattrs(c, e);
			if (err)
				return err;
		}
		/* the target: new entries in new blocks (at most) */
		d->existing = c->target;
		d->blocks = d->had = c->target->nblocks;
		d->used = c->fs.g.block_size;
	}
	c->depth++;
	return 0;
}

static void scan_drop(struct ctx *c, struct scan_dir *d)
{
	if (d->owned) {
		dirbuf_release(&c->fs, d->existing);
		free(d->existing);
	}
	d->existing = NULL;
	d->owned = 0;
}

static errcode_t scan_leave(void *ctx, const struct src_entry *e)
{
	struct ctx *c = ctx;
	const struct scan_dir *d = &c->scan[c->depth - 1];

	(void)e;
	c->need_blocks += dir_blocks_needed(c, d->blocks) -
			  (d->had ? dir_blocks_needed(c, d->had) : 0);
	scan_drop(c, &c->scan[c->depth - 1]);
	c->depth--;
	return 0;
}

static errcode_t scan_leaf(void *ctx, const struct src_entry *e)
{
	struct ctx *c = ctx;
	uint32_t bs = c->fs.g.block_size, apb = bs / 4;
	uint64_t max_blocks = EXT2_NDIR_BLOCKS + apb + (uint64_t)apb * apb +
			      (uint64_t)apb * apb * apb;
	struct dirbuf *merged;
	uint32_t links;
	errcode_t err = check_name(c, e, &merged, &links);

	c->total_entries++;
	if (S_ISREG(e->st.st_mode))
		c->total_bytes += (uint64_t)e->st.st_size;

	if (err)
		return err;
	scan_add_entry(c, &c->scan[c->depth - 1], e->name_len);
	if (e->st.st_nlink > 1) {
		if (link_find(c, e->st.st_dev, e->st.st_ino))
			return 0;
		err = link_add(c, e->st.st_dev, e->st.st_ino, 0);
		if (err)
			return err;
	}
	c->need_inodes++;
	if (c->depth && c->scan[c->depth - 1].defacl && !S_ISLNK(e->st.st_mode))
		c->need_blocks++;	/* an inherited access ACL */
	err = check_xattrs(c, e);
	if (err)
		return err;
	err = check_kind(c, e, "checking");
	if (err)
		return err;
	if (S_ISLNK(e->st.st_mode)) {
		if (e->link_len + 1 > 60)
			c->need_blocks++;
	} else if (S_ISREG(e->st.st_mode)) {
		uint64_t off = 0, s, t, nb = 0, last = UINT64_MAX;

		/* Opening it here also proves it readable before we write. */
		while (off < (uint64_t)e->st.st_size) {
			err = e->data->next_data(e, off, &s, &t);
			if (err)
				return fail(c, err, "reading", e->path);
			if (s >= t)
				break;
			nb += (t - 1) / bs - s / bs + 1 - (s / bs == last);
			last = (t - 1) / bs;
			off = t;
		}
		/* The driver refuses to write or truncate past s_maxbytes,
		 * holes or not (the size itself: check_kind); nor can the
		 * block map reach past its triple indirect blocks. */
		if (last != UINT64_MAX && last >= max_blocks)
			return fail(c, ORLOV_ERR_FILE_TOO_BIG, "checking", e->path);
		c->need_blocks += bmap_blocks_needed(apb, nb);
	}
	return 0;
}

/* The tree does not fit: say by how much, so the user knows what size or
 * -N to ask for. */
static errcode_t too_small(struct ctx *c, errcode_t err)
{
	const struct populate_result *r = c->res;
	char *where;
	size_t n = strlen(c->o->source) + strlen(c->o->image) + 160;

	where = malloc(n);
	if (!where)
		return fail_at(c, err, "checking", c->o->source);
	if (err == ORLOV_ERR_NO_INODES)
		snprintf(where, n, "%s: it needs %llu inodes, %s has %llu free",
			 c->o->source, (unsigned long long)r->need_inodes,
			 c->o->image, (unsigned long long)r->free_inodes);
	else
		snprintf(where, n, "%s: it needs %llu blocks of %u bytes, %s "
			 "has %llu free", c->o->source,
			 (unsigned long long)r->need_blocks, r->block_size,
			 c->o->image, (unsigned long long)r->free_blocks);
	fail_at(c, err, "checking", where);
	free(where);
	return err;
}

static errcode_t first_pass(struct ctx *c)
{
	struct walk_opts wo = { .want_xattrs = c->o->xattrs, .want_data = 1,
				.skip = c->in->skip, .nskip = c->in->nskip };
	struct walk_visitor v = {
		.enter_dir = scan_enter, .leave_dir = scan_leave,
		.leaf = scan_leaf, .error = walk_error, .ctx = c,
	};
	errcode_t err = source_walk(&c->in->src, &wo, &c->o->meta, c->in->dtp, &v);

	while (c->depth > 0)	/* frames an error left */
		scan_drop(c, &c->scan[--c->depth]);
	c->nlinks = 0;
	free(c->link_slot);
	c->link_slot = NULL;
	c->link_slots = 0;
	if (err)
		return err;
	c->res->need_inodes = c->need_inodes;
	c->res->need_blocks = c->need_blocks;
	c->res->free_inodes = (uint64_t)percpu_counter_sum(&c->fs.freei);
	c->res->free_blocks = (uint64_t)percpu_counter_sum(&c->fs.freeb);
	c->res->block_size = c->fs.g.block_size;
	c->res->fs_blocks = c->fs.g.blocks_count;
	c->res->fs_inodes = c->fs.g.inodes_count;
	if (c->need_inodes > c->res->free_inodes)
		return too_small(c, ORLOV_ERR_NO_INODES);
	if (c->need_blocks > c->res->free_blocks)
		return too_small(c, ORLOV_ERR_NO_BLOCKS);
	return 0;
}

/* ---- driver ------------------------------------------------------------ */

static errcode_t open_target(struct ctx *c)
{
	struct ext2_inode_large in;
	errcode_t err;

	err = image_lookup_dir(c->img, c->o->target, &c->target_ino);
	if (err == EXT2_ET_FILE_NOT_FOUND)
		err = ORLOV_ERR_NO_TARGET;	/* not libext2fs's words */
	if (!err)
		err = image_read_inode(c->img, c->target_ino, &in);
	if (err)
		return fail_at(c, err, "looking up target directory", c->o->target);
	c->target_links = in.i_links_count;
	c->target = calloc(1, sizeof(*c->target));
	if (!c->target)
		return ENOMEM;
	dirbuf_init(c->target, c->target_ino, c->fs.g.inodes_per_group,
		    image_has_filetype(c->img));
	err = load_dir(c, &in, c->target);
	return err ? fail_at(c, err, "reading target directory", c->o->target) : 0;
}

static errcode_t commit(struct ctx *c)
{
	struct frame *t = &c->stack[0];
	const char *what = NULL;
	errcode_t err;
	size_t i;

	/* The target: new blocks, link count, size; ext2_add_link clears
	 * the (unused by ext2) index flag, ext4 keeps or sets it. */
	t->inode.i_size = (uint32_t)dir_size(&t->d, c->fs.g.block_size);
	set_blocks(c, &t->inode, &t->d.map, t->inode.i_file_acl != 0);
	if (c->o->root_owner) {
		t->inode.i_uid = (uint16_t)c->o->root_uid;
		t->inode.osd2.linux2.l_i_uid_high = (uint16_t)(c->o->root_uid >> 16);
		t->inode.i_gid = (uint16_t)c->o->root_gid;
		t->inode.osd2.linux2.l_i_gid_high = (uint16_t)(c->o->root_gid >> 16);
	}
	if (!c->fs.dx.enabled)
		t->inode.i_flags &= ~(uint32_t)EXT2_INDEX_FL;
	else if (t->d.indexed)
		t->inode.i_flags |= EXT2_INDEX_FL;
	err = image_write_dir(c->img, &c->fs, &t->d);
	for (i = 0; !err && i < c->xb.n; i++)
		if (c->xb.b[i].blk)
			err = image_write_blocks(c->img, c->xb.b[i].blk, 1,
						 c->xb.b[i].data);
	if (!err && c->xb.allocated)
		image_set_ext_attr(c->img);
	if (!err)
		err = stage_inode(c, &t->d.map, &t->inode);
	if (err)
		return fail_at(c, err, "writing target directory", c->o->target);
	err = image_commit(c->img, &c->fs, &what);
	c->img = NULL;
	return err ? fail_at(c, err, what, c->o->image) : 0;
}

static void ctx_free(struct ctx *c)
{
	size_t i;

	if (c->img)
		image_abort(c->img);
	while (c->depth > 0) {
		dirbuf_release(&c->fs, &top(c)->d);
		c->depth--;
	}
	if (c->target)
		dirbuf_release(&c->fs, c->target);
	free(c->target);
	walk_free_names(c->root_names, c->nroot);
	for (i = 0; i < c->nxsets; i++)
		free(c->xsets[i].data);
	free(c->xsets);
	free(c->xslot);
	free(c->stack);
	free(c->scan);
	free(c->links);
	free(c->link_slot);
	xattr_blocks_free(&c->xb);
	free(c->run);
	free(c->chunk);
	free(c->xblock);
	free(c->group_used);
	if (c->fs.trace)
		fclose(c->fs.trace);
	delalloc_free(&c->fs, &c->da);
	if (c->spill)
		fclose(c->spill);
	mb_state_free(&c->fs);
	fs_state_free(&c->fs);
}

/* What a mistaken command line most often means, before anything is
 * written: the arguments swapped, an archive or a file given as SOURCE,
 * an image that does not exist (yet). */
static errcode_t check_args(const struct options *o, int *archive)
{
	unsigned char head[1088];
	struct stat st, ist;
	enum image_probe kind;
	ssize_t n = 0;
	int fd;

	*archive = !strcmp(o->source, "-");
	if (!*archive && stat(o->source, &st) == 0 && !S_ISDIR(st.st_mode)) {
		fd = open(o->source, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			n = pread(fd, head, sizeof(head), 0);
			close(fd);
		}
		if (n >= 1082 && get_le16(head + 1080) == EXT2_SUPER_MAGIC &&
		    stat(o->image, &ist) == 0 && S_ISDIR(ist.st_mode))
			return ORLOV_ERR_SOURCE_IS_IMAGE;
		/* An image starts with 1 KiB of zeros, which libarchive
		 * reads as an empty tar: 0 entries, and with --create
		 * IMAGE (the real SOURCE) overwritten. */
		if (!image_probe(o->source, &kind) && kind == PROBE_EXT)
			return ORLOV_ERR_SOURCE_IS_FS;
		if (!image_probe(o->source, &kind) && kind == PROBE_EMPTY)
			return ORLOV_ERR_SOURCE_ZEROS;
		/* anything else not a directory: libarchive says what it is */
		*archive = 1;
		if (tar_supported())
			return 0;
		if ((n >= 262 && !memcmp(head + 257, "ustar", 5)) ||
		    (n >= 2 && head[0] == 0x1f && head[1] == 0x8b) ||
		    (n >= 6 && !memcmp(head, "\xfd" "7zXZ", 5)) ||
		    (n >= 3 && !memcmp(head, "BZh", 3)) ||
		    (n >= 4 && !memcmp(head, "\x28\xb5\x2f\xfd", 4)) ||
		    (n >= 6 && !memcmp(head, "07070", 5)))
			return ORLOV_ERR_SOURCE_IS_ARCHIVE;
		return ORLOV_ERR_NOT_DIR;
	}
	if (!o->create && stat(o->image, &ist) && errno == ENOENT)
		return ORLOV_ERR_NO_IMAGE;
	/* mke2fs asks before it overwrites what it recognises; -F, which
	 * --create gives it, does not ask */
	if (o->create && !o->force && !image_probe(o->image, &kind) &&
	    kind == PROBE_OTHER)
		return ORLOV_ERR_CREATE_CLOBBER;
	return 0;
}

/* Read SOURCE's archive, all of it, before IMAGE is touched. */
static errcode_t load_archive(const struct options *o,
			      struct populate_result *res, struct inputs *in)
{
	struct tar_tree *t;
	char *msg = NULL, *member = NULL;
	errcode_t err = tar_load(o->source, &t, &msg, &member);
	size_t n;

	if (!err) {
		in->src.tar = t;
		return 0;
	}
	res->what = "reading archive";
	n = strlen(o->source) + (msg ? strlen(msg) : 0) +
	    (member ? strlen(member) : 0) + 16;
	res->where = malloc(n);
	if (res->where)
		snprintf(res->where, n, "%s%s%s%s%s%s", o->source,
			 member ? " member " : "", member ? member : "",
			 msg ? " (" : "", msg ? msg : "", msg ? ")" : "");
	free(msg);
	free(member);
	return err;
}

/* Everything that can be refused before IMAGE is opened; SOURCE's
 * archive and the device table read. */
static errcode_t before_open(const struct options *o,
			     struct populate_result *res, struct inputs *in)
{
	unsigned int line;
	int archive;
	errcode_t err;

	in->src.dir = o->source;
	err = check_args(o, &archive);
	if (err) {
		int img = err == ORLOV_ERR_NO_IMAGE || err == ORLOV_ERR_CREATE_CLOBBER;

		res->what = err == ORLOV_ERR_NO_IMAGE ? "opening" :
			    img ? "checking" : "reading";
		res->where = strdup(img ? o->image : o->source);
		return err;
	}
	/* --trace truncates its file, --undo writes one: never the image,
	 * never in the source. */
	if (o->trace) {
		err = output_clobbers(o->trace, o->image, o->source);
		if (err) {
			res->what = "checking trace file";
			res->where = strdup(o->trace);
			return err;
		}
	}
	if (o->undo) {
		/* an existing one may be the undo of an earlier run: kept */
		err = output_clobbers(o->undo, o->image, o->source);
		if (!err && access(o->undo, F_OK) == 0)
			err = EEXIST;
		if (err) {
			res->what = "checking undo file";
			res->where = strdup(o->undo);
			return err;
		}
	}
	if (archive) {
		/* the archive is read into TMPDIR: a missing one is not the
		 * archive's fault */
		const char *tmp = getenv("TMPDIR");
		struct stat st;
		int bad = !tmp || !*tmp ? 0 : stat(tmp, &st) ? errno :
			  !S_ISDIR(st.st_mode) ? ENOTDIR : 0;

		if (bad) {
			res->what = "checking TMPDIR, where the archive is read into:";
			res->where = strdup(tmp);
			return (errcode_t)bad;
		}
		/* the copy's progress starts only once the archive is in:
		 * say what the time before it goes to */
		if (progress_wanted(o)) {
			fprintf(stderr, "reading archive ");
			fput_escaped(stderr, o->source, strlen(o->source));
			fprintf(stderr, " into %s...", tmp && *tmp ? tmp : "/tmp");
		}
		err = load_archive(o, res, in);
		if (progress_wanted(o))
			fprintf(stderr, " done\n");
		if (err)
			return err;
	}
	if (o->devtable) {
		err = devtable_read(o->devtable, &in->dt, &line);
		if (err) {
			size_t len = strlen(o->devtable) + 24;

			res->what = "reading device table";
			res->where = malloc(len);
			if (res->where && line)
				snprintf(res->where, len, "%s line %u",
					 o->devtable, line);
			else if (res->where)
				snprintf(res->where, len, "%s", o->devtable);
			return err;
		}
		in->dtp = &in->dt;
	}
	return 0;
}

static void inputs_free(struct inputs *in)
{
	if (in->dtp)
		devtable_free(&in->dt);
	tar_free((struct tar_tree *)in->src.tar);
}

/* The image's files, and with --create the IMAGE it replaces: an image
 * inside SOURCE is not copied into itself. */
static void own_files(struct inputs *in, const struct image *img)
{
	struct stat st;

	in->nskip = image_files(img, in->skip, 2);
	if (in->image_fd >= 0 && !fstat(in->image_fd, &st)) {
		in->skip[in->nskip].dev = st.st_dev;
		in->skip[in->nskip++].ino = st.st_ino;
	}
}

/* One run on IMAGE as it is now, as far as @mode says. */
static errcode_t run(const struct options *o, struct populate_result *res,
		     struct inputs *in, enum run_mode mode)
{
	struct ctx c;
	const char *what = NULL, *feature = NULL;
	struct image_opts io;
	struct walk_opts wo = { .want_xattrs = o->xattrs, .want_data = 1 };
	struct walk_visitor v = {
		.enter_dir = enter_dir, .leave_dir = leave_dir, .leaf = leaf,
		.error = walk_error,
	};
	errcode_t err;
	uint32_t i, bs;

	memset(&c, 0, sizeof(c));
	c.o = o;
	c.res = res;
	c.ia.rng = o->seed;
	c.ia.oldalloc = o->policy == POLICY_OLDALLOC;
	c.ia.topdir_hash = o->topdir == TOPDIR_HASH;
	c.truncate = o->driver == DRIVER_EXT4 ? ext4_write_truncate :
					       ext2_write_truncate;
	c.release = o->driver == DRIVER_EXT4 ? ext4_write_release :
					      ext2_write_release;
	c.find_group = o->driver == DRIVER_EXT4 ? ext4_ialloc_find_group :
						 ext2_ialloc_find_group;
	c.in = in;
	c.mode = mode;
	v.ctx = &c;

	io.dry = mode != RUN_WRITE;
	io.undo = io.dry ? NULL : o->undo;
	io.fault = o->fault;
	/* (a dry run: image_open writes no copy) */
	io.commit = in->tmp ? IMAGE_COMMIT_UNSEEN :
		    o->atomic ? IMAGE_COMMIT_COPY :
		    o->in_place ? IMAGE_COMMIT_IN_PLACE : IMAGE_COMMIT_AUTO;
	io.in_place_why = &res->in_place_why;
	io.mount_unknown = &res->mount_unknown;
	io.has_now = o->meta.has_epoch;
	io.now = o->meta.epoch;
	io.held_fd = in->tmp ? &in->tmp_fd : in->image_fd >= 0 ? &in->image_fd : NULL;
	io.stale = &res->stale_removed;
	err = image_open(in->path, &io, &c.img, &what, &feature);
	if (err) {
		char kind[256];
		const char *is = err == ORLOV_ERR_NOT_EXT2 ?
			ir_probe(in->path, kind, sizeof(kind)) : NULL;

		res->what = what;
		if (is) {
			size_t n = strlen(o->image) + strlen(is) + 4;

			res->where = malloc(n);
			if (res->where)
				snprintf(res->where, n, "%s: %s", o->image, is);
		} else if (feature) {
			size_t n = strlen(o->image) + strlen(feature) + 16;

			res->where = malloc(n);
			if (res->where)
				snprintf(res->where, n, "%s (feature %s)",
					 o->image, feature);
		} else {
			res->where = strdup(o->image);
		}
		return err;
	}
	own_files(in, c.img);
	wo.skip = in->skip;
	wo.nskip = in->nskip;
	err = image_load_state(c.img, &c.fs);
	if (err) {
		res->what = "loading allocator state from";
		res->where = strdup(o->image);
		goto out;
	}
	err = meta_epoch_fits(&o->meta, c.fs.g.inode_size >=
					EXT2_GOOD_OLD_INODE_SIZE + 32);
	if (err) {
		res->what = "checking SOURCE_DATE_EPOCH against";
		res->where = strdup(o->image);
		goto out;
	}
	if (o->fsck) {
		err = image_fsck(in->path);
		if (err) {
			res->what = "checking with e2fsck -fn";
			res->where = strdup(o->image);
			goto out;
		}
	}
	c.fs.colour = o->colour;
	fs_state_set_cpus(&c.fs, o->cpus);
	image_hash_seed(c.img, c.ia.seed);
	if (o->delalloc) {
		c.spill = tmpfile();
		if (!c.spill) {
			err = errno;
			res->what = "creating a spill file for delayed data in";
			res->where = strdup(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
			goto out;
		}
	}
	if (o->driver == DRIVER_EXT4) {
		c.fs.dx.enabled = image_dir_hash(c.img, &c.fs.dx.def_version,
						 &c.fs.dx.unsigned_adj);
		memcpy(c.fs.dx.seed, c.ia.seed, sizeof(c.ia.seed));
		err = mb_state_init(&c.fs, 1);
		if (!err)
			c.fs.mb->delalloc = o->delalloc;
		if (err) {
			res->what = "loading allocator state from";
			res->where = strdup(o->image);
			goto out;
		}
	}
	bs = c.fs.g.block_size;
	c.max_size = ext2_max_size((unsigned int)__builtin_ctz(bs));
	c.run = malloc((size_t)RUN_BLOCKS * bs);
	c.chunk = malloc((size_t)RUN_BLOCKS * bs);
	c.xblock = malloc(bs);
	if (xattr_blocks_init(&c.xb, bs))
		c.xblock = (free(c.xblock), NULL);
	c.xb.name_hash = o->kernel == KERNEL_6_1 ? NAME_HASH_SIGNED :
						   NAME_HASH_UNSIGNED;
	c.xb.noreserve = o->kernel == KERNEL_6_12;
	if (o->driver == DRIVER_EXT4)
		c.xb.share_below = EXT2_XATTR_REFCOUNT_MAX;
	c.xs.posix_acl = image_posix_acl(c.img);
	c.xs.fs = &c.fs;
	c.xs.xb = &c.xb;
	c.xs.set = o->driver == DRIVER_EXT4 ? ext4_xattr_set_handle :
					      ext2_xattr_setxattr;
	c.user_xattr = image_user_xattr(c.img);
	c.group_used = calloc(c.fs.g.ngroups, 1);
	if (!c.run || !c.chunk || !c.xblock || !c.group_used) {
		err = ENOMEM;
		goto out;
	}
	err = open_target(&c);
	if (!err)
		err = first_pass(&c);
	if (err || mode == RUN_CHECK)
		goto out;
	if (o->trace) {
		c.fs.trace = fopen(o->trace, "w");
		if (!c.fs.trace) {
			err = (errcode_t)errno;
			res->what = "opening trace file";
			res->where = strdup(o->trace);
			goto out;
		}
	}
	if (o->race && system(o->race) != 0) {
		/* tests only (ORLOV_RACE): the source changes between passes */
		err = ORLOV_ERR_USAGE;
		res->what = "running ORLOV_RACE for";
		res->where = strdup(o->source);
		goto out;
	}
	c.progress = progress_wanted(o);
	clock_gettime(CLOCK_MONOTONIC, &c.t0);	/* the pace of the copy */
	err = source_walk(&c.in->src, &wo, &o->meta, c.in->dtp, &v);
	if (c.progress)
		fputc('\n', stderr);
	if (err)
		goto out;
	err = writeback(&c);
	if (err)
		goto out;
	/* what this run takes: the same in a dry run as in the real one */
	res->inodes_used = res->free_inodes -
			   (uint64_t)percpu_counter_sum(&c.fs.freei);
	res->blocks_used = res->free_blocks -
			   (uint64_t)percpu_counter_sum(&c.fs.freeb);
	if (mode == RUN_WRITE) {
		err = commit(&c);
		if (err)
			goto out;
	}
	for (i = 0; i < c.fs.g.ngroups; i++)
		res->groups_used += c.group_used[i];
out:
	ctx_free(&c);
	return err;
}

/*
 * --create builds the new image under a temporary name next to IMAGE and
 * renames it over IMAGE once committed: until then IMAGE is what it was,
 * whatever stops the run.  Not for a device, nor a file with other hard
 * links or an owner its replacement could not have (--in-place neither):
 * there mke2fs writes IMAGE itself, as it would.
 */
static errcode_t create_temp(const struct options *o,
			     struct populate_result *res, struct inputs *in)
{
	struct stat st;
	enum temp_step step;
	errcode_t err;
	int have = stat(in->image, &st) == 0;

	if (o->in_place || (have && (!S_ISREG(st.st_mode) || st.st_nlink != 1)) ||
	    (!have && errno != ENOENT))
		return 0;
	err = image_temp_create(in->image, have ? &st : NULL, 1, in->image_fd,
				&in->tmp, &in->tmp_fd, &step);
	if (have && ((err == EPERM && step == TEMP_OWNER) ||
		     (err && step == TEMP_XATTR)))
		return 0;
	if (err) {
		res->what = "creating the new image next to";
		res->where = strdup(o->image);
		return err;
	}
	in->path = in->tmp;
	return 0;
}

/*
 * --create locks IMAGE before mke2fs, as a plain run does before it
 * writes, and holds the lock until the new image has its name: another
 * run's commit cannot slip in between.  A new IMAGE with --in-place is
 * made empty first, to be locked.
 */
static errcode_t create_lock(const struct options *o,
			     struct populate_result *res, struct inputs *in)
{
	unsigned int n = 0;
	errcode_t err = image_lock(in->image, o->in_place, &in->image_fd);

	if (err) {
		res->what = "locking";
		res->where = strdup(o->image);
		return err;
	}
	if (in->image_fd >= 0)
		image_remove_stale(in->image, &n);
	res->stale_removed += n;
	return 0;
}

/* mke2fs for --create: the size given, or for auto the smallest that
 * the first pass says the tree fits in, then the margin. */
static errcode_t create_image(const struct options *o,
			      struct populate_result *res, struct inputs *in)
{
	struct mkfs_opts m = o->mkfs;
	char size[32], inodes[32];
	uint64_t kib = 16384, bs, floor;
	errcode_t err;
	int tries;

	m.digest = in->digest;
	if (!o->auto_size) {
		err = mkfs_create(in->path, &m);
		goto out;
	}
	if (!m.block_size)
		m.block_size = "4096";	/* mke2fs would choose by size */
	bs = strtoull(m.block_size, NULL, 10);
	floor = m.fs_type && !strcmp(m.fs_type, "ext3") ? 2048 : 64;
	/* The first run on a probe of 16 MiB gives the tree's needs, which
	 * do not depend on the size, and the share of a filesystem that is
	 * free; then the size they call for, grown until the check agrees. */
	for (tries = 0; tries < 12; tries++) {
		struct populate_result r;
		uint64_t total, want;

		snprintf(size, sizeof(size), "%lluk", (unsigned long long)kib);
		m.size = size;
		/* After the probe, a size below mke2fs's minimum (which
		 * depends on its options) is grown until mke2fs takes it:
		 * the probe's mke2fs has shown any other complaint. */
		m.quiet = tries > 0;
		err = mkfs_create(in->path, &m);
		if (err == ORLOV_ERR_MKFS_FAILED && tries && kib < 16384) {
			kib += kib / 2;
			continue;
		}
		if (err == ORLOV_ERR_MKFS_FAILED && m.quiet) {
			m.quiet = 0;	/* again, for mke2fs to say why */
			err = mkfs_create(in->path, &m);
		}
		m.quiet = 0;
		if (err)
			goto out;
		memset(&r, 0, sizeof(r));
		err = run(o, &r, in, RUN_CHECK);
		if (err && err != ORLOV_ERR_NO_BLOCKS && err != ORLOV_ERR_NO_INODES) {
			*res = r;
			return err;
		}
		populate_result_free(&r);
		if (!err && tries)
			break;
		total = kib * 1024 / bs;
		want = r.free_blocks ? r.need_blocks * total / r.free_blocks : total;
		want += want / 50 + 16;		/* the larger one's metadata */
		/* mke2fs's least for any block size; for ext3 the least
		 * it gives a journal (ext2fs_default_journal_size) */
		if (want < floor)
			want = floor;
		if (tries && want * bs / 1024 <= kib)
			want = kib * 1024 / bs + kib * 1024 / bs / 8;
		if (!o->mkfs.inodes && r.need_inodes + 16 > r.free_inodes) {
			uint64_t n = r.need_inodes + r.need_inodes / 20 + 32;

			snprintf(inodes, sizeof(inodes), "%llu",
				 (unsigned long long)n);
			m.inodes = inodes;
			/* their tables, at up to 256 bytes an inode */
			want += n * 256 / bs + 1;
		}
		kib = want * bs / 1024;
	}
	if (tries == 12) {
		err = ORLOV_ERR_NO_BLOCKS;
		goto out;
	}
	kib = o->margin_pct ? kib + kib * o->margin_pct / 100 :
			      kib + o->margin_bytes / 1024;
	snprintf(size, sizeof(size), "%lluk", (unsigned long long)kib);
	m.size = size;
	err = mkfs_create(in->path, &m);
out:
	if (err && !res->what) {
		res->what = "making a filesystem with mke2fs in";
		res->where = strdup(o->image);
	}
	return err;
}

static void print_summary(const struct options *o,
			  const struct populate_result *res)
{
	if (o->json) {
		printf("{\"image\": ");
		fput_json(stdout, o->image);
		if (o->create)
			printf(", \"created_blocks\": %llu, \"created_inodes\": %llu",
			       (unsigned long long)res->fs_blocks,
			       (unsigned long long)res->fs_inodes);
		printf(", \"dry_run\": %s, \"ok\": true, \"entries\": %llu, \"bytes\": %llu, "
		       "\"inodes_used\": %llu, \"blocks_used\": %llu, "
		       "\"block_size\": %u, \"free_inodes_before\": %llu, "
		       "\"free_blocks_before\": %llu, \"groups_used\": %u, "
		       "\"seconds\": %.3f}\n",
		       o->dry_run ? "true" : "false",
		       (unsigned long long)res->entries,
		       (unsigned long long)res->bytes,
		       (unsigned long long)res->inodes_used,
		       (unsigned long long)res->blocks_used, res->block_size,
		       (unsigned long long)res->free_inodes,
		       (unsigned long long)res->free_blocks, res->groups_used,
		       res->seconds);
	} else if (o->verbosity >= 0 && o->dry_run) {
		if (o->create)
			printf("dry run: --create %s would make %s with %llu "
			       "blocks of %u bytes and %llu inodes\n",
			       o->mkfs.size, o->image,
			       (unsigned long long)res->fs_blocks,
			       res->block_size,
			       (unsigned long long)res->fs_inodes);
		printf("dry run: %llu entries, %llu bytes need %llu inodes and "
		       "%llu blocks of %u bytes (%llu and %llu free); nothing "
		       "written\n", (unsigned long long)res->entries,
		       (unsigned long long)res->bytes,
		       (unsigned long long)res->inodes_used,
		       (unsigned long long)res->blocks_used, res->block_size,
		       (unsigned long long)res->free_inodes,
		       (unsigned long long)res->free_blocks);
	} else if (o->verbosity >= 0) {
		printf("%llu entries, %llu bytes, %u groups used, %.2f seconds\n",
		       (unsigned long long)res->entries,
		       (unsigned long long)res->bytes, res->groups_used,
		       res->seconds);
	}
}

void populate_json_error(const struct options *o, errcode_t err,
			 const struct populate_result *res, const char *usage)
{
	printf("{\"image\": ");
	fput_json(stdout, o->image ? o->image : "");
	printf(", \"dry_run\": %s, \"ok\": false, \"error\": ",
	       o->dry_run ? "true" : "false");
	fput_json(stdout, error_message(err));
	printf(", \"code\": %ld", (long)err);
	if (usage) {
		printf(", \"usage\": ");
		fput_json(stdout, usage);
	}
	if (res && res->what) {
		printf(", \"while\": ");
		fput_json(stdout, res->what);
	}
	if (res && res->where) {
		printf(", \"path\": ");
		fput_json(stdout, res->where);
	}
	if (res && (err == ORLOV_ERR_NO_INODES || err == ORLOV_ERR_NO_BLOCKS))
		printf(", \"need_inodes\": %llu, \"need_blocks\": %llu, "
		       "\"block_size\": %u, \"free_inodes\": %llu, "
		       "\"free_blocks\": %llu",
		       (unsigned long long)res->need_inodes,
		       (unsigned long long)res->need_blocks, res->block_size,
		       (unsigned long long)res->free_inodes,
		       (unsigned long long)res->free_blocks);
	printf("}\n");
	fflush(stdout);
}

/* ---- the UUID of --create ------------------------------------------------ */

struct digest_walk {
	struct digest d;
	const struct options *o;
	struct populate_result *res;
	unsigned char *buf;
};

static void digest_str(struct digest *d, const char *s, size_t n)
{
	digest_u64(d, n);
	digest_update(d, s, n);
}

static void digest_time(struct digest *d, const struct timespec *ts)
{
	digest_u64(d, (uint64_t)ts->tv_sec);
	digest_u64(d, (uint64_t)ts->tv_nsec);
}

/* What of an entry the image keeps (as the walk gives it: owners mapped,
 * times clamped), so that copies of one tree made at other times give
 * the same digest.  Hard links are not told from copies. */
static errcode_t digest_entry(void *ctx, const struct src_entry *e, int tag)
{
	struct digest_walk *w = ctx;
	struct digest *d = &w->d;
	const struct stat *st = &e->st;
	uint64_t off = 0, s, t;
	size_t i, k;
	errcode_t err;

	digest_u64(d, (uint64_t)tag);
	digest_str(d, e->path, strlen(e->path));
	if (!*e->path && !w->o->root_attrs)
		return 0;	/* mke2fs's root, not SOURCE's */
	digest_u64(d, st->st_mode);
	digest_u64(d, st->st_uid);
	digest_u64(d, st->st_gid);
	digest_time(d, &st->st_atim);
	digest_time(d, &st->st_mtim);
	digest_time(d, &st->st_ctim);
	digest_u64(d, e->fsflags);
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		digest_u64(d, st->st_rdev);
	if (S_ISLNK(st->st_mode))
		digest_str(d, e->link_target, e->link_len);
	digest_u64(d, e->nxattrs);
	for (i = 0; i < e->nxattrs; i++) {
		digest_str(d, e->xattrs[i].name, strlen(e->xattrs[i].name));
		digest_str(d, (const char *)e->xattrs[i].value,
			   e->xattrs[i].size);
	}
	if (!S_ISREG(st->st_mode))
		return 0;
	digest_u64(d, (uint64_t)st->st_size);
	while (off < (uint64_t)st->st_size) {
		err = e->data->next_data(e, off, &s, &t);
		if (err)
			goto fail;
		if (s >= t)
			break;
		digest_u64(d, s);
		digest_u64(d, t);
		for (off = s; off < t; off += k) {
			k = t - off < 65536 ? (size_t)(t - off) : 65536;
			err = e->data->read(e, w->buf, k, off);
			if (err)
				goto fail;
			digest_update(d, w->buf, k);
		}
	}
	return 0;
fail:
	if (!w->res->what) {
		size_t n = strlen(w->o->source) + strlen(e->path) + 2;

		w->res->what = "reading";
		w->res->where = malloc(n);
		if (w->res->where)
			snprintf(w->res->where, n, "%s/%s", w->o->source,
				 e->path);
	}
	return err;
}

static errcode_t digest_enter(void *ctx, const struct src_entry *e)
{
	return digest_entry(ctx, e, 1);
}

static errcode_t digest_leave(void *ctx, const struct src_entry *e)
{
	struct digest_walk *w = ctx;

	(void)e;
	digest_u64(&w->d, 2);
	return 0;
}

static errcode_t digest_leaf(void *ctx, const struct src_entry *e)
{
	return digest_entry(ctx, e, 3);
}

static void digest_error(void *ctx, errcode_t err, const char *what,
			 const char *path)
{
	struct digest_walk *w = ctx;
	size_t n = strlen(w->o->source) + strlen(path) + 2;

	if (w->res->what)
		return;
	snprintf(w->res->what_buf, sizeof(w->res->what_buf), "%s", what);
	w->res->what = w->res->what_buf;
	if (devtable_error(err)) {
		w->res->where = image_path(w->o, path);
		return;
	}
	w->res->where = malloc(n);
	if (w->res->where)
		snprintf(w->res->where, n, "%s%s%s", w->o->source,
			 *path ? "/" : "", path);
}

/*
 * With SOURCE_DATE_EPOCH, --create's UUID was the epoch's and the seed's
 * alone: every image of a build had the same.  It now also takes a digest
 * of the tree (names, metadata, data) and of every option that shapes the
 * image (mke2fs's, a label among them): the same inputs give the same
 * UUID, other ones another.  A UUID given to mke2fs (-U) wins, and then
 * nothing is read here.
 */
static errcode_t tree_digest(const struct options *o,
			     struct populate_result *res, struct inputs *in)
{
	struct walk_opts wo = { .want_xattrs = o->xattrs, .want_data = 1 };
	struct walk_visitor v = {
		.enter_dir = digest_enter, .leave_dir = digest_leave,
		.leaf = digest_leaf, .error = digest_error,
	};
	const char *strs[] = { o->target, o->mkfs.size, o->mkfs.fs_type,
			       o->mkfs.block_size, o->mkfs.inodes,
			       o->mkfs.extra };
	struct digest_walk w;
	errcode_t err;
	size_t i;

	if (!o->meta.has_epoch ||
	    (o->mkfs.extra && strstr(o->mkfs.extra, "-U")))
		return 0;
	memset(&w, 0, sizeof(w));
	w.o = o;
	w.res = res;
	w.buf = malloc(65536);
	if (!w.buf)
		return ENOMEM;
	v.ctx = &w;
	digest_init(&w.d, 0);
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strs[i])
			digest_str(&w.d, strs[i], strlen(strs[i]));
		else
			digest_u64(&w.d, UINT64_MAX);
	digest_u64(&w.d, o->policy);
	digest_u64(&w.d, o->topdir);
	digest_u64(&w.d, o->colour);
	digest_u64(&w.d, o->cpus);
	digest_u64(&w.d, o->kernel);
	digest_u64(&w.d, o->driver);
	digest_u64(&w.d, (uint64_t)o->delalloc << 3 | (uint64_t)o->xattrs << 2 |
			 (uint64_t)o->root_attrs << 1 | (uint64_t)o->root_owner);
	digest_u64(&w.d, (uint64_t)o->root_uid << 32 | o->root_gid);
	err = source_walk(&in->src, &wo, &o->meta, in->dtp, &v);
	free(w.buf);
	if (!err)
		in->digest = digest_final(&w.d) | 1;	/* 0 is none */
	return err;
}

/* --dry-run --create: the filesystem is made in a scratch file in TMPDIR,
 * never next to IMAGE, and dropped after the dry run on it. */
static errcode_t create_scratch(struct populate_result *res,
				struct inputs *in)
{
	const char *dir = getenv("TMPDIR");
	size_t n;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	n = strlen(dir) + 32;
	in->tmp = malloc(n);
	if (!in->tmp)
		return ENOMEM;
	snprintf(in->tmp, n, "%s/orlov-dry-run-XXXXXX", dir);
	fd = mkstemp(in->tmp);
	if (fd < 0) {
		errcode_t err = (errcode_t)errno;

		res->what = "creating a scratch image for --dry-run in";
		res->where = strdup(dir);
		free(in->tmp);
		in->tmp = NULL;
		return err;
	}
	close(fd);
	in->path = in->tmp;
	return 0;
}

errcode_t populate(const struct options *o, struct populate_result *res)
{
	struct timespec t0, t1;
	struct inputs in;
	errcode_t err;

	/* the summary's seconds: all of it, archive and mke2fs included */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&in, 0, sizeof(in));
	in.image_fd = in.tmp_fd = -1;
	err = image_resolve(o->image, &in.image);
	if (err) {
		res->what = "following the symbolic link";
		res->where = strdup(o->image);
		return err;
	}
	in.path = in.image;
	err = before_open(o, res, &in);
	if (!err && o->create)
	if (!err && o->create && !o->dry_run)
		err = create_lock(o, res, &in);
	if (!err && o->create)
		err = tree_digest(o, res, &in);
	if (!err && o->create)
		err = o->dry_run ? create_scratch(res, &in) :
				   create_temp(o, res, &in);
	if (!err && o->create)
		err = create_image(o, res, &in);
	if (!err)
		err = run(o, res, &in, o->dry_run ? RUN_DRY : RUN_WRITE);
	if (in.tmp && !err && !o->dry_run) {
		err = image_temp_commit(in.tmp, in.image, in.image_fd);
		if (err) {
			res->what = "renaming the new image over";
			res->where = strdup(o->image);
		}
	}
	/* libext2fs's "short write" is the kernel's partial write: the host
	 * filesystem ran out of room (or a quota, or RLIMIT_FSIZE) */
	if (err == EXT2_ET_SHORT_WRITE)
		err = ORLOV_ERR_SHORT_WRITE;
	if (in.tmp && (err || o->dry_run))
		unlink(in.tmp);
	free(in.tmp);
	if (in.tmp_fd >= 0)
		close(in.tmp_fd);
	if (in.image_fd >= 0)
		close(in.image_fd);
	free(in.image);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->seconds = (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (!err)
		print_summary(o, res);
	inputs_free(&in);
	return err;
}

void populate_result_free(struct populate_result *res)
{
	free(res->where);
	free(res->racy_at);
	res->where = NULL;
	res->racy_at = NULL;
}
