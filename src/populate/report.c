// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the engine tells: the first error with what was being done and
 * where, --trace's records, and to the caller's callbacks (opts.h,
 * struct populate_events) each entry and the write pass's progress.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "populate/report.h"
#include "lib/spill.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

/* Record the first error with what was being done and where (verbatim). */
errcode_t pop_fail_at(struct pop_ctx *c, errcode_t err, const char *what,
		  const char *where)
{
	return errctx_set(&c->res->ec, err, what, where);
}

/* SOURCE/path, as messages name an entry (NULL without memory). */
char *source_path(const struct pop_ctx *c, const char *path)
{
	size_t sl = strlen(c->o->source), pl = strlen(path), n = sl + pl + 2;
	char *where = malloc(n);

	if (where)
		snprintf(where, n, "%s%s%s", c->o->source, pl ? "/" : "", path);
	return where;
}

/* pop_fail_at for a path relative to the source root, shown under SOURCE. */
errcode_t pop_fail(struct pop_ctx *c, errcode_t err, const char *what,
	       const char *path)
{
	char *where = source_path(c, path);

	pop_fail_at(c, err, what, where);
	free(where);
	return err;
}

errcode_t pop_fail_scratch(struct pop_ctx *c, errcode_t err, const char *doing)
{
	return spill_error(&c->res->ec, err, doing);
}

/* A device table names paths in the image: its errors say those, not
 * SOURCE's (where the entry may not even be). */
int devtable_error(errcode_t err)
{
	return err == ORLOV_ERR_DEVTABLE_TYPE ||
	       err == ORLOV_ERR_DEVTABLE_MISSING;
}

/* @path of the source root as it is in the image: under the target. */
char *image_path(const struct populate_opts *o, const char *path)
{
	size_t n = strlen(o->target) + strlen(path) + strlen(o->image) + 8;
	char *where = malloc(n);

	if (where)
		snprintf(where, n, "%s%s%s in %s", o->target,
			 strcmp(o->target, "/") && *path ? "/" : "", path,
			 o->image);
	return where;
}

void walk_error(void *ctx, errcode_t err, const char *what,
		const char *path)
{
	struct pop_ctx *c = ctx;
	char *where;

	if (!devtable_error(err)) {
		pop_fail(c, err, what, path);
		return;
	}
	where = image_path(c->o, path);
	pop_fail_at(c, err, what, where);
	free(where);
}

void walk_scratch_error(void *ctx, errcode_t err, const char *doing)
{
	pop_fail_scratch(ctx, err, doing);
}

/* ext4's ext4_allocate_inode, at the end of __ext4_new_inode: the mode
 * is the one mkdir, open, mknod or symlink passed (the replayer's and a
 * cp's: the permission bits only, umask 0), not the inode's after its
 * chmod. */
static void trace_ext4_inode(struct pop_ctx *c, const struct frame *parent,
			     const struct src_entry *e, uint32_t ino)
{
	mode_t m = e->st.st_mode;

	m = (m & S_IFMT) | (S_ISLNK(m) ? 0777 : m & 0777);
	fprintf(c->fs.trace, "ext4_allocate_inode: ino %u dir %u mode 0%o\n",
		ino, parent->d.map.ino, (unsigned int)m);
}

void trace_inode(struct pop_ctx *c, const struct frame *parent,
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
	if (c->drv == &ext4_driver)
		trace_ext4_inode(c, parent, e, ino);
}

/* How far the write pass is, to the caller's progress callback. */
void report_progress(struct pop_ctx *c, int done)
{
	const struct populate_events *ev = c->o->events;
	struct populate_progress p;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	p.entries = c->res->entries;
	p.total_entries = c->pr.total_entries;
	p.bytes = c->res->bytes;
	p.total_bytes = c->pr.total_bytes;
	p.seconds = (double)(t.tv_sec - c->pr.t0.tv_sec) +
		    (double)(t.tv_nsec - c->pr.t0.tv_nsec) / 1e9;
	p.done = done;
	ev->progress(ev->cookie, &p);
}

void report_entry(struct pop_ctx *c, const struct src_entry *e, uint32_t ino)
{
	const struct populate_events *ev = c->o->events;
	uint32_t group = (ino - 1) / c->fs.g.inodes_per_group;
	time_t now;

	c->res->entries++;
	c->pr.group_used[group] = 1;
	if (ev && ev->entry)
		ev->entry(ev->cookie, e->path, ino, group);
	if (c->pr.on && (now = time(NULL)) != c->pr.last) {
		c->pr.last = now;
		report_progress(c, 0);
	}
}

/* The tree does not fit: say by how much, so the user knows what size or
 * -N to ask for. */
errcode_t too_small(struct pop_ctx *c, errcode_t err)
{
	const struct populate_result *r = c->res;
	char *where;
	size_t n = strlen(c->o->source) + strlen(c->o->image) + 160;

	where = malloc(n);
	if (!where)
		return pop_fail_at(c, err, "checking", c->o->source);
	if (err == ORLOV_ERR_NO_INODES)
		snprintf(where, n, "%s: it needs %llu inodes, %s has %llu free",
			 c->o->source, (unsigned long long)r->need_inodes,
			 c->o->image, (unsigned long long)r->free_inodes);
	else
		snprintf(where, n, "%s: it needs %llu blocks of %u bytes, %s "
			 "has %llu free", c->o->source,
			 (unsigned long long)r->need_blocks, r->block_size,
			 c->o->image, (unsigned long long)r->free_blocks);
	pop_fail_at(c, err, "checking", where);
	free(where);
	return err;
}

