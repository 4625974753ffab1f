// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the engine tells: the first error with what was being done and
 * where, the progress line, -v's line per entry, --trace's records, the
 * summary and the --json objects.
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

/* The progress line on a terminal: not with -v, -q or --json. */
int progress_wanted(const struct populate_opts *o)
{
	return o->verbosity == 0 && !o->json && isatty(STDERR_FILENO);
}

/* Record the first error with what was being done and where (verbatim). */
errcode_t fail_at(struct ctx *c, errcode_t err, const char *what,
		  const char *where)
{
	return errctx_set(&c->res->ec, err, what, where);
}

/* SOURCE/path, as messages name an entry (NULL without memory). */
char *source_path(const struct ctx *c, const char *path)
{
	size_t sl = strlen(c->o->source), pl = strlen(path), n = sl + pl + 2;
	char *where = malloc(n);

	if (where)
		snprintf(where, n, "%s%s%s", c->o->source, pl ? "/" : "", path);
	return where;
}

/* fail_at for a path relative to the source root, shown under SOURCE. */
errcode_t fail(struct ctx *c, errcode_t err, const char *what,
	       const char *path)
{
	char *where = source_path(c, path);

	fail_at(c, err, what, where);
	free(where);
	return err;
}

errcode_t fail_scratch(struct ctx *c, errcode_t err, const char *doing)
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
	struct ctx *c = ctx;
	char *where;

	if (!devtable_error(err)) {
		fail(c, err, what, path);
		return;
	}
	where = image_path(c->o, path);
	fail_at(c, err, what, where);
	free(where);
}

void walk_scratch_error(void *ctx, errcode_t err, const char *doing)
{
	fail_scratch(ctx, err, doing);
}

/* ext4's ext4_allocate_inode, at the end of __ext4_new_inode: the mode
 * is the one mkdir, open, mknod or symlink passed (the replayer's and a
 * cp's: the permission bits only, umask 0), not the inode's after its
 * chmod. */
static void trace_ext4_inode(struct ctx *c, const struct frame *parent,
			     const struct src_entry *e, uint32_t ino)
{
	mode_t m = e->st.st_mode;

	m = (m & S_IFMT) | (S_ISLNK(m) ? 0777 : m & 0777);
	fprintf(c->fs.trace, "ext4_allocate_inode: ino %u dir %u mode 0%o\n",
		ino, parent->d.map.ino, (unsigned int)m);
}

void trace_inode(struct ctx *c, const struct frame *parent,
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

void report_entry(struct ctx *c, const struct src_entry *e, uint32_t ino)
{
	uint32_t group = (ino - 1) / c->fs.g.inodes_per_group;

	c->res->entries++;
	c->pr.group_used[group] = 1;
	if (c->o->verbosity > 0) {
		/* --json keeps standard output for the one object */
		FILE *f = c->o->json ? stderr : stdout;

		fput_escaped(f, c->o->target, strlen(c->o->target));
		if (strcmp(c->o->target, "/"))
			putc('/', f);
		fput_escaped(f, e->path, strlen(e->path));
		fprintf(f, " %u %u\n", ino, group);
	} else if (c->pr.on) {
		time_t now = time(NULL);

		if (now != c->pr.last) {
			struct timespec t;
			double done, all, secs, rate;

			c->pr.last = now;
			clock_gettime(CLOCK_MONOTONIC, &t);
			secs = (double)(t.tv_sec - c->pr.t0.tv_sec) +
			       (double)(t.tv_nsec - c->pr.t0.tv_nsec) / 1e9;
			/* an entry weighs as much as a block of data */
			done = (double)c->res->entries +
			       (double)c->res->bytes / 4096.0;
			all = (double)c->pr.total_entries +
			      (double)c->pr.total_bytes / 4096.0;
			rate = secs > 0 ? (double)c->res->bytes / secs / 1048576.0 : 0;
			fprintf(stderr, "\r%3.0f%% %llu/%llu entries, %llu MiB, "
				"%.1f MiB/s, ",
				all > 0 ? 100.0 * done / all : 100.0,
				(unsigned long long)c->res->entries,
				(unsigned long long)c->pr.total_entries,
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

/* The tree does not fit: say by how much, so the user knows what size or
 * -N to ask for. */
errcode_t too_small(struct ctx *c, errcode_t err)
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

void print_summary(const struct populate_opts *o,
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
		if (res->writebacks && o->verbosity > 0)
			printf("delayed data written back %u time%s before the "
			       "end: it reached half the free space\n",
			       res->writebacks, res->writebacks == 1 ? "" : "s");
	}
}

/* The line main() prints after "PROGRAM: " (orlov-populate.c). */
static void json_message(const struct populate_opts *o, errcode_t err,
			 const struct populate_result *res, const char *usage)
{
	const struct errctx *ec = res ? &res->ec : NULL;
	struct strbuf b = { 0 };

	if (usage)
		sb_printf(&b, err == ORLOV_ERR_USAGE ? "%s (%s); try --help" :
			  "%s while %s",
			  error_message(err), usage);
	else
		sb_printf(&b, "%s while %s %s%s%s", error_message(err),
			  ec->what ? ec->what : "populating",
			  ec->where ? ec->where : o->image,
			  ec->detail ? ": " : "", ec->detail ? ec->detail : "");
	printf(", \"message\": ");
	fput_json(stdout, b.s ? b.s : error_message(err));
	sb_free(&b);
}

/*
 * The code as com_err numbers it, positive (a table's codes are above
 * 2^31: a signed long on a 32-bit host, and an int, made them negative);
 * an errno is itself.  The path alone: what follows it in the message (a
 * table's line, an archive's member and libarchive's words) is not part
 * of it.
 */
void populate_json_error(const struct populate_opts *o, errcode_t err,
			 const struct populate_result *res, const char *usage)
{
	char *path;

	printf("{\"image\": ");
	fput_json(stdout, o->image ? o->image : "");
	printf(", \"dry_run\": %s, \"ok\": false, \"error\": ",
	       o->dry_run ? "true" : "false");
	fput_json(stdout, error_message(err));
	printf(", \"code\": %lu", (unsigned long)(uint32_t)err);
	json_message(o, err, res, usage);
	if (usage && err == ORLOV_ERR_USAGE) {
		printf(", \"usage\": ");
		fput_json(stdout, usage);
	}
	if (res && res->ec.what) {
		printf(", \"while\": ");
		fput_json(stdout, res->ec.what);
	}
	if (res && res->ec.where &&
	    (path = strndup(res->ec.where, res->ec.path_len))) {
		printf(", \"path\": ");
		fput_json(stdout, path);
		free(path);
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
