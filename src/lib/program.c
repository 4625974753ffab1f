// SPDX-License-Identifier: GPL-2.0-or-later
/* Another program run and waited for (program.h): mke2fs, e2fsck. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/program.h"

/* What the child writes into @fd till it closes it, the first 4 KiB kept
 * in @msgs; the rest is read too, so that the child never blocks. */
static void read_msgs(int fd, struct strbuf *msgs)
{
	char buf[1024];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (msgs->len < 4096)
			sb_append(msgs, buf, (size_t)n);
	}
	close(fd);
}

errcode_t run_program(const char *const *progs, size_t nprogs,
		      char *const argv[], char *const envp[], int quiet,
		      struct strbuf *msgs, int *status)
{
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int rc = ENOENT, st, fds[2] = { -1, -1 }, fa_ok;
	size_t i;

	/* close-on-exec: no other child of a threaded caller inherits it */
	if (msgs && pipe2(fds, O_CLOEXEC))
		return (errcode_t)errno;
	fa_ok = !posix_spawn_file_actions_init(&fa);
	if (!fa_ok ||
	    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) ||
	    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) ||
	    (msgs && posix_spawn_file_actions_adddup2(&fa, fds[1], 2)) ||
	    (!msgs && quiet &&
	     posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0)))
		rc = ENOMEM;
#ifdef HAVE_SPAWN_CLOSEFROM
	/* Only 0, 1 and 2 reach the program: the other runs of a threaded
	 * caller hold images open through libext2fs, whose descriptors are
	 * not close-on-exec, and a mke2fs holding one would keep a device's
	 * O_EXCL, or a lock on it, for as long as it runs. */
	if (fa_ok && rc == ENOENT &&
	    posix_spawn_file_actions_addclosefrom_np(&fa, 3))
		rc = ENOMEM;
#endif
	for (i = 0; i < nprogs && rc == ENOENT; i++)
		rc = posix_spawnp(&pid, progs[i], &fa, NULL, argv, envp);
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	if (msgs) {
		close(fds[1]);
		if (rc)
			close(fds[0]);
		else
			read_msgs(fds[0], msgs);
	}
	if (rc)
		return (errcode_t)rc;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return (errcode_t)errno;
	/* killed: as bad as any failure, and above every exit code */
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 256;
	return 0;
}
