/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a run shares with the rest of its process, read without changing
 * it or behind a lock, so that liborlov can be called from several
 * threads at once (include/orlov/orlov.h).
 */
#ifndef ORLOV_PROCSTATE_H
#define ORLOV_PROCSTATE_H

#include <sys/types.h>
#include <et/com_err.h>

/* The process's umask, left as it is. */
mode_t proc_umask(void);
/* ext2fs_check_if_mounted(), one call at a time. */
errcode_t proc_check_if_mounted(const char *path, int *mount_flags);
/* Close @fd, its flock dropped first (@fd < 0: nothing). */
void proc_close_flocked(int fd);

#endif
