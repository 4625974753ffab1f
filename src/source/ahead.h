/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading ahead of the walk on a second thread: the regular files of the
 * directory the walk is in are opened, fstat'ed and their attributes
 * listed a few names ahead, so that the engine finds them read when it
 * comes to them.  The same calls on the same names as the walk would make
 * itself, only earlier: the walk still takes the entries one by one in
 * its order, so nothing it creates or places can change.  Anything the
 * reader did not do (another type, a failure, a name it had not reached)
 * the walk does itself as before.  Where the reader falls behind (small
 * files: its system calls are most of the work), the walk, rather than
 * wait for a name, reads the next unclaimed ones itself, as the reader
 * would: both CPUs read.
 */
#ifndef ORLOV_AHEAD_H
#define ORLOV_AHEAD_H

#include <stddef.h>
#include <sys/stat.h>
#include <et/com_err.h>

#include "source/walk.h"

/* What the reader found for one name. */
struct ahead_slot {
	int read;		/* the reader read it (else the walk does) */
	int fd;			/* open on it, or -1: closed (no data) */
	struct stat st;		/* fstat of fd */
	struct src_xattr *xattrs;
	size_t nxattrs;
	errcode_t xerr;		/* from listing its attributes */
	off_t hole0;		/* lseek(fd, 0, SEEK_HOLE) when > 0, else 0 */
	unsigned char *data;	/* its st_size bytes, read ahead, or NULL */
};

/* Read one name of @dirfd into @s (s->fd -1 when not done): the walk's
 * own opening, called on the reader thread. */
typedef void (*ahead_fetch_fn)(void *arg, int dirfd, const char *name,
			       struct ahead_slot *s);

struct ahead;
struct ahead_dir;

errcode_t ahead_start(struct ahead **out, ahead_fetch_fn fetch, void *arg);
/* Stop and join the thread, free what it holds (leftover slots closed). */
void ahead_stop(struct ahead *a);

/* The names of the directory open as @dirfd (sorted, as walked). */
errcode_t ahead_dir_new(struct ahead_dir **out, int dirfd,
			const struct walk_names *names);
/* The walk is now in @d (NULL: none); @dirfd, its descriptor now (it is
 * reopened on the way up when deep trees closed it). */
void ahead_enter(struct ahead *a, struct ahead_dir *d, int dirfd);
/* The walk takes name @i of @d, the next in order: 1 and *s filled if the
 * reader did it, 0 if the walk must. */
int ahead_take(struct ahead *a, struct ahead_dir *d, size_t i,
	       struct ahead_slot *s);
/* Free @d, no longer the current one (or the thread stopped): slots read
 * but not taken are closed. */
void ahead_dir_free(struct ahead_dir *d);

#endif
