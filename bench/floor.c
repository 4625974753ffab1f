// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The benchmark's floor (bench/README.md): the bytes of every regular
 * file of SRC copied into one file RAW, with the least metadata and the
 * fewest system calls that still read the whole tree, on every CPU.
 *
 *   floor [-j THREADS] SRC RAW
 *
 * One unsorted walk; each regular file is lstat'ed and, unless empty,
 * opened, read and closed.  The bytes go to RAW in writes of 8 MiB, back
 * to back, no padding to blocks: one file, no inode or directory of its
 * own for any of them.  A sparse file (allocated less than its size)
 * gives its data ranges only (SEEK_DATA / SEEK_HOLE, copy_file_range),
 * so a hole stays a hole.  RAW is fsynced at the end, as every tool's
 * image is.  Symlinks are not followed.
 *
 * The work is shared by THREADS threads (default: the CPUs online), as a
 * tool may use every CPU of the machine (orlov-populate reads the source
 * on two): a queue of directories to read, of batches of up to BATCH
 * names of one directory to copy and of CHUNK-byte pieces of the files
 * larger than that (copied by the kernel, copy_file_range, where it can).
 * Each thread fills its own buffer and takes the next stretch of RAW for
 * it when it writes it out, so RAW holds the bytes in no particular
 * order.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHUNK (8u << 20)
#define BATCH 256

/* A descriptor shared by the items that use it, closed by the last. */
struct fdref {
	int fd;
	int refs;		/* items not done (and who makes them) */
};

/* A file of more than CHUNK bytes, copied in pieces by every thread. */
struct big {
	struct fdref r;		/* first: freed as the fdref */
	uint64_t at;		/* its stretch of RAW */
};

struct item {
	struct item *next;
	char *path;		/* a directory to read, or NULL: */
	struct big *big;	/* a piece of @big, or NULL: */
	uint64_t off, len;
	struct fdref *d;	/* names of directory @d to copy */
	size_t n;
	char *names[BATCH];
};

struct floor {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct item *head, *tail;
	int active;		/* threads working on an item */
	int out;
	uint64_t pos;		/* RAW's next free byte */
	int err;		/* the first errno, 0 */
	const char *what;
};

static void fail(struct floor *f, int err, const char *what)
{
	pthread_mutex_lock(&f->lock);
	if (!f->err) {
		f->err = err;
		f->what = what;
	}
	pthread_cond_broadcast(&f->more);	/* the waiting stop */
	pthread_mutex_unlock(&f->lock);
}

static void put(struct floor *f, struct item *it)
{
	pthread_mutex_lock(&f->lock);
	it->next = NULL;
	if (f->tail)
		f->tail->next = it;
	else
		f->head = it;
	f->tail = it;
	pthread_cond_signal(&f->more);
	pthread_mutex_unlock(&f->lock);
}

static void fdref_get(struct floor *f, struct fdref *r)
{
	pthread_mutex_lock(&f->lock);
	r->refs++;
	pthread_mutex_unlock(&f->lock);
}

/* @r's item is done: the last closes it and frees its holder. */
static void fdref_put(struct floor *f, struct fdref *r)
{
	int last;

	pthread_mutex_lock(&f->lock);
	last = --r->refs == 0;
	pthread_mutex_unlock(&f->lock);
	if (last) {
		close(r->fd);
		free(r);
	}
}

/* A stretch of RAW of @len bytes for one thread. */
static uint64_t take(struct floor *f, uint64_t len)
{
	return __atomic_fetch_add(&f->pos, len, __ATOMIC_RELAXED);
}

struct buf {
	char *p;
	size_t held;
	char *scratch;		/* CHUNK bytes for copies without the kernel's */
};

/* @len bytes of @p at @at of RAW. */
static int write_at(struct floor *f, const char *p, size_t len, uint64_t at)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(f->out, p + done, len - done,
				   (off_t)(at + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		done += (size_t)n;
	}
	return 0;
}

static int flush(struct floor *f, struct buf *b)
{
	int err = write_at(f, b->p, b->held, take(f, b->held));

	b->held = 0;
	return err;
}

/* [s, t) of @fd at @at + s of RAW through @b's scratch buffer: where
 * copy_file_range cannot (another file system: EXDEV). */
static int copy_range_read(struct floor *f, struct buf *b, int fd, off_t s,
			   off_t t, uint64_t at)
{
	while (s < t) {
		size_t len = (size_t)(t - s) < CHUNK ? (size_t)(t - s) : CHUNK;
		ssize_t n = pread(fd, b->scratch, len, s);
		int err;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : 0;	/* shorter now */
		err = write_at(f, b->scratch, (size_t)n, at + (uint64_t)s);
		if (err)
			return err;
		s += n;
	}
	return 0;
}

/* [s, t) of @fd to @at + s of RAW: in the kernel where it can. */
static int copy_range(struct floor *f, struct buf *b, int fd, off_t s,
		      off_t t, uint64_t at)
{
	while (s < t) {
		loff_t in = s, o = (loff_t)(at + (uint64_t)s);
		ssize_t n = copy_file_range(fd, &in, f->out, &o, (size_t)(t - s), 0);

		if (n < 0 && (errno == EXDEV || errno == EINVAL ||
			      errno == EOPNOTSUPP || errno == ENOSYS))
			return copy_range_read(f, b, fd, s, t, at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : 0;	/* shorter now */
		s += n;
	}
	return 0;
}

static int copy_sparse(struct floor *f, struct buf *b, int fd, uint64_t size)
{
	uint64_t at = take(f, size);
	off_t off = 0;

	while ((uint64_t)off < size) {
		off_t s = lseek(fd, off, SEEK_DATA), t;
		int err;

		if (s < 0)
			return errno == ENXIO ? 0 : errno;	/* a hole to the end */
		t = lseek(fd, s, SEEK_HOLE);
		if (t < 0)
			return errno;
		err = copy_range(f, b, fd, s, t, at);
		if (err)
			return err;
		off = t;
	}
	return 0;
}

/* A big dense file: its pieces after the first queued for every thread,
 * the first copied here; @fd is the pieces' from now on. */
static int copy_big(struct floor *f, struct buf *b, int fd, uint64_t size)
{
	struct big *g = malloc(sizeof(*g));
	uint64_t off;
	int err;

	if (!g) {
		close(fd);
		return ENOMEM;
	}
	g->r.fd = fd;
	g->r.refs = 1;
	g->at = take(f, size);
	for (off = CHUNK; off < size; off += CHUNK) {
		struct item *it = calloc(1, sizeof(*it));

		if (!it) {
			fdref_put(f, &g->r);
			return ENOMEM;
		}
		it->big = g;
		it->off = off;
		it->len = size - off < CHUNK ? size - off : CHUNK;
		fdref_get(f, &g->r);
		put(f, it);
	}
	err = copy_range(f, b, fd, 0, CHUNK, g->at);
	fdref_put(f, &g->r);
	return err;
}

static int copy_file(struct floor *f, struct buf *b, int dfd, const char *name)
{
	struct stat st;
	uint64_t want;
	int fd, err = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno;
	if (!S_ISREG(st.st_mode) || !st.st_size)
		return 0;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if ((uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size) {
		err = copy_sparse(f, b, fd, (uint64_t)st.st_size);
		close(fd);
		return err;
	}
	if ((uint64_t)st.st_size > CHUNK)
		return copy_big(f, b, fd, (uint64_t)st.st_size);
	for (want = (uint64_t)st.st_size; want && !err;) {
		size_t room = CHUNK - b->held;
		ssize_t n;

		if (!room) {
			err = flush(f, b);
			continue;
		}
		n = read(fd, b->p + b->held, want < room ? (size_t)want : room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : 0;	/* shorter now: what it has */
			break;
		}
		b->held += (size_t)n;
		want -= (uint64_t)n;
	}
	close(fd);
	return err;
}

/* Read the directory @path: its subdirectories queued to be read, its
 * other names in batches to be copied. */
static int read_dir(struct floor *f, const char *path)
{
	char *buf = malloc(1 << 16);
	struct fdref *d = malloc(sizeof(*d));
	struct item *it = NULL;
	int err = 0;

	if (!buf || !d) {
		free(buf);
		free(d);
		return ENOMEM;
	}
	d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->fd < 0) {
		err = errno;
		free(buf);
		free(d);
		return err;
	}
	d->refs = 1;
	for (;;) {
		long n = syscall(SYS_getdents64, d->fd, buf, 1 << 16);
		long at;

		if (n <= 0) {
			err = n < 0 ? errno : 0;
			break;
		}
		for (at = 0; at < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + at);
			unsigned char type = e->d_type;

			at += e->d_reclen;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (type == DT_UNKNOWN) {
				struct stat st;

				if (fstatat(d->fd, e->d_name, &st,
					    AT_SYMLINK_NOFOLLOW)) {
					err = errno;
					break;
				}
				type = S_ISDIR(st.st_mode) ? DT_DIR :
				       S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
			}
			if (type == DT_DIR) {
				struct item *sub = calloc(1, sizeof(*sub));

				if (!sub || asprintf(&sub->path, "%s/%s", path,
						     e->d_name) < 0) {
					free(sub);
					err = ENOMEM;
					break;
				}
				put(f, sub);
			} else if (type == DT_REG) {
				if (!it) {
					it = calloc(1, sizeof(*it));
					if (!it) {
						err = ENOMEM;
						break;
					}
					it->d = d;
					fdref_get(f, d);
				}
				it->names[it->n] = strdup(e->d_name);
				if (!it->names[it->n]) {
					err = ENOMEM;
					break;
				}
				if (++it->n == BATCH) {
					put(f, it);
					it = NULL;
				}
			}
		}
		if (err)
			break;
	}
	if (it)
		put(f, it);
	free(buf);
	fdref_put(f, d);
	return err;
}

static void *worker(void *p)
{
	struct floor *f = p;
	struct buf b = { malloc(CHUNK), 0, malloc(CHUNK) };
	int err = b.p && b.scratch ? 0 : ENOMEM;

	if (err)
		fail(f, err, "allocating");
	pthread_mutex_lock(&f->lock);
	for (;;) {
		struct item *it;
		size_t i;

		while (!f->head && f->active && !f->err)
			pthread_cond_wait(&f->more, &f->lock);
		if (!f->head || f->err || err)
			break;
		it = f->head;
		f->head = it->next;
		if (!f->head)
			f->tail = NULL;
		f->active++;
		pthread_mutex_unlock(&f->lock);
		if (it->path) {
			err = read_dir(f, it->path);
			if (err)
				fail(f, err, "reading a directory");
			free(it->path);
		} else if (it->big) {
			err = copy_range(f, &b, it->big->r.fd, (off_t)it->off,
					 (off_t)(it->off + it->len), it->big->at);
			if (err)
				fail(f, err, "copying a file");
			fdref_put(f, &it->big->r);
		} else {
			for (i = 0; i < it->n; i++) {
				if (!err && (err = copy_file(f, &b, it->d->fd,
							     it->names[i])))
					fail(f, err, "copying a file");
				free(it->names[i]);
			}
			fdref_put(f, it->d);
		}
		free(it);
		pthread_mutex_lock(&f->lock);
		f->active--;
		if (!f->active && !f->head)
			pthread_cond_broadcast(&f->more);	/* all done */
	}
	pthread_cond_broadcast(&f->more);
	pthread_mutex_unlock(&f->lock);
	if (b.p && b.held && (err = flush(f, &b)))
		fail(f, err, "writing");
	free(b.p);
	free(b.scratch);
	return NULL;
}

int main(int argc, char **argv)
{
	struct floor f = { .lock = PTHREAD_MUTEX_INITIALIZER,
			   .more = PTHREAD_COND_INITIALIZER };
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t *t;
	struct item *root;
	long i;

	if (argc == 5 && !strcmp(argv[1], "-j")) {
		jobs = strtol(argv[2], NULL, 10);
		argv += 2;
		argc -= 2;
	}
	if (argc != 3 || jobs < 1) {
		fprintf(stderr, "usage: floor [-j THREADS] SRC RAW\n");
		return 2;
	}
	f.out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	root = calloc(1, sizeof(*root));
	t = calloc((size_t)jobs, sizeof(*t));
	if (f.out < 0 || !root || !t || !(root->path = strdup(argv[1]))) {
		perror(argv[2]);
		return 1;
	}
	put(&f, root);
	for (i = 0; i < jobs; i++)
		if (pthread_create(&t[i], NULL, worker, &f)) {
			fail(&f, EAGAIN, "starting a thread");
			break;
		}
	while (i > 0)
		pthread_join(t[--i], NULL);
	if (!f.err && ftruncate(f.out, (off_t)f.pos))
		fail(&f, errno, "truncating");
	if (!f.err && fsync(f.out))
		fail(&f, errno, "syncing");
	close(f.out);
	if (f.err) {
		fprintf(stderr, "floor: %s while %s in %s\n", strerror(f.err),
			f.what, argv[1]);
		return 1;
	}
	free(t);
	return 0;
}
