// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One writer at a time: the image's flock, and the check that the name
 * IMAGE still stands for the file that is locked.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/image_int.h"
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
		*fd = fcntl(held, F_DUPFD_CLOEXEC, 0);
		return *fd < 0 ? (errcode_t)errno : 0;
	}
	for (tries = 0; tries < 8; tries++) {
		/* a dry run shares the lock: no writer changes the image
		 * under it */
		*fd = open(path, (dry ? O_RDONLY : O_RDWR) | O_CLOEXEC);
		if (*fd < 0)
			return (errcode_t)errno;
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

void unlock_image(struct image *img)
{
	if (img->lock_fd >= 0)
		close(img->lock_fd);	/* drops the flock */
	img->lock_fd = -1;
	drop_shadow(img);	/* after the rename, only frees */
	free(img->path);
	img->path = NULL;
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
