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
#include <sys/xattr.h>
#include <linux/fs.h>

#include "walk.h"
#include "util.h"
#include "orlov_err.h"

struct host_file {
	int dirfd;
	int fd;			/* opened on first data access */
};

struct walker {
	const struct walk_opts *opts;
	const struct walk_visitor *v;
	struct strbuf path;
};

int walk_name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

static int name_cmp(const void *a, const void *b)
{
	const struct walk_name *x = a, *y = b;

	return walk_name_cmp(x->s, x->len, y->s, y->len);
}

void walk_free_names(struct walk_name *names, size_t count)
{
	while (count)
		free(names[--count].s);
	free(names);
}

static errcode_t fail(struct walker *w, errcode_t err, const char *what)
{
	if (w->v->error)
		w->v->error(w->v->ctx, err, what, w->path.s ? w->path.s : "");
	return err;
}

static errcode_t host_open(const struct src_entry *e)
{
	struct host_file *h = e->priv;

	if (h->fd >= 0)
		return 0;
	h->fd = openat(h->dirfd, e->name,
		       O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	return h->fd < 0 ? (errcode_t)errno : 0;
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
	err = host_open(e);
	if (err)
		return err;
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
	char *p = buf;
	errcode_t err = host_open(e);

	if (err)
		return err;
	while (len) {
		ssize_t n = pread(h->fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return (errcode_t)errno;
		}
		if (n == 0)
			return ORLOV_ERR_SOURCE_CHANGED;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static const struct src_data_ops host_data_ops = {
	.next_data = host_next_data,
	.read = host_read,
};

static void free_xattrs(struct src_entry *e)
{
	size_t i;

	for (i = 0; i < e->nxattrs; i++) {
		free(e->xattrs[i].name);
		free(e->xattrs[i].value);
	}
	free(e->xattrs);
	e->xattrs = NULL;
	e->nxattrs = 0;
}

static int xattr_cmp(const void *a, const void *b)
{
	const struct src_xattr *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/* Through /proc/self/fd so that the lookup starts at the directory we
 * hold open and the last component is not followed. */
static errcode_t read_xattrs(int dirfd, const char *name, struct src_entry *e)
{
	char proc[64 + 256 + 8], *list = NULL, *p;
	ssize_t len, vlen;
	errcode_t err = 0;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d/%s", dirfd, name);
	len = llistxattr(proc, NULL, 0);
	if (len < 0)
		return (errno == ENOTSUP || errno == ENODATA) ? 0 : (errcode_t)errno;
	if (len == 0)
		return 0;
	list = malloc((size_t)len);
	if (!list)
		return ENOMEM;
	len = llistxattr(proc, list, (size_t)len);
	if (len < 0) {
		err = (errcode_t)errno;
		goto out;
	}
	for (p = list; p < list + len; p += strlen(p) + 1) {
		struct src_xattr *nx, *x;

		nx = realloc(e->xattrs, (e->nxattrs + 1) * sizeof(*nx));
		if (!nx) {
			err = ENOMEM;
			goto out;
		}
		e->xattrs = nx;
		x = &e->xattrs[e->nxattrs];
		memset(x, 0, sizeof(*x));
		x->name = strdup(p);
		if (!x->name) {
			err = ENOMEM;
			goto out;
		}
		e->nxattrs++;
		vlen = lgetxattr(proc, p, NULL, 0);
		if (vlen < 0) {
			err = (errcode_t)errno;
			goto out;
		}
		x->value = malloc(vlen ? (size_t)vlen : 1);
		if (!x->value) {
			err = ENOMEM;
			goto out;
		}
		vlen = lgetxattr(proc, p, x->value, (size_t)vlen);
		if (vlen < 0) {
			err = (errcode_t)errno;
			goto out;
		}
		x->size = (size_t)vlen;
	}
	qsort(e->xattrs, e->nxattrs, sizeof(*e->xattrs), xattr_cmp);
out:
	free(list);
	return err;
}

errcode_t walk_read_names(int fd, struct walk_name **out, size_t *count)
{
	struct walk_name *names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
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
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (grow_array(&names, &cap, n + 1, sizeof(*names), 64))
			goto nomem;
		names[n].len = strlen(de->d_name);
		names[n].s = strdup(de->d_name);
		if (!names[n].s)
			goto nomem;
		n++;
	}
	if (errno) {
		errcode_t err = (errcode_t)errno;

		closedir(d);
		walk_free_names(names, n);
		return err;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	*out = names;
	*count = n;
	return 0;
nomem:
	closedir(d);
	walk_free_names(names, n);
	return ENOMEM;
}

static errcode_t walk_dir(struct walker *w, int dirfd);

static errcode_t visit(struct walker *w, int dirfd, const char *name,
		       size_t name_len)
{
	struct src_entry e;
	struct host_file h = { .dirfd = dirfd, .fd = -1 };
	char *target = NULL;
	errcode_t err = 0;
	size_t mark = w->path.len;

	memset(&e, 0, sizeof(e));
	if (w->path.len && (err = sb_append(&w->path, "/", 1)))
		return err;
	if ((err = sb_append(&w->path, name, name_len)))
		return err;
	e.path = w->path.s;
	e.name = name;
	e.name_len = name_len;
	e.priv = &h;

	if (fstatat(dirfd, name, &e.st, AT_SYMLINK_NOFOLLOW)) {
		err = fail(w, (errcode_t)errno, "reading attributes of");
		goto out;
	}
	if (S_ISLNK(e.st.st_mode)) {
		size_t cap = (size_t)e.st.st_size + 1;
		ssize_t n;

		target = malloc(cap + 1);
		if (!target) {
			err = ENOMEM;
			goto out;
		}
		n = readlinkat(dirfd, name, target, cap);
		if (n < 0) {
			err = fail(w, (errcode_t)errno, "reading symlink");
			goto out;
		}
		if ((size_t)n >= cap) {
			err = fail(w, ORLOV_ERR_SOURCE_CHANGED, "reading symlink");
			goto out;
		}
		target[n] = '\0';
		e.link_target = target;
		e.link_len = (size_t)n;
	}
	if (w->opts->want_xattrs) {
		err = read_xattrs(dirfd, name, &e);
		if (err) {
			err = fail(w, err, "reading extended attributes of");
			goto out;
		}
	}
	if (S_ISREG(e.st.st_mode) && w->opts->want_data)
		e.data = &host_data_ops;

	if (S_ISDIR(e.st.st_mode)) {
		int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY |
				O_NOFOLLOW | O_CLOEXEC);
		int flags = 0;

		if (fd < 0) {
			err = fail(w, (errcode_t)errno, "opening directory");
			goto out;
		}
		if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0)
			e.fsflags = (uint32_t)flags;
		err = w->v->enter_dir(w->v->ctx, &e);
		if (!err)
			err = walk_dir(w, fd);
		if (!err) {
			/* walk_dir changed the path buffer: point again. */
			e.path = w->path.s;
			err = w->v->leave_dir(w->v->ctx, &e);
		}
		close(fd);
	} else {
		err = w->v->leaf(w->v->ctx, &e);
	}
out:
	if (h.fd >= 0)
		close(h.fd);
	free(target);
	free_xattrs(&e);
	sb_truncate(&w->path, mark);
	return err;
}

static errcode_t walk_dir(struct walker *w, int dirfd)
{
	struct walk_name *names = NULL;
	size_t n = 0, i;
	errcode_t err;

	err = walk_read_names(dirfd, &names, &n);
	if (err)
		return fail(w, err, "reading directory");
	for (i = 0; i < n && !err; i++)
		err = visit(w, dirfd, names[i].s, names[i].len);
	walk_free_names(names, n);
	return err;
}

errcode_t walk_tree(const char *root, const struct walk_opts *opts,
		    const struct walk_visitor *v)
{
	struct walker w = { .opts = opts, .v = v };
	struct src_entry e;
	errcode_t err;
	int fd, flags = 0;

	memset(&e, 0, sizeof(e));
	if ((err = sb_append(&w.path, "", 0)))
		return err;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = (errcode_t)errno;
		if (v->error)
			v->error(v->ctx, err, "opening source directory", "");
		sb_free(&w.path);
		return err;
	}
	if (fstat(fd, &e.st)) {
		err = (errcode_t)errno;
		if (v->error)
			v->error(v->ctx, err, "reading attributes of", "");
		goto out;
	}
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0)
		e.fsflags = (uint32_t)flags;
	e.path = "";
	e.name = "";
	err = v->enter_dir(v->ctx, &e);
	if (!err)
		err = walk_dir(&w, fd);
	if (!err)
		err = v->leave_dir(v->ctx, &e);
out:
	close(fd);
	sb_free(&w.path);
	return err;
}
