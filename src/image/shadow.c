// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The copy of the image that a run (or only its commit) writes and that
 * then takes the image's name: made next to it as a reflink or a copy of
 * its data extents, with its owner, mode and attributes; renamed over
 * the image and the directory synced; and the copies killed runs left.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <unistd.h>

#include "image/image_int.h"
#include "lib/util.h"
#include "lib/procstate.h"
#include "lib/orlov_err.h"

/* Bytes [off, end) of @from into @to at the same offsets. */
static errcode_t copy_range(int from, int to, off_t off, off_t end, char *buf,
			    size_t cap)
{
	while (off < end) {
		size_t want = (size_t)(end - off) < cap ? (size_t)(end - off) : cap;
		ssize_t n = pread(from, buf, want, off);
		errcode_t err;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? (errcode_t)errno : ORLOV_ERR_SHORT_IMAGE;
		err = pwrite_all(to, buf, (size_t)n, off);
		if (err)
			return err;
		off += n;
	}
	return 0;
}

/* Is @name in the list @names of @len bytes (flistxattr's)? */
static int xattr_listed(const char *names, ssize_t len, const char *name)
{
	const char *p;

	for (p = names; p < names + len; p += strlen(p) + 1)
		if (!strcmp(p, name))
			return 1;
	return 0;
}

/* The attribute names of @fd, none where the filesystem has no xattrs. */
static errcode_t xattr_names(int fd, char **names, ssize_t *len)
{
	*names = NULL;
	*len = flistxattr(fd, NULL, 0);
	while (*len > 0) {
		ssize_t n;

		*names = malloc((size_t)*len);
		if (!*names)
			return ENOMEM;
		n = flistxattr(fd, *names, (size_t)*len);
		if (n >= 0) {
			*len = n;
			return 0;
		}
		free(*names);
		*names = NULL;
		if (errno != ERANGE)
			return (errcode_t)errno;
		*len = flistxattr(fd, NULL, 0);	/* grew meanwhile */
	}
	if (*len < 0 && errno != ENOTSUP)
		return (errcode_t)errno;
	/* an empty list, not NULL: the callers walk names .. names + len */
	*len = 0;
	*names = malloc(1);
	return *names ? 0 : ENOMEM;
}

/*
 * The new file @to gets exactly the attributes of @from, its POSIX ACL
 * among them: one inherited from the directory's default ACL but not on
 * @from is removed, as it could give access that @from does not.
 */
static errcode_t copy_xattrs(int from, int to)
{
	char *have = NULL, *want = NULL, *p, *val = NULL;
	ssize_t hl, wl, vl;
	errcode_t err;

	err = xattr_names(from, &want, &wl);
	if (!err)
		err = xattr_names(to, &have, &hl);
	for (p = have; !err && p < have + hl; p += strlen(p) + 1)
		if (!xattr_listed(want, wl, p) && fremovexattr(to, p) &&
		    errno != ENODATA)
			err = (errcode_t)errno;
	for (p = want; !err && p < want + wl; p += strlen(p) + 1) {
		vl = fgetxattr(from, p, NULL, 0);
		if (vl < 0) {
			err = (errcode_t)errno;
			break;
		}
		free(val);
		val = malloc(vl ? (size_t)vl : 1);
		if (!val) {
			err = ENOMEM;
			break;
		}
		vl = fgetxattr(from, p, val, (size_t)vl);
		if (vl < 0 || fsetxattr(to, p, val, (size_t)vl, 0))
			err = (errcode_t)errno;
	}
	free(val);
	free(have);
	free(want);
	return err;
}

/* Of an image NAME, the part a copy's name keeps: 255 bytes (NAME_MAX)
 * hold the dot, it and ".orlov-" with 16 hex digits.  A longer NAME is
 * cut: else no copy could be made and the run would go in place for a
 * mere name. */
#define NAME_KEPT 231
#define INO_DIGITS 16

/* rename(2) that fails with EEXIST rather than replace @to. */
static int rename_new(const char *from, const char *to)
{
#ifdef RENAME_NOREPLACE
	if (!renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
#endif
	/* a filesystem without the flag: link(2) never replaces */
	if (link(from, to))
		return -1;
	return unlink(from);
}

/*
 * The new copy @tmp (.NAME.orlov-XXXXXX, open as @fd) renamed to
 * .NAME.orlov-INODE, its own inode number in 16 hex digits: the proof
 * that a file of that name is a copy a run made, which a user's file
 * never has by chance (image_remove_stale removes no other file).
 * Killed before the rename, the empty file made by mkostemp stays.
 */
static errcode_t name_by_inode(char *tmp, int fd)
{
	size_t len = strlen(tmp) - 6;	/* up to the XXXXXX */
	char *named = malloc(len + INO_DIGITS + 1);
	struct stat st;
	errcode_t err = 0;

	if (!named)
		return ENOMEM;
	if (fstat(fd, &st))
		err = (errcode_t)errno;
	if (!err) {
		memcpy(named, tmp, len);
		sprintf(named + len, "%0*llx", INO_DIGITS,
			(unsigned long long)st.st_ino);
		if (rename_new(tmp, named))
			err = (errcode_t)errno;
	}
	if (!err)
		strcpy(tmp, named);	/* no longer: the same length */
	free(named);
	return err;
}

/*
 * A new file next to @path, named .NAME.orlov-INODE, with the mode and,
 * where it can be given, the owner of @st (an existing image) and the
 * attributes of @from, else the mode a new file gets.  *step says which
 * step failed.  Its flock tells image_remove_stale of a later run that
 * it is in use.
 */
errcode_t image_temp_create(const char *path, const struct stat *st,
			    int keep_owner, int from, char **tmp, int *fd,
			    enum temp_step *step)
{
	return image_temp_create_tag(path, "", st, keep_owner, from, tmp, fd,
				     step);
}

/* image_temp_create's file, named .NAME.orlov-TAGINODE: a @tag keeps it
 * apart from the copies image_remove_stale removes (its INODE does not
 * follow ".orlov-"), with the same proof that a run made it. */
errcode_t image_temp_create_tag(const char *path, const char *tag,
				const struct stat *st, int keep_owner, int from,
				char **tmp, int *fd, enum temp_step *step)
{
	const char *base = strrchr(path, '/');
	size_t dl = base ? (size_t)(base - path + 1) : 0;
	mode_t mask;
	errcode_t err = 0;

	base = base ? base + 1 : path;
	*fd = -1;
	*tmp = malloc(strlen(path) + 8 + strlen(tag) + INO_DIGITS + 1);
	if (!*tmp)
		return ENOMEM;
	sprintf(*tmp, "%.*s.%.*s.orlov-%sXXXXXX", (int)dl, path,
		(int)(NAME_KEPT - strlen(tag)), base, tag);
	*step = TEMP_CREATE;
	*fd = mkostemp(*tmp, O_CLOEXEC);
	if (*fd < 0) {
		err = (errcode_t)errno;
		free(*tmp);
		*tmp = NULL;
		return err;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB))
		err = (errcode_t)errno;
	if (!err)
		err = name_by_inode(*tmp, *fd);
	/* read, not set: umask(0) would be every thread's for a moment */
	mask = proc_umask();
	*step = TEMP_OWNER;
	if (!err && st && fchown(*fd, st->st_uid, st->st_gid) &&
	    (errno != EPERM || keep_owner))
		err = (errcode_t)errno;
	/* The ACL before the mode: the mode's group bits are the ACL's
	 * mask, and as the bits of a file without one they would widen
	 * the group's access to the mask's. */
	if (!err && from >= 0) {
		*step = TEMP_XATTR;
		err = copy_xattrs(from, *fd);
	}
	if (!err) {
		*step = TEMP_MODE;
		if (fchmod(*fd, st ? st->st_mode & 07777 : 0666 & ~mask))
			err = (errcode_t)errno;
	}
	if (err) {
		close(*fd);
		*fd = -1;
		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
	}
	return err;
}

/* @tmp, written, takes the name @path. */
errcode_t image_temp_commit(const char *tmp, const char *path, int locked)
{
	char *dir = strdup(path), *slash;
	int fd, r;

	if (!dir)
		return ENOMEM;
	/* Another writer that replaced IMAGE took no lock of ours (ours
	 * refuses a second orlov-populate): its file is not overwritten. */
	if (locked >= 0 && image_names_locked(path, locked)) {
		free(dir);
		return ORLOV_ERR_IMAGE_REPLACED;
	}
	r = locked >= 0 ? rename(tmp, path) : rename_new(tmp, path);
	if (r) {
		free(dir);
		return (errcode_t)errno;
	}
	/* the rename itself on disk, as far as the directory can say */
	slash = strrchr(dir, '/');
	if (slash)
		slash[1] = '\0';
	fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
	return 0;
}

errcode_t image_resolve(const char *path, char **out)
{
	char *p = strdup(path), *t = NULL;
	int hops;

	for (hops = 0; p && hops < 40; hops++) {
		struct stat st;
		const char *slash;
		ssize_t n;
		size_t dl;

		if (lstat(p, &st) || !S_ISLNK(st.st_mode)) {
			*out = p;	/* missing: --create makes it there */
			return 0;
		}
		t = malloc((size_t)st.st_size + 2);
		if (!t)
			break;
		n = readlink(p, t, (size_t)st.st_size + 1);
		if (n < 0 || n > st.st_size) {
			errcode_t err = n < 0 ? (errcode_t)errno : ORLOV_ERR_SOURCE_CHANGED;

			free(t);
			free(p);
			return err;
		}
		t[n] = '\0';
		/* a relative target is relative to the link's directory */
		slash = strrchr(p, '/');
		dl = t[0] != '/' && slash ? (size_t)(slash - p + 1) : 0;
		if (dl) {
			char *j = malloc(dl + (size_t)n + 1);

			if (j) {
				memcpy(j, p, dl);
				memcpy(j + dl, t, (size_t)n + 1);
			}
			free(t);
			t = j;
			if (!t)
				break;
		}
		free(p);
		p = t;
		t = NULL;
	}
	if (!p)
		return ENOMEM;
	free(p);
	return t ? ENOMEM : ELOOP;
}

/* Is @n the name .NAME.orlov-INODE a copy of the image named @base (@bl
 * bytes of it kept) gets?  Its INODE in *ino. */
static int copy_name(const char *n, const char *base, size_t bl,
		     unsigned long long *ino)
{
	const char *hex = n + 1 + bl + 7;
	char *end;

	if (strlen(n) != bl + 8 + INO_DIGITS || n[0] != '.' ||
	    strncmp(n + 1, base, bl) || strncmp(n + 1 + bl, ".orlov-", 7) ||
	    strspn(hex, "0123456789abcdef") != INO_DIGITS)
		return 0;
	*ino = strtoull(hex, &end, 16);
	return *end == '\0';
}

void image_remove_stale(const char *path, unsigned int *removed)
{
	const char *base = strrchr(path, '/');
	char *dir = base ? strndup(path, (size_t)(base - path + 1)) : strdup(".");
	struct dirent *de;
	size_t bl;
	DIR *d;

	*removed = 0;
	base = base ? base + 1 : path;
	bl = strlen(base) < NAME_KEPT ? strlen(base) : NAME_KEPT;
	d = dir ? opendir(dir) : NULL;
	while (d && (de = readdir(d)) != NULL) {
		const char *n = de->d_name;
		unsigned long long ino;
		struct stat a, b;
		int fd;

		if (!copy_name(n, base, bl, &ino))
			continue;
		fd = openat(dirfd(d), n, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			    O_CLOEXEC);
		if (fd < 0)
			continue;
		/* Named for another inode (not made by image_temp_create),
		 * in use (flocked by its writer), empty, or linked
		 * elsewhere: not a copy a killed run left. */
		if (!fstat(fd, &a) && S_ISREG(a.st_mode) && a.st_ino == ino &&
		    a.st_nlink == 1 && a.st_size > 0 &&
		    !flock(fd, LOCK_EX | LOCK_NB) &&
		    !fstatat(dirfd(d), n, &b, AT_SYMLINK_NOFOLLOW) &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
		    !unlinkat(dirfd(d), n, 0))
			(*removed)++;
		close(fd);
	}
	if (d)
		closedir(d);
	free(dir);
}

/*
 * A copy of the image, made next to it, which the run (or only the
 * commit) writes and the commit renames over the image: a reflink where
 * the filesystem shares blocks (FICLONE), else a copy of its data extents
 * (holes stay holes).  Killed at any point before the rename, the image
 * is the filesystem that was opened.  The copy's descriptor stays open in
 * *fd for the caller.
 */
errcode_t make_shadow(struct image *img, int keep_owner, int *fd,
			     enum temp_step *step)
{
	size_t cap = 1 << 20;
	struct stat st;
	errcode_t err = 0;
	char *buf = NULL;
	off_t off = 0;

	if (fstat(img->lock_fd, &st))
		return (errcode_t)errno;
	if (!S_ISREG(st.st_mode))
		return ORLOV_ERR_ATOMIC_NOT_FILE;
	err = image_temp_create(img->path, &st, keep_owner, img->lock_fd,
				&img->shadow, fd, step);
	if (err)
		return err;
	*step = TEMP_COPY;
	if (ioctl(*fd, FICLONE, img->lock_fd) != 0) {
		buf = malloc(cap);
		if (!buf)
			err = ENOMEM;
		while (!err && off < st.st_size) {
			off_t data = lseek(img->lock_fd, off, SEEK_DATA), hole;

			if (data < 0 && errno == ENXIO)
				break;		/* a hole to the end */
			if (data < 0)
				data = off;	/* no SEEK_DATA: copy it all */
			hole = lseek(img->lock_fd, data, SEEK_HOLE);
			if (hole < 0 || hole > st.st_size)
				hole = st.st_size;
			err = copy_range(img->lock_fd, *fd, data, hole, buf, cap);
			off = hole;
		}
		free(buf);
		if (!err && ftruncate(*fd, st.st_size))
			err = (errcode_t)errno;
	}
	if (!err && fsync(*fd))
		err = (errcode_t)errno;
	return err;
}

/* The copy at open, for the run to write; its descriptor keeps the
 * flock until the copy is renamed or removed. */
errcode_t open_shadow(struct image *img, int keep_owner,
			     enum temp_step *step)
{
	return make_shadow(img, keep_owner, &img->shadow_fd, step);
}

/* Forget a copy that failed: the run writes the image itself. */
void drop_shadow(struct image *img)
{
	if (img->shadow)
		unlink(img->shadow);
	free(img->shadow);
	img->shadow = NULL;
	proc_close_flocked(img->shadow_fd);
	img->shadow_fd = -1;
}
