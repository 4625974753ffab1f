// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the programs print of a run (summary.h): while it runs, -v's line
 * per entry and the progress line (the engine's events); once it is over,
 * the summary line or the dry run's figures, and --json's object for a
 * success or a failure.  The engine prints none of it (the library's
 * callers read struct populate_result).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>

#include "cli/summary.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

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

errcode_t failure_words(const struct populate_opts *o,
			const struct populate_result *res, struct strbuf *b)
{
	const struct errctx *ec = &res->ec;

	return sb_printf(b, "%s %s%s%s", ec->what ? ec->what : "populating",
			 ec->where ? ec->where : o->image,
			 ec->detail ? ": " : "", ec->detail ? ec->detail : "");
}

/* The line main() prints after "PROGRAM: " (orlov-populate.c). */
static void json_message(const struct populate_opts *o, errcode_t err,
			 const struct populate_result *res, const char *usage)
{
	struct strbuf b = { 0 };

	if (usage)
		sb_printf(&b, err == ORLOV_ERR_USAGE ? "%s (%s); try --help" :
			  "%s while %s",
			  error_message(err), usage);
	else if (!sb_printf(&b, "%s while ", error_message(err)))
		failure_words(o, res, &b);
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

/* -v: the entry's path in the image, its inode and group; --json keeps
 * standard output for the one object. */
static void print_entry(void *cookie, const char *path, uint32_t ino,
			uint32_t group)
{
	const struct populate_opts *o = cookie;
	FILE *f = o->json ? stderr : stdout;

	fput_escaped(f, o->target, strlen(o->target));
	if (strcmp(o->target, "/"))
		putc('/', f);
	fput_escaped(f, path, strlen(path));
	fprintf(f, " %u %u\n", ino, group);
}

static void print_progress(void *cookie, const struct populate_progress *p)
{
	double done, all, rate;

	(void)cookie;
	if (p->done) {
		fputc('\n', stderr);
		return;
	}
	/* an entry weighs as much as a block of data */
	done = (double)p->entries + (double)p->bytes / 4096.0;
	all = (double)p->total_entries + (double)p->total_bytes / 4096.0;
	rate = p->seconds > 0 ? (double)p->bytes / p->seconds / 1048576.0 : 0;
	fprintf(stderr, "\r%3.0f%% %llu/%llu entries, %llu MiB, %.1f MiB/s, ",
		all > 0 ? 100.0 * done / all : 100.0,
		(unsigned long long)p->entries,
		(unsigned long long)p->total_entries,
		(unsigned long long)(p->bytes >> 20), rate);
	/* from the write pass's own pace, once it has one: a first entry
	 * over the whole run said hours */
	if (p->seconds >= 1.0 && done > 0 && all >= done)
		fprintf(stderr, "ETA %.0f s   ", p->seconds * (all - done) / done);
	else
		fprintf(stderr, "ETA ?   ");
}

/* the copy's progress starts only once the archive is in: say what the
 * time before it goes to */
static void print_archive(void *cookie, const char *source, const char *tmpdir,
			  int done)
{
	(void)cookie;
	if (done) {
		fprintf(stderr, " done\n");
		return;
	}
	fprintf(stderr, "reading archive ");
	fput_escaped(stderr, source, strlen(source));
	fprintf(stderr, " into %s...", tmpdir);
}

void summary_events(const struct populate_opts *o, struct populate_events *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->cookie = (void *)o;
	if (o->verbosity > 0)
		ev->entry = print_entry;
	/* the progress line on a terminal: not with -v, -q or --json */
	if (o->verbosity == 0 && !o->json && isatty(STDERR_FILENO)) {
		ev->progress = print_progress;
		ev->archive = print_archive;
	}
}
