// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The reader thread of ahead.h.  One lock guards every field shared with
 * it; a slot is its claimer's (the reader's, or the walk's, reading ahead
 * of itself while the reader is behind) from the claim until it is marked
 * done, then the walk's.  The reader stays in the directory the walk is
 * in, at most RING names and HELD open descriptors ahead (files with
 * data: the empty ones it closes itself), and stops at a name readdir
 * calls a directory (or does not know): so when the walk goes down into
 * one, nothing of the parent is held open behind it.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source/ahead.h"
#include "source/hostxattr.h"

#define RING 64
#define HELD 16

enum { SLOT_FREE, SLOT_BUSY, SLOT_DONE };

struct ahead_dir {
	int dirfd;
	struct walk_names names;	/* the walk's, shared (not freed here) */
	size_t claim;		/* the next name the reader may take */
	size_t taken;		/* names the walk has taken */
	size_t held;		/* descriptors in slots not taken */
	struct ahead_slot ring[RING];
	unsigned char state[RING];
};

struct ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work;	/* the reader waits for it */
	pthread_cond_t done;	/* the walk waits for a slot or a pause */
	struct ahead_dir *cur;	/* the directory the walk is in */
	int busy;		/* the reader is reading a name */
	int idle;		/* the reader waits on work */
	int waiting;		/* the walk waits on done */
	size_t want;		/* for the name it waits for and those after */
	int quit;
	ahead_fetch_fn fetch;
	void *arg;
};

/* May the reader take the next name of @d? */
static int claimable(const struct ahead_dir *d)
{
	unsigned char t;

	if (!d || d->claim >= d->names.n || d->claim - d->taken >= RING ||
	    d->held >= HELD)
		return 0;
	t = walk_name_type(&d->names, d->claim);
	return t != DT_DIR && t != DT_UNKNOWN;
}

/*
 * Claim the next name of @d and read it into its slot, the lock dropped
 * meanwhile: the reader's loop, and the walk's while it would otherwise
 * wait for the reader (a slot is whoever claimed it, so two of them never
 * read one name).  @reader: the reader thread, which ahead_enter waits
 * out of the directory.
 */
static void fetch_next(struct ahead *a, struct ahead_dir *d, int reader)
{
	struct ahead_slot *s;
	size_t i = d->claim++;

	s = &d->ring[i % RING];
	d->state[i % RING] = SLOT_BUSY;
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	/* symlinks, devices: nothing to open, the walk reads them */
	if (walk_name_type(&d->names, i) == DT_REG) {
		int dirfd = d->dirfd;

		a->busy += reader;
		pthread_mutex_unlock(&a->lock);
		a->fetch(a->arg, dirfd, walk_name(&d->names, i), s);
		pthread_mutex_lock(&a->lock);
		a->busy -= reader;
	}
	d->state[i % RING] = SLOT_DONE;
	d->held += s->fd >= 0;
	/* the walk, waiting, wakes half a ring later, not once a name */
	if (a->waiting && (i >= a->want || !claimable(d)))
		pthread_cond_broadcast(&a->done);
}

static void *reader(void *p)
{
	struct ahead *a = p;

	pthread_mutex_lock(&a->lock);
	while (!a->quit) {
		if (!claimable(a->cur)) {
			a->idle = 1;
			pthread_cond_wait(&a->work, &a->lock);
			a->idle = 0;
			continue;
		}
		fetch_next(a, a->cur, 1);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

errcode_t ahead_start(struct ahead **out, ahead_fetch_fn fetch, void *arg)
{
	struct ahead *a = calloc(1, sizeof(*a));
	sigset_t all, old;
	int rc;

	if (!a)
		return ENOMEM;
	a->fetch = fetch;
	a->arg = arg;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->done, NULL);
	/* signals stay the main thread's: the reader blocks them all */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&a->thread, NULL, reader, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&a->done);
		pthread_cond_destroy(&a->work);
		pthread_mutex_destroy(&a->lock);
		free(a);
		return (errcode_t)rc;
	}
	*out = a;
	return 0;
}

void ahead_stop(struct ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->quit = 1;
	pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->done);
	pthread_cond_destroy(&a->work);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

errcode_t ahead_dir_new(struct ahead_dir **out, int dirfd,
			const struct walk_names *names)
{
	struct ahead_dir *d = calloc(1, sizeof(*d));

	if (!d)
		return ENOMEM;
	d->dirfd = dirfd;
	d->names = *names;	/* its frame may move; the names do not */
	*out = d;
	return 0;
}

/* Wait until the reader is out of every directory but the current one. */
static void wait_not_busy(struct ahead *a)
{
	a->want = 0;
	while (a->busy) {
		a->waiting = 1;
		pthread_cond_wait(&a->done, &a->lock);
		a->waiting = 0;
	}
}

void ahead_enter(struct ahead *a, struct ahead_dir *d, int dirfd)
{
	pthread_mutex_lock(&a->lock);
	wait_not_busy(a);
	if (d)
		d->dirfd = dirfd;
	a->cur = d;
	if (a->idle && claimable(d))
		pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
}

int ahead_take(struct ahead *a, struct ahead_dir *d, size_t i,
	       struct ahead_slot *s)
{
	int got = 0;

	pthread_mutex_lock(&a->lock);
	if (d->claim <= i) {
		d->claim = i + 1;	/* not reached: the walk's own */
	} else {
		a->want = i + RING / 2;
		while (d->state[i % RING] != SLOT_DONE) {
			/* The reader is behind: read a name further on rather
			 * than wait (with two cores, the walk's idle one). */
			if (claimable(d)) {
				fetch_next(a, d, 0);
				continue;
			}
			a->waiting = 1;
			pthread_cond_wait(&a->done, &a->lock);
			a->waiting = 0;
		}
		*s = d->ring[i % RING];
		d->state[i % RING] = SLOT_FREE;
		got = s->read;
		d->held -= s->fd >= 0;
	}
	d->taken = i + 1;
	/* woken a quarter ring behind, not once a name, and early enough
	 * not to be caught up with while it wakes */
	if (a->idle && a->cur == d && claimable(d) &&
	    (d->claim - d->taken == RING * 3 / 4 || d->held == HELD / 2))
		pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
	return got;
}

void ahead_dir_free(struct ahead_dir *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < RING; i++) {
		if (d->state[i] != SLOT_DONE)
			continue;
		if (d->ring[i].fd >= 0)
			close(d->ring[i].fd);
		host_xattrs_free(d->ring[i].xattrs, d->ring[i].nxattrs);
		free(d->ring[i].data);
	}
	free(d);
}
