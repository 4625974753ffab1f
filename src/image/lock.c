// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One writer at a time: the image's flock, and the check that the name
 * IMAGE still stands for the file that is locked.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"
#include "image/image_read.h"
#include "lib/orlov_err.h"

/*
 * Is @path still the file open as @fd?  0 if so, ORLOV_ERR_IMAGE_REPLACED
 * when the name stands for another file now (a copy renamed over it),
 * errno when either cannot be looked at.
 */
errcode_t image_names_locked(const char *path, int fd)
{
	struct stat a, b;

	if (fstat(fd, &a) || stat(path, &b))
		return (errcode_t)errno;
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return ORLOV_ERR_IMAGE_REPLACED;
	return 0;
}

/* Only a regular file or a block device holds an image: a FIFO's open
 * or read would wait for a writer forever. */
static errcode_t check_kind(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return (errcode_t)errno;
	return S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) ? 0 :
	       ORLOV_ERR_IMAGE_KIND;
}

errcode_t image_check_kind(const char *path)
{
	struct stat st;

	/* A missing IMAGE, a directory (SOURCE first?), a character device
	 * are for the callers' own messages; opening them does not hang. */
	if (stat(path, &st))
		return errno == ENOENT ? 0 : (errcode_t)errno;
	return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ?
	       ORLOV_ERR_IMAGE_KIND : 0;
}

/*
 * Another process's fcntl lock anywhere on the image: a running QEMU
 * holds OFD read locks on bytes 100 and up (the permissions it uses) and
 * 200 and up (those it denies others) of every image it has open, so
 * another QEMU refuses to write it; a write here would change what that
 * guest reads under it just the same.  A write lock asked for on the
 * whole file conflicts with any lock of another open file (POSIX locks
 * included), so one probe finds them all.
 */
static errcode_t check_fcntl_locks(int fd)
{
	struct flock l;

	memset(&l, 0, sizeof(l));
	l.l_type = F_WRLCK;
	l.l_whence = SEEK_SET;
#ifdef F_OFD_GETLK
	if (!fcntl(fd, F_OFD_GETLK, &l))
		return l.l_type == F_UNLCK ? 0 : ORLOV_ERR_IMAGE_LOCKED;
	if (errno != EINVAL)
		return (errcode_t)errno;
	/* a kernel before 3.15: the POSIX probe sees the OFD locks too */
	memset(&l, 0, sizeof(l));
	l.l_type = F_WRLCK;
	l.l_whence = SEEK_SET;
#endif
	if (fcntl(fd, F_GETLK, &l))
		return (errcode_t)errno;
	return l.l_type == F_UNLCK ? 0 : ORLOV_ERR_IMAGE_LOCKED;
}

/*
 * One writer at a time: an exclusive flock on the image, held until the
 * image is committed or abandoned.  A second orlov-populate, or anything
 * else holding the lock (flock(1); other libext2fs tools take none), is
 * refused instead of cross-linking directories.
 */
errcode_t lock_image(const char *path, int dry, int held, int *fd)
{
	errcode_t err;
	int tries, e;

	if (held >= 0) {
		/* the caller's lock (--create holds it from before mke2fs):
		 * a second flock of ours would be refused by it */
		err = image_names_locked(path, held);
		if (err)
			return err;
		err = check_fcntl_locks(held);
		if (err)
			return err;
		*fd = fcntl(held, F_DUPFD_CLOEXEC, 0);
		return *fd < 0 ? (errcode_t)errno : 0;
	}
	for (tries = 0; tries < 8; tries++) {
		/* a dry run shares the lock: no writer changes the image
		 * under it */
		/* O_NONBLOCK: a FIFO (refused below) would block the open */
		*fd = open(path, (dry ? O_RDONLY : O_RDWR) | O_CLOEXEC |
			   O_NONBLOCK);
		if (*fd < 0)
			return (errcode_t)errno;
		err = check_kind(*fd);
		if (!err && !dry)
			err = check_fcntl_locks(*fd);
		if (!err && fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK))
			err = (errcode_t)errno;
		if (err) {
			close(*fd);
			*fd = -1;
			return err;
		}
		if (flock(*fd, (dry ? LOCK_SH : LOCK_EX) | LOCK_NB)) {
			e = errno;
			close(*fd);
			*fd = -1;
			return e == EWOULDBLOCK ? ORLOV_ERR_BUSY : (errcode_t)e;
		}
		/* Locked the file a committed copy has just replaced (opened
		 * before the rename): its writes would go nowhere.  Again,
		 * on the file the name stands for now.  (One that cannot be
		 * looked at is taken as it is.) */
		if (image_names_locked(path, *fd) != ORLOV_ERR_IMAGE_REPLACED)
			return 0;
		close(*fd);
	}
	*fd = -1;
	return ORLOV_ERR_BUSY;
}

errcode_t image_lock(const char *path, int create, int *fd)
{
	errcode_t err = lock_image(path, 0, -1, fd);

	if (err != ENOENT)
		return err;
	*fd = -1;
	if (!create)
		return 0;
	/* as mke2fs would make it; nobody else has it yet */
	*fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (*fd < 0 || flock(*fd, LOCK_EX | LOCK_NB)) {
		err = (errcode_t)errno;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
	return err;
}

size_t image_files(const struct image *img, struct file_id *ids, size_t max)
{
	int fds[2] = { img->lock_fd, img->shadow_fd };
	size_t i, n = 0;
	struct stat st;

	for (i = 0; i < 2 && n < max; i++)
		if (fds[i] >= 0 && !fstat(fds[i], &st)) {
			ids[n].dev = st.st_dev;
			ids[n++].ino = st.st_ino;
		}
	return n;
}
