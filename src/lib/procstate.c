// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>

#include "lib/procstate.h"

/*
 * umask() only sets: the usual read, umask(0) then umask(old), leaves
 * the process's umask 0 in between, and a file another thread creates
 * then (the library's caller's) gets mode 0666 or 0777.  Linux 4.7 and
 * later show it in /proc/self/status ("Umask:\t0022"); only without that
 * line (no /proc in a chroot, an older kernel) the pair is used, under
 * a lock so that two runs at least never take each other's 0 for the
 * umask.  A static mutex, the kind of global the project allows: the
 * umask is the process's.
 */
static pthread_mutex_t umask_lock = PTHREAD_MUTEX_INITIALIZER;

static int umask_from_proc(mode_t *mask)
{
	char buf[4096], *p, *end;
	ssize_t n;
	size_t got = 0;
	unsigned long v;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (got < sizeof(buf) - 1) {
		n = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	p = strstr(buf, "\nUmask:");
	if (!p)
		return -1;
	v = strtoul(p + 7, &end, 8);
	if (end == p + 7 || v > 0777)
		return -1;
	*mask = (mode_t)v;
	return 0;
}

mode_t proc_umask(void)
{
	mode_t mask;

	if (!umask_from_proc(&mask))
		return mask;
	pthread_mutex_lock(&umask_lock);
	mask = umask(0);
	umask(mask);
	pthread_mutex_unlock(&umask_lock);
	return mask;
}

/*
 * libext2fs reads the mount table with getmntent(), whose entry glibc
 * keeps in one static buffer for the whole process: two checks at once
 * read each other's lines (a mounted image taken for unmounted, or a
 * crash).  One check at a time.  A static mutex for that process-wide
 * buffer.  (A caller's own getmntent() in another thread is not covered.)
 */
static pthread_mutex_t mntent_lock = PTHREAD_MUTEX_INITIALIZER;

errcode_t proc_check_if_mounted(const char *path, int *mount_flags)
{
	errcode_t err;

	pthread_mutex_lock(&mntent_lock);
	err = ext2fs_check_if_mounted(path, mount_flags);
	pthread_mutex_unlock(&mntent_lock);
	return err;
}

/*
 * A flock belongs to the open file, not to the descriptor: while another
 * thread spawns a program, its child holds a copy of every descriptor
 * until it closes them (run_program's closefrom, or exec), and a close
 * alone here would leave the image locked for that long; the next run
 * on it, right after, would be refused as another writer's.  LOCK_UN
 * drops the lock for every copy.
 */
void proc_close_flocked(int fd)
{
	if (fd < 0)
		return;
	(void)flock(fd, LOCK_UN);
	close(fd);
}
