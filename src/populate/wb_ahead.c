// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The writeback's reader ahead (wb_ahead.h).  One lock guards every field
 * shared between the reader thread and the writeback.  The records are
 * claimed in order, one slot each, by the reader or by the writeback
 * while it would otherwise wait for it (on two CPUs the reader, doing the
 * four system calls of each small file, is the slower of the two); a
 * slot is its claimer's until it is marked done, and is read unlocked.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "populate/wb_ahead.h"
#include "model/write.h"
#include "source/reread.h"
#include "lib/spill.h"
#include "lib/util.h"

#define SLOTS 64		/* files claimed and not yet taken */
/* The writeback, once it has to wait, is woken a batch later, not once
 * a file: a wake-up per file (a futex call and two context switches on
 * each side) cost more than the writeback's own work on small files. */
#define BATCH 16
#define SMALL (64u << 10)	/* files read ahead: at most this size */
#define WINDOW (64u << 10)	/* reads of the spilled records */

enum { SLOT_BUSY = 1, SLOT_DONE };

/* A ring slot and its buffers, kept from file to file: no allocation
 * per file on one thread freed on the other. */
struct slot {
	unsigned char *note;
	size_t nlen, note_cap;
	unsigned char *data;
	size_t data_cap;
	int read;		/* data holds the file: else not read */
	int state;
	uint64_t size;
};

/*
 * The ring: the writeback holds the slot before head (cur) while it
 * copies from it; the n after it are claimed (being read, or read and
 * not taken).
 */
struct wb_ahead {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t more, room;
	struct slot ring[SLOTS];
	size_t head, n;
	size_t cur;		/* the slot the writeback holds */
	int have_cur, stop;
	int want_more, want_room;	/* a side waits on more, on room */
	int exhausted;		/* every record claimed */
	/* the records, read in order: the spilled ones through a window,
	 * then those in memory */
	const struct source *src;
	int rec_fd;
	uint64_t rec_len, rec_off;
	unsigned char *win;
	size_t win_cap, win_have, win_used;
	const unsigned char *mem;
	size_t mem_len, mem_used;
	struct src_reread steal;	/* the writeback's own reads */
};

static void slot_free(struct slot *s)
{
	free(s->note);
	free(s->data);
	memset(s, 0, sizeof(*s));
}

/* The next record from @p (@len bytes): 1 when whole, its length *k. */
static int next_in(const unsigned char *p, size_t used, size_t len,
		   size_t *k, const unsigned char **note, size_t *nlen,
		   uint64_t *size)
{
	return used < len &&
	       !delalloc_record_note(p + used, len - used, k, note, nlen,
				     size) && *k;
}

/* The next record, the lock held: 1 if there is one.  A spilled record
 * cut by the window's end is read whole with the next window. */
static int next_record(struct wb_ahead *a, const unsigned char **note,
		       size_t *nlen, uint64_t *size)
{
	size_t k, want;

	for (;;) {
		if (next_in(a->win, a->win_used, a->win_have, &k, note, nlen,
			    size)) {
			a->win_used += k;
			return 1;
		}
		if (a->rec_off >= a->rec_len)
			break;
		if (a->win_used) {
			memmove(a->win, a->win + a->win_used,
				a->win_have - a->win_used);
			a->win_have -= a->win_used;
			a->win_used = 0;
		}
		if (a->win_have == a->win_cap &&
		    grow_array(&a->win, &a->win_cap, a->win_have + 1, 1, WINDOW))
			return 0;
		want = a->win_cap - a->win_have;
		if (want > a->rec_len - a->rec_off)
			want = (size_t)(a->rec_len - a->rec_off);
		if (spill_read(a->rec_fd, a->win + a->win_have, want, a->rec_off))
			return 0;
		a->rec_off += want;
		a->win_have += want;
	}
	if (!next_in(a->mem, a->mem_used, a->mem_len, &k, note, nlen, size))
		return 0;
	a->mem_used += k;
	return 1;
}

/* Claim the next record's slot, the lock held: NULL when the ring is
 * full, or every record claimed (or one that could not be read: the
 * writeback reads the rest itself). */
static struct slot *claim(struct wb_ahead *a)
{
	const unsigned char *note;
	uint64_t size;
	size_t nlen;
	struct slot *s;

	if (a->stop || a->exhausted || a->n + (size_t)a->have_cur == SLOTS)
		return NULL;
	s = &a->ring[(a->head + a->n) % SLOTS];
	if (!next_record(a, &note, &nlen, &size) ||
	    grow_array(&s->note, &s->note_cap, nlen ? nlen : 1, 1, 64)) {
		a->exhausted = 1;
		return NULL;
	}
	memcpy(s->note, note, nlen);
	s->nlen = nlen;
	s->size = size;
	s->read = 0;
	s->state = SLOT_BUSY;
	a->n++;
	return s;
}

/* Read the claimed @s, the lock dropped meanwhile; then it is done. */
static void fetch(struct wb_ahead *a, struct slot *s, struct src_reread *rr)
{
	int signal;

	pthread_mutex_unlock(&a->mu);
	s->read = s->size && s->size <= SMALL &&
		  !grow_array(&s->data, &s->data_cap, (size_t)s->size, 1, 4096) &&
		  !src_reread(rr, s->note, s->nlen, s->data, (size_t)s->size, 0);
	pthread_mutex_lock(&a->mu);
	s->state = SLOT_DONE;
	/* the writeback, waiting, wakes for its next file when the reader
	 * can do no more, else a batch later */
	signal = s == &a->ring[a->head] || a->exhausted ||
		 a->n + (size_t)a->have_cur == SLOTS ||
		 (size_t)(s - a->ring + SLOTS - a->head) % SLOTS >= BATCH - 1;
	if (a->want_more && signal)
		pthread_cond_signal(&a->more);
}

static void *run(void *arg)
{
	struct wb_ahead *a = arg;
	struct src_reread rr;
	struct slot *s;

	src_reread_init(&rr, a->src);
	pthread_mutex_lock(&a->mu);
	while (!a->stop && !a->exhausted) {
		s = claim(a);
		if (s) {
			fetch(a, s, &rr);
			continue;
		}
		if (a->exhausted || a->stop)
			break;
		a->want_room = 1;
		pthread_cond_wait(&a->room, &a->mu);
		a->want_room = 0;
	}
	pthread_cond_signal(&a->more);
	pthread_mutex_unlock(&a->mu);
	src_reread_end(&rr);
	return NULL;
}

errcode_t wb_ahead_start(struct wb_ahead **out, const struct source *src,
			 int rec_fd, uint64_t rec_len,
			 const unsigned char *mem, size_t mem_len)
{
	struct wb_ahead *a = calloc(1, sizeof(*a));
	int e;

	*out = NULL;
	if (!a)
		return ENOMEM;
	a->src = src;
	a->rec_fd = rec_fd;
	a->rec_len = rec_len;
	a->mem = mem;
	a->mem_len = mem_len;
	src_reread_init(&a->steal, src);
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->more, NULL);
	pthread_cond_init(&a->room, NULL);
	e = pthread_create(&a->th, NULL, run, a);
	if (e) {
		pthread_cond_destroy(&a->more);
		pthread_cond_destroy(&a->room);
		pthread_mutex_destroy(&a->mu);
		src_reread_end(&a->steal);
		free(a);
		return (errcode_t)e;
	}
	*out = a;
	return 0;
}

static int same_note(const struct slot *s, const void *note, size_t nlen)
{
	return s->nlen == nlen && !memcmp(s->note, note, nlen);
}

/* Wait, the lock held, until the slot at head is done (1), or no
 * record is left to come (0). */
static int head_done(struct wb_ahead *a)
{
	struct slot *s;

	while (!a->n || a->ring[a->head].state != SLOT_DONE) {
		/* the reader is behind: read a file further on rather than
		 * wait (on two CPUs, the writeback's idle one) */
		s = claim(a);
		if (s) {
			fetch(a, s, &a->steal);
			continue;
		}
		if (!a->n && (a->exhausted || a->stop))
			return 0;
		a->want_more = 1;
		pthread_cond_wait(&a->more, &a->mu);
		a->want_more = 0;
	}
	return 1;
}

int wb_ahead_read(struct wb_ahead *a, const void *note, size_t nlen,
		  void *buf, size_t len, uint64_t off)
{
	const struct slot *s;
	size_t have = 0;

	pthread_mutex_lock(&a->mu);
	while (!a->have_cur || !same_note(&a->ring[a->cur], note, nlen)) {
		/* not the next file (the one being written, after them all) */
		if (!head_done(a) || !same_note(&a->ring[a->head], note, nlen)) {
			pthread_mutex_unlock(&a->mu);
			return 0;
		}
		/* the slot held until now goes back to the ring */
		a->cur = a->head;
		a->have_cur = 1;
		a->head = (a->head + 1) % SLOTS;
		a->n--;
		if (a->want_room && a->n + 1 <= SLOTS - BATCH)
			pthread_cond_signal(&a->room);
	}
	pthread_mutex_unlock(&a->mu);
	/* the held slot is the writeback's own until it takes the next */
	s = &a->ring[a->cur];
	if (!s->read)
		return 0;
	if (off < s->size)
		have = s->size - off < len ? (size_t)(s->size - off) : len;
	memcpy(buf, s->data + (have ? off : 0), have);
	memset((unsigned char *)buf + have, 0, len - have);
	return 1;
}

void wb_ahead_stop(struct wb_ahead *a)
{
	size_t i;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_signal(&a->room);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	for (i = 0; i < SLOTS; i++)
		slot_free(&a->ring[i]);
	free(a->win);
	src_reread_end(&a->steal);
	pthread_cond_destroy(&a->more);
	pthread_cond_destroy(&a->room);
	pthread_mutex_destroy(&a->mu);
	free(a);
}
