// SPDX-License-Identifier: GPL-2.0-or-later
/* For tests/t-trust-commit.sh: hold an image as a running QEMU guest
 * does (block/file-posix.c's locking): shared OFD locks on byte 100 + N
 * for each permission N it uses (consistent read 0, write 1, resize 3)
 * and on byte 200 + N for each one it denies others (write 1, resize 3).
 * ofdlock IMAGE READY: READY is created once the locks are held; then
 * it waits until killed. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int lock_byte(int fd, off_t at)
{
	struct flock l;

	memset(&l, 0, sizeof(l));
	l.l_type = F_RDLCK;
	l.l_whence = SEEK_SET;
	l.l_start = at;
	l.l_len = 1;
	return fcntl(fd, F_OFD_SETLK, &l);
}

int main(int argc, char **argv)
{
	static const off_t bytes[] = { 100, 101, 103, 201, 203 };
	size_t i;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: ofdlock IMAGE READY\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++)
		if (lock_byte(fd, bytes[i])) {
			perror("F_OFD_SETLK");
			return 1;
		}
	if (close(open(argv[2], O_WRONLY | O_CREAT, 0644))) {
		perror(argv[2]);
		return 1;
	}
	for (;;)
		pause();
}
