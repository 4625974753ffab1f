// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Host directory walker.  Everything is opened relative to the directory
 * being read, with O_NOFOLLOW, so nothing outside the source root is ever
 * read: symlinks are copied, never followed.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

#include "source/walk.h"
#include "source/ahead.h"
#include "source/hostxattr.h"
#include "source/reread.h"
#include "lib/util.h"
#include "lib/orlov_err.h"

struct host_file {
	const struct src_entry *raw;	/* as lstat saw it, the path the walk's */
	int dirfd;
	int fd;			/* opened on first data access */
	off_t hole0;		/* ahead_slot.hole0 */
	unsigned char *pre;	/* ahead_slot.data, st_size bytes */
	int *reads_data;	/* walker.reads_data */
};

struct walker {
	const struct walk_opts *opts;
	const struct walk_visitor *v;
	struct strbuf path;
	const char *root;
	int have_proc;		/* /proc/self/fd names what we hold open */
	struct ahead *ahead;	/* the reader thread, or NULL */
	/* The visitor reads data (the write pass, not the check pass): the
	 * reader thread then reads small files ahead too.  Set by the walk,
	 * read by the reader, both atomically. */
	int reads_data;
};

/* Small files the reader reads whole, at most HELD (ahead.c) at a time. */
#define AHEAD_DATA (64u << 10)

static errcode_t walk_fail(struct walker *w, errcode_t err, const char *what)
{
	if (w->v->error)
		w->v->error(w->v->ctx, err, what, w->path.s ? w->path.s : "");
	return err;
}

/* @err of @ns: the scratch file's (@doing it), or the directory's. */
static errcode_t fail_names(struct walker *w, const struct walk_names *ns,
			    errcode_t err, const char *doing)
{
	if (!ns->scratch || !w->v->scratch_error)
		return walk_fail(w, err, "reading directory");
	w->v->scratch_error(w->v->ctx, err, doing);
	return err;
}

/*
 * Open @name in @dirfd as what fstatat() saw there (@st): never through a
 * symlink, without blocking on a FIFO swapped in, without touching its
 * atime where we may (O_NOATIME needs ownership or CAP_FOWNER), and
 * ORLOV_ERR_SOURCE_CHANGED when another file took its place.
 */
static int open_nofollow(int dirfd, const char *name, int flags)
{
	int fd;

	flags |= O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC;
	fd = openat(dirfd, name, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, name, flags);
	return fd;
}

static int same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* walk_open_same, with @times: walk_open_unchanged. */
static errcode_t open_same(int dirfd, const char *name, const struct stat *st,
			   int flags, int times, int *out)
{
	struct stat now;
	int fd = open_nofollow(dirfd, name, flags);

	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR || errno == ENXIO ?
		       ORLOV_ERR_SOURCE_CHANGED : (errcode_t)errno;
	if (fstat(fd, &now) || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino ||
	    (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT) ||
	    (S_ISREG(st->st_mode) && now.st_size != st->st_size) ||
	    (times && (!same_time(&now.st_mtim, &st->st_mtim) ||
		       !same_time(&now.st_ctim, &st->st_ctim)))) {
		close(fd);
		return ORLOV_ERR_SOURCE_CHANGED;
	}
	*out = fd;
	return 0;
}

errcode_t walk_open_same(int dirfd, const char *name, const struct stat *st,
			 int flags, int *out)
{
	return open_same(dirfd, name, st, flags, 0, out);
}

errcode_t walk_open_unchanged(int dirfd, const char *name,
			      const struct stat *st, int *out)
{
	return open_same(dirfd, name, st, 0, 1, out);
}

static errcode_t host_open(const struct src_entry *e)
{
	struct host_file *h = e->priv;

	if (h->fd >= 0)
		return 0;
	return walk_open_same(h->dirfd, e->name, &e->st, 0, &h->fd);
}

static errcode_t host_next_data(const struct src_entry *e, uint64_t off,
				uint64_t *start, uint64_t *end)
{
	struct host_file *h = e->priv;
	uint64_t size = (uint64_t)e->st.st_size;
	off_t s, t;
	errcode_t err;

	*start = *end = size;
	if (off >= size)
		return 0;
	/* Data at @off runs to the next hole: one lseek, not two, for the
	 * dense files that are most of a tree (at 0, made by the reader
	 * thread when it opened the file). */
	if (!off && h->hole0 > 0) {
		*start = 0;
		*end = (uint64_t)h->hole0 < size ? (uint64_t)h->hole0 : size;
		return 0;
	}
	err = host_open(e);
	if (err)
		return err;
	t = lseek(h->fd, (off_t)off, SEEK_HOLE);
	if (t > (off_t)off) {
		*start = off;
		*end = (uint64_t)t < size ? (uint64_t)t : size;
		return 0;
	}
	s = lseek(h->fd, (off_t)off, SEEK_DATA);
	if (s < 0) {
		if (errno == ENXIO)
			return 0;	/* only a hole after off */
		if (errno != EINVAL && errno != EOPNOTSUPP)
			return (errcode_t)errno;
		/* No hole support: all of the rest is data. */
		*start = off;
		*end = size;
		return 0;
	}
	t = lseek(h->fd, s, SEEK_HOLE);
	if (t < 0)
		return (errcode_t)errno;
	*start = (uint64_t)s < size ? (uint64_t)s : size;
	*end = (uint64_t)t < size ? (uint64_t)t : size;
	return 0;
}

static errcode_t host_read(const struct src_entry *e, void *buf, size_t len,
			   uint64_t off)
{
	struct host_file *h = e->priv;
	errcode_t err;

	if (!__atomic_load_n(h->reads_data, __ATOMIC_RELAXED))
		__atomic_store_n(h->reads_data, 1, __ATOMIC_RELAXED);
	if (h->pre && off + len <= (uint64_t)e->st.st_size) {
		memcpy(buf, h->pre + off, len);
		return 0;
	}
	err = host_open(e);
	return err ? err :
	       pread_all(h->fd, buf, len, off, ORLOV_ERR_SOURCE_CHANGED);
}

/* Read through our descriptor (not the reader thread's copy, taken
 * after its fstat like the walk's own reads): its atime now. */
static errcode_t host_atime(const struct src_entry *e, struct timespec *ts)
{
	struct host_file *h = e->priv;
	struct stat now;

	*ts = e->st.st_atim;
	if (h->fd < 0)
		return 0;
	if (fstat(h->fd, &now))
		return (errcode_t)errno;
	*ts = now.st_atim;
	return 0;
}

/* The entry as lstat saw it, not as owner and time rules rewrote it. */
static errcode_t host_note(const struct src_entry *e, struct strbuf *note)
{
	const struct host_file *h = e->priv;
	const struct stat *st = &h->raw->st;
	struct src_note_id id = {
		.dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime = st->st_mtim.tv_sec, .ctime = st->st_ctim.tv_sec,
		.mtime_ns = (uint32_t)st->st_mtim.tv_nsec,
		.ctime_ns = (uint32_t)st->st_ctim.tv_nsec,
	};
	errcode_t err = sb_append(note, (const char *)&id, sizeof(id));

	return err ? err : sb_append(note, h->raw->path, strlen(h->raw->path));
}

static const struct src_data_ops host_data_ops = {
	.next_data = host_next_data,
	.read = host_read,
	.atime = host_atime,
	.note = host_note,
};

static void free_xattrs(struct src_entry *e)
{
	host_xattrs_free(e->xattrs, e->nxattrs);
	e->xattrs = NULL;
	e->nxattrs = 0;
}

/* Attributes through the open file @fd, or where none can be opened (a
 * symlink, a device, a FIFO) through a path that names it from the
 * directory we hold open (/proc/self/fd) without following it, or
 * without /proc (a chroot, a container) from the source root. */
static errcode_t read_xattrs(const struct walker *w, int dirfd, int fd,
			     struct src_entry *e)
{
	struct strbuf path = { 0 };
	errcode_t err = 0;

	if (fd >= 0)
		err = sb_append(&path, "", 0);
	else if (w->have_proc)
		err = sb_printf(&path, "/proc/self/fd/%d/%s", dirfd, e->name);
	else
		err = sb_printf(&path, "%s/%s", w->root, e->path);
	if (!err)
		err = host_xattrs_read(fd, path.s, &e->xattrs, &e->nxattrs);
	sb_free(&path);
	return err;
}

errcode_t walk_read_names(int fd, struct walk_names *ns)
{
	struct dirent *de;
	errcode_t err = 0;
	DIR *d;
	int dfd = dup(fd);

	if (dfd < 0)
		return (errcode_t)errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return (errcode_t)errno;
	}
	rewinddir(d);	/* the offset is shared with @fd, which may have been read */
	errno = 0;
	memset(ns, 0, sizeof(*ns));
	ns->budget = WALK_NAMES_BUDGET;
	while (!err && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		err = walk_names_add(ns, de->d_name, strlen(de->d_name),
				     de->d_type);
		errno = 0;
	}
	if (!err && errno)
		err = (errcode_t)errno;
	closedir(d);
	if (!err)
		err = walk_names_sort(ns);
	if (err) {
		int s = ns->scratch;

		walk_names_free(ns);
		ns->scratch = s;
	}
	return err;
}

/*
 * One directory being walked.  The walk keeps its own stack, not the C
 * one, so that no depth of tree overflows it; and only the innermost
 * OPEN_DIRS directories stay open: an outer one closed on the way down is
 * opened again on the way up as ".." of its child, checked to be the same
 * directory.
 */
struct frame {
	int fd;			/* -1 while closed */
	struct stat st;		/* what it was when entered */
	struct walk_names names;
	size_t next;
	size_t mark;		/* path length before its name */
	const char *name;	/* in the parent's names ("" for the root) */
	size_t name_len;
	struct ahead_dir *ad;	/* its names read ahead */
};

#define OPEN_DIRS 64

/* One of the files the walk leaves out (walk_opts.skip)? */
static int skipped(const struct walker *w, const struct stat *st)
{
	size_t i;

	for (i = 0; i < w->opts->nskip; i++)
		if (w->opts->skip[i].dev == st->st_dev &&
		    w->opts->skip[i].ino == st->st_ino)
			return 1;
	return 0;
}

/*
 * Read what a leaf or directory is, without following it.  A directory,
 * and a regular file whose data or attributes are wanted, is opened here
 * (*fd) and everything else read from that descriptor: what is copied is
 * the file lstat described, not one put in its place since.
 */
/*
 * Where readdir says directory, or regular file to be opened anyway, open
 * it first and read its attributes from the descriptor: one lookup of the
 * name, not two.  The open is the one the slow path makes after lstat
 * (same flags), and any surprise (another type now, a failure) gives -1
 * and the slow path, whose checks and errors are then the only ones.
 */
static int open_by_type(const struct walker *w, int dirfd, unsigned char type,
			struct src_entry *e)
{
	int want = type == DT_DIR ? S_IFDIR : S_IFREG;
	int fd;

	if (type != DT_DIR && (type != DT_REG ||
			       !(w->opts->want_data || w->opts->want_xattrs)))
		return -1;
	fd = open_nofollow(dirfd, e->name, type == DT_DIR ? O_DIRECTORY : 0);
	if (fd < 0)
		return -1;
	if (fstat(fd, &e->st) || (int)(e->st.st_mode & S_IFMT) != want) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * No hole anywhere in @p's @size bytes, seen from the bytes alone: every
 * 512-byte piece (the last one shorter) holds a byte other than zero.  A
 * hole reads as zeros and is at least a sector, aligned to one, so such a
 * file has none: lseek(SEEK_HOLE) at 0 could only have answered its size.
 */
static int no_hole_in(const unsigned char *p, size_t size)
{
	size_t at, i, end;

	for (at = 0; at < size; at = end) {
		end = size - at > 512 ? at + 512 : size;
		for (i = at; i < end && !p[i]; i++)
			;
		if (i == end)
			return 0;
	}
	return 1;
}

/* Read the @size bytes of a small file on the reader: NULL when short
 * (the file changed: the walk reads it, and finds out) or out of memory. */
static unsigned char *read_whole(int fd, size_t size)
{
	unsigned char *p = malloc(size);

	if (p && pread(fd, p, size, 0) != (ssize_t)size) {
		free(p);
		p = NULL;
	}
	return p;
}

/* The first data range's end, and the data of a small dense file once the
 * walk reads data, for the walk (host_next_data, host_read), on the
 * reader: the same answers as the walk's own calls, made earlier.  A small
 * file is read first: when its bytes show it has no hole (most files), its
 * first hole is its end without asking (a system call a file saved). */
static void fetch_data(struct walker *w, struct ahead_slot *s)
{
	size_t size = (size_t)s->st.st_size;
	unsigned char *data = NULL;
	off_t t;

	if (w->opts->ranges_only && src_allocated_whole(&s->st)) {
		/* the check pass counts it whole (scan.c): no range asked */
		close(s->fd);
		s->fd = -1;
		return;
	}
	if (size <= AHEAD_DATA &&
	    __atomic_load_n(&w->reads_data, __ATOMIC_RELAXED))
		data = read_whole(s->fd, size);
	if (data && no_hole_in(data, size)) {
		t = s->st.st_size;
	} else {
		t = lseek(s->fd, 0, SEEK_HOLE);
		if (data && t < s->st.st_size) {
			free(data);
			data = NULL;
		}
	}
	s->hole0 = t > 0 ? t : 0;
	s->data = data;
	/* all read, or no hole and nothing to read: the walk needs no
	 * descriptor, nor to close it (nor does the reader hold it, and wait
	 * for the walk once HELD are) */
	if (s->data || (t >= s->st.st_size && w->opts->ranges_only)) {
		close(s->fd);
		s->fd = -1;
	}
}

/* open_by_type of a regular file, and its attributes, on the reader */
static void fetch_ahead(void *arg, int dirfd, const char *name,
			struct ahead_slot *s)
{
	struct walker *w = arg;
	struct src_entry e;

	memset(&e, 0, sizeof(e));
	e.name = name;
	s->fd = open_by_type(w, dirfd, DT_REG, &e);
	if (s->fd < 0)
		return;
	s->read = 1;
	s->st = e.st;
	if (w->opts->want_xattrs)
		s->xerr = host_xattrs_read(s->fd, "", &s->xattrs, &s->nxattrs);
	/* no data to read: the walk needs no descriptor, nor to close it */
	if (S_ISREG(s->st.st_mode) && s->st.st_size == 0) {
		close(s->fd);
		s->fd = -1;
	} else if (S_ISREG(s->st.st_mode) && w->opts->want_data) {
		fetch_data(w, s);
	}
}

/*
 * readlink() sets a symlink's atime, and reading a directory one's where
 * O_NOATIME is refused (another owner's); relatime lets it move once, then
 * not for a day.  The atime given is the one after our own read: the one a
 * later walk sees (the copy after --create's digest, the next run), not
 * the one before it, so that reading the tree does not change what it is
 * said to hold.  @name in @dirfd (NULL: @dirfd itself) must still be the
 * entry @st describes.
 */
static errcode_t settle_atime(int dirfd, const char *name, struct stat *st)
{
	struct stat now;

	if (name ? fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) :
		   fstat(dirfd, &now))
		return (errcode_t)errno;
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	    (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT))
		return ORLOV_ERR_SOURCE_CHANGED;
	st->st_atim = now.st_atim;
	return 0;
}

/* @pre: what the reader found, if it opened the entry (its attributes
 * become @e's) */
static errcode_t read_entry(struct walker *w, int dirfd, unsigned char type,
			    struct src_entry *e, char **target, int *fd,
			    int *skip, struct ahead_slot *pre)
{
	errcode_t err;

	if (pre) {
		*fd = pre->fd;
		e->st = pre->st;
	} else {
		*fd = open_by_type(w, dirfd, type, e);
	}
	if (pre || *fd >= 0) {
		*skip = !S_ISDIR(e->st.st_mode) && skipped(w, &e->st);
		if (*skip) {
			if (*fd >= 0)
				close(*fd);
			*fd = -1;
			return 0;
		}
		goto opened;
	}
	if (fstatat(dirfd, e->name, &e->st, AT_SYMLINK_NOFOLLOW))
		return walk_fail(w, (errcode_t)errno, "reading attributes of");
	/* the image inside SOURCE: its copy would be half written */
	*skip = !S_ISDIR(e->st.st_mode) && skipped(w, &e->st);
	if (*skip)
		return 0;
	if (S_ISDIR(e->st.st_mode) ||
	    (S_ISREG(e->st.st_mode) && (w->opts->want_data || w->opts->want_xattrs))) {
		err = walk_open_same(dirfd, e->name, &e->st,
				S_ISDIR(e->st.st_mode) ? O_DIRECTORY : 0, fd);
		if (err)
			return walk_fail(w, err, S_ISDIR(e->st.st_mode) ?
				    "opening directory" : "opening");
	}
opened:
	if (S_ISLNK(e->st.st_mode)) {
		size_t cap = (size_t)e->st.st_size + 1;
		ssize_t n;

		*target = malloc(cap + 1);
		if (!*target)
			return ENOMEM;
		n = readlinkat(dirfd, e->name, *target, cap);
		if (n < 0)
			return walk_fail(w, (errcode_t)errno, "reading symlink");
		/* a longer target than lstat said: replaced meanwhile */
		if ((size_t)n >= cap)
			return walk_fail(w, ORLOV_ERR_SOURCE_CHANGED, "reading symlink");
		(*target)[n] = '\0';
		e->link_target = *target;
		e->link_len = (size_t)n;
		err = settle_atime(dirfd, e->name, &e->st);
		if (err)
			return walk_fail(w, err, "reading attributes of");
	}
	if (w->opts->want_xattrs) {
		if (pre) {
			e->xattrs = pre->xattrs;
			e->nxattrs = pre->nxattrs;
			pre->xattrs = NULL;
			pre->nxattrs = 0;
			err = pre->xerr;
		} else {
			err = read_xattrs(w, dirfd, *fd, e);
		}
		if (err)
			return walk_fail(w, err, "reading extended attributes of");
	}
	if (S_ISREG(e->st.st_mode) && w->opts->want_data)
		e->data = &host_data_ops;
	return 0;
}

/* Push the directory @e, open as @fd (which the stack takes over). */
static errcode_t push_dir(struct walker *w, struct frame **stack, size_t *cap,
			  size_t *depth, int fd, struct src_entry *e,
			  size_t mark)
{
	struct frame *f;
	errcode_t err;
	int flags = 0;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0)
		e->fsflags = (uint32_t)flags;
	err = grow_array(stack, cap, *depth + 1, sizeof(**stack), 64);
	if (err) {
		close(fd);
		return err;
	}
	f = &(*stack)[*depth];
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->st = e->st;
	f->mark = mark;
	f->name = e->name;
	f->name_len = e->name_len;
	(*depth)++;
	/* its names read first: its atime is then settled (settle_atime) */
	err = walk_read_names(fd, &f->names);
	if (err)
		err = fail_names(w, &f->names, err, "writing");
	else if ((err = settle_atime(fd, NULL, &e->st)))
		err = walk_fail(w, err, "reading attributes of");
	f->st.st_atim = e->st.st_atim;
	if (!err)
		err = w->v->enter_dir(w->v->ctx, e);
	/* a spilled directory's names are taken in order, by the walk only */
	if (!err && w->ahead && !walk_names_spilled(&f->names)) {
		err = ahead_dir_new(&f->ad, fd, &f->names);
		if (!err)
			ahead_enter(w->ahead, f->ad, fd);
	}
	/* deep enough: the outer directory closes until the way back */
	if (*depth > OPEN_DIRS && (*stack)[*depth - 1 - OPEN_DIRS].fd >= 0) {
		close((*stack)[*depth - 1 - OPEN_DIRS].fd);
		(*stack)[*depth - 1 - OPEN_DIRS].fd = -1;
	}
	return err;
}

/* The top directory is done: leave it, and reopen its parent if closed. */
static errcode_t pop_dir(struct walker *w, struct frame *stack, size_t *depth)
{
	struct frame *f = &stack[*depth - 1];
	struct src_entry e;
	errcode_t err;

	memset(&e, 0, sizeof(e));
	sb_truncate(&w->path, f->mark);
	if (*depth > 1) {
		if (w->path.len && (err = sb_append(&w->path, "/", 1)))
			return err;
		if ((err = sb_append(&w->path, f->name, f->name_len)))
			return err;
	}
	e.path = w->path.s;
	e.name = f->name;
	e.name_len = f->name_len;
	e.st = f->st;
	err = w->v->leave_dir(w->v->ctx, &e);
	if (!err && *depth > 1 && stack[*depth - 2].fd < 0) {
		err = walk_open_same(f->fd, "..", &stack[*depth - 2].st, O_DIRECTORY,
				&stack[*depth - 2].fd);
		if (err) {
			sb_truncate(&w->path, f->mark);
			err = walk_fail(w, err, "opening directory");
		}
	}
	sb_truncate(&w->path, f->mark);
	if (w->ahead) {
		struct frame *up = *depth > 1 && !err ? &stack[*depth - 2] : NULL;

		ahead_enter(w->ahead, up ? up->ad : NULL, up ? up->fd : -1);
		ahead_dir_free(f->ad);
		f->ad = NULL;
	}
	close(f->fd);
	walk_names_free(&f->names);
	(*depth)--;
	return err;
}

static errcode_t walk_stack(struct walker *w, struct frame **stack,
			    size_t *cap, size_t *depth)
{
	errcode_t err = 0;

	while (!err && *depth > 0) {
		struct frame *f = &(*stack)[*depth - 1];
		struct src_entry e;
		struct host_file h = { .raw = &e, .dirfd = f->fd, .fd = -1,
				       .reads_data = &w->reads_data };
		struct ahead_slot pre;
		char *target = NULL;
		size_t mark = w->path.len;
		int fd, skip = 0, got;
		unsigned char type;

		if (f->next == f->names.count) {
			err = pop_dir(w, *stack, depth);
			continue;
		}
		memset(&e, 0, sizeof(e));
		err = walk_names_get(&f->names, f->next, &e.name, &e.name_len,
				     &type);
		if (err) {
			err = fail_names(w, &f->names, err, "reading");
			break;
		}
		got = f->ad && ahead_take(w->ahead, f->ad, f->next, &pre);
		f->next++;
		if (w->path.len && (err = sb_append(&w->path, "/", 1)))
			break;
		if ((err = sb_append(&w->path, e.name, e.name_len)))
			break;
		e.path = w->path.s;
		e.priv = &h;
		err = read_entry(w, f->fd, type, &e, &target, &fd, &skip,
				 got ? &pre : NULL);
		if (got) {
			host_xattrs_free(pre.xattrs, pre.nxattrs);
			h.hole0 = pre.hole0;
			h.pre = pre.data;
		}
		if (!err && skip) {
			free(h.pre);
			sb_truncate(&w->path, mark);
			continue;
		}
		if (!err && S_ISDIR(e.st.st_mode)) {
			/* its own entries follow it; the path keeps its name */
			err = push_dir(w, stack, cap, depth, fd, &e, mark);
			free(h.pre);
			free(target);
			free_xattrs(&e);
			continue;
		}
		h.fd = fd;
		if (!err)
			err = w->v->leaf(w->v->ctx, &e);
		if (h.fd >= 0)
			close(h.fd);
		free(h.pre);
		free(target);
		free_xattrs(&e);
		sb_truncate(&w->path, mark);
	}
	return err;
}

errcode_t walk_tree(const char *root, const struct walk_opts *opts,
		    const struct walk_visitor *v)
{
	struct walker w = { .opts = opts, .v = v, .root = root };
	struct frame *stack = NULL;
	size_t cap = 0, depth = 0;
	struct src_entry e;
	errcode_t err;
	int fd;

	memset(&e, 0, sizeof(e));
	w.have_proc = access("/proc/self/fd", X_OK) == 0;
	if ((err = sb_append(&w.path, "", 0)))
		return err;
	/* without the thread (it could not start) the walk is the same */
	if (opts->ahead && ahead_start(&w.ahead, fetch_ahead, &w))
		w.ahead = NULL;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = (errcode_t)errno;
		/* a SOURCE that is not there may be a missing archive */
		if (v->error)
			v->error(v->ctx, err, err == ENOENT ? "opening source" :
				 "opening source directory", "");
		sb_free(&w.path);
		return err;
	}
	if (fstat(fd, &e.st)) {
		err = (errcode_t)errno;
		if (v->error)
			v->error(v->ctx, err, "reading attributes of", "");
		close(fd);
		sb_free(&w.path);
		return err;
	}
	e.path = "";
	e.name = "";
	/* the root's own attributes (orlov-populate --root-attrs) */
	err = opts->want_xattrs ? read_xattrs(&w, -1, fd, &e) : 0;
	if (err) {
		if (v->error)
			v->error(v->ctx, err, "reading extended attributes of", "");
		close(fd);
	}
	if (!err)
		err = push_dir(&w, &stack, &cap, &depth, fd, &e, 0);
	free_xattrs(&e);
	if (!err)
		err = walk_stack(&w, &stack, &cap, &depth);
	ahead_stop(w.ahead);
	/* after a failure: close what is still open, without leave_dir */
	while (depth > 0) {
		struct frame *f = &stack[--depth];

		ahead_dir_free(f->ad);
		if (f->fd >= 0)
			close(f->fd);
		walk_names_free(&f->names);
	}
	free(stack);
	sb_free(&w.path);
	return err;
}
