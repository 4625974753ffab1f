// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * liborlov called from several threads at once (tests/t-libthreads.sh),
 * built as a program outside the project would be: only <orlov/orlov.h>,
 * linked with the shared library.
 *
 *   libthreads DIR SOURCE-DIR SOURCE-TAR BASE-IMAGE [SECONDS]
 *
 * Each job below is made once alone, its answer (code, what, path,
 * usage, figures and, on success, the image byte for byte) kept; then
 * every job runs in its own thread, over and over for SECONDS (default
 * 10) or until MAX_ITERS, and every answer must be the one it gave alone
 * and the one it must give (the size asked for, the error expected).  A
 * bystander thread meanwhile creates files with mode 0666 under umask
 * 022 and checks they get 0644: a call that changed the process's umask
 * for a moment would give one 0666.  Any difference is printed, exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <orlov/orlov.h>

#define MAX_ITERS 20000
#define EPOCH 1700000000ULL

struct job {
	const char *name;
	const char *image;	/* under DIR */
	int source;		/* 0: SOURCE-DIR, 1: SOURCE-TAR */
	const char *create, *fs_type, *block_size, *devtable;
	unsigned int flags;
	int from_base;		/* the image a copy of BASE-IMAGE first */
	long long size;		/* the image's size on success */
	unsigned int bsize;	/* its block size */
	long want_err;		/* -1: any nonzero */
	const char *want_usage, *want_what;

	/* filled in */
	char path[4096], dev_path[4096];
	const char *src;
	long err;
	struct orlov_result first;
	unsigned char *bytes;	/* the image the first call made */
	size_t nbytes;
	unsigned long iters;
	char failure[1024];
};

static struct job jobs[] = {
	{ .name = "create 8M ext2 1K from a directory", .image = "a.img",
	  .create = "8M", .fs_type = "ext2", .block_size = "1024",
	  .size = 8 << 20, .bsize = 1024 },
	{ .name = "create 12M ext4 4K from a tarball", .image = "b.img",
	  .source = 1, .create = "12M", .fs_type = "ext4",
	  .block_size = "4096", .flags = ORLOV_NO_FSCK,
	  .size = 12 << 20, .bsize = 4096 },
	{ .name = "--atomic into a copy of BASE", .image = "c.img",
	  .flags = ORLOV_ATOMIC, .from_base = 1, .bsize = 1024 },
	{ .name = "--atomic with --in-place", .image = "d.img",
	  .flags = ORLOV_ATOMIC | ORLOV_IN_PLACE, .create = "16M",
	  .want_err = -1, .want_what = "parsing the options",
	  .want_usage = "--atomic writes a copy, --in-place the image itself: give one" },
	{ .name = "a missing device table", .image = "e.img",
	  .create = "64M", .devtable = "no-such-devtable",
	  .want_err = ENOENT, .want_what = "reading device table" },
};
#define NJOBS (sizeof(jobs) / sizeof(jobs[0]))

static const char *dir, *sources[2], *base;
static time_t deadline;

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static unsigned char *read_all(const char *path, size_t *n)
{
	unsigned char *buf = NULL;
	struct stat st;
	size_t got = 0;
	ssize_t r = 1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st))
		buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	while (buf && got < (size_t)st.st_size && r > 0) {
		r = read(fd, buf + got, (size_t)st.st_size - got);
		got += r > 0 ? (size_t)r : 0;
	}
	close(fd);
	if (buf && got != (size_t)st.st_size) {
		free(buf);
		return NULL;
	}
	*n = got;
	return buf;
}

static int write_all(const char *path, const unsigned char *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t r = 1;

	if (fd < 0)
		return -1;
	while (n && r > 0) {
		r = write(fd, p, n);
		p += r > 0 ? r : 0;
		n -= r > 0 ? (size_t)r : 0;
	}
	return close(fd) || n ? -1 : 0;
}

static unsigned char *base_bytes;
static size_t base_n;

/* One call of @j; its result in @r, its code returned. */
static long call(struct job *j, struct orlov_result *r)
{
	struct orlov_options o;

	orlov_options_init(&o);
	o.create = j->create;
	o.fs_type = j->fs_type;
	o.block_size = j->block_size;
	o.devtable = j->devtable ? j->dev_path : NULL;
	o.flags = j->flags;
	o.has_source_date_epoch = 1;
	o.source_date_epoch = EPOCH;
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	if (j->create)
		unlink(j->path);
	if (j->from_base && write_all(j->path, base_bytes, base_n))
		return -2;
	return orlov_populate(j->path, j->src, &o, r);
}

/* What is wrong with @r (code @err) for @j, or NULL. */
static const char *wrong(struct job *j, long err, const struct orlov_result *r,
			 char *buf, size_t len)
{
	struct stat st;

	if (j->want_err ? (j->want_err == -1 ? !err : err != j->want_err) : err) {
		snprintf(buf, len, "code %ld (%s) while %s %s%s%s, usage %s",
			 err, orlov_strerror(err), r->what ? r->what : "-",
			 r->path ? r->path : "-", r->detail ? ": " : "",
			 r->detail ? r->detail : "", r->usage ? r->usage : "-");
		return buf;
	}
	if (!same_str(r->usage, j->want_usage))
		return "not the usage message expected";
	if (j->want_what && !same_str(r->what, j->want_what))
		return "not the 'what' expected";
	if (j->devtable && !same_str(r->path, j->dev_path))
		return "not the path expected";
	if (err)
		return NULL;
	if (stat(j->path, &st))
		return "no image";
	if (st.st_size != (j->size ? j->size : (long long)base_n))
		return "the image is not of the size asked for";
	if (r->block_size != j->bsize)
		return "not the block size asked for";
	return NULL;
}

/* The call's answer is the one it gave alone. */
static const char *unlike_first(struct job *j, long err,
				const struct orlov_result *r)
{
	const struct orlov_result *f = &j->first;
	unsigned char *now;
	size_t n = 0;
	int same;

	if (err != j->err || !same_str(r->what, f->what) ||
	    !same_str(r->path, f->path) || !same_str(r->usage, f->usage))
		return "not the error it gave alone";
	if (err)
		return NULL;
	if (r->entries != f->entries || r->blocks_used != f->blocks_used ||
	    r->inodes_used != f->inodes_used)
		return "not the figures it gave alone";
	now = read_all(j->path, &n);
	same = now && n == j->nbytes && !memcmp(now, j->bytes, n);
	free(now);
	return same ? NULL : "not the image it made alone";
}

static void *run(void *arg)
{
	struct job *j = arg;
	struct orlov_result r;
	char buf[900];
	const char *why;
	long err;

	while (j->iters < MAX_ITERS && time(NULL) < deadline) {
		err = call(j, &r);
		why = wrong(j, err, &r, buf, sizeof(buf));
		if (!why)
			why = unlike_first(j, err, &r);
		j->iters++;
		if (why)
			snprintf(j->failure, sizeof(j->failure),
				 "%s: call %lu: %s (%s while %s %s, usage %s)",
				 j->name, j->iters, why, orlov_strerror(err),
				 r.what ? r.what : "-", r.path ? r.path : "-",
				 r.usage ? r.usage : "-");
		orlov_result_free(&r);
		if (why)
			break;
	}
	return NULL;
}

static atomic_int stop;
static char bystander_failure[256];
static unsigned long bystander_files;

/* Files made meanwhile under umask 022 get 0644. */
static void *bystander(void *arg)
{
	char path[4200];
	struct stat st;
	int fd;

	(void)arg;
	snprintf(path, sizeof(path), "%s/bystander", dir);
	while (!stop && !bystander_failure[0]) {
		unlink(path);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 || fstat(fd, &st))
			snprintf(bystander_failure, sizeof(bystander_failure),
				 "bystander: %s", strerror(errno));
		else if ((st.st_mode & 07777) != 0644)
			snprintf(bystander_failure, sizeof(bystander_failure),
				 "bystander: a file made with 0666 under umask 022 got %04o",
				 (unsigned int)(st.st_mode & 07777));
		if (fd >= 0)
			close(fd);
		bystander_files++;
	}
	return NULL;
}

/* Each job once, alone: its answer, checked, kept. */
static int first_calls(void)
{
	char buf[900];
	const char *why;
	size_t i;

	for (i = 0; i < NJOBS; i++) {
		struct job *j = &jobs[i];

		snprintf(j->path, sizeof(j->path), "%s/%s", dir, j->image);
		if (j->devtable)
			snprintf(j->dev_path, sizeof(j->dev_path), "%s/%s",
				 dir, j->devtable);
		j->src = sources[j->source];
		j->err = call(j, &j->first);
		why = wrong(j, j->err, &j->first, buf, sizeof(buf));
		if (!why && !j->err) {
			j->bytes = read_all(j->path, &j->nbytes);
			why = j->bytes ? NULL : "image unreadable";
		}
		if (why) {
			printf("%s, alone: %s\n", j->name, why);
			return 1;
		}
		printf("%s, alone: %s\n", j->name,
		       j->err ? j->first.usage ? j->first.usage :
				orlov_strerror(j->err) : "made");
	}
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[NJOBS + 1];
	int seconds = argc > 5 ? atoi(argv[5]) : 10, rc = 0;
	size_t i;

	if (argc < 5) {
		fprintf(stderr, "libthreads: DIR SOURCE-DIR SOURCE-TAR BASE [SECONDS]\n");
		return 2;
	}
	dir = argv[1];
	sources[0] = argv[2];
	sources[1] = argv[3];
	base = argv[4];
	/* line by line: what was said before a crash stays */
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);
	base_bytes = read_all(base, &base_n);
	if (!base_bytes) {
		fprintf(stderr, "libthreads: cannot read %s\n", base);
		return 2;
	}
	if (first_calls())
		return 1;
	deadline = time(NULL) + seconds;
	for (i = 0; i < NJOBS; i++)
		if (pthread_create(&t[i], NULL, run, &jobs[i]))
			return 2;
	if (pthread_create(&t[NJOBS], NULL, bystander, NULL))
		return 2;
	for (i = 0; i < NJOBS; i++)
		pthread_join(t[i], NULL);
	stop = 1;
	pthread_join(t[NJOBS], NULL);
	for (i = 0; i < NJOBS; i++) {
		printf("%s: %lu calls\n", jobs[i].name, jobs[i].iters);
		if (jobs[i].failure[0]) {
			printf("FAIL %s\n", jobs[i].failure);
			rc = 1;
		}
	}
	printf("bystander: %lu files\n", bystander_files);
	if (bystander_failure[0]) {
		printf("FAIL %s\n", bystander_failure);
		rc = 1;
	}
	return rc;
}
