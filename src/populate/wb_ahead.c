// SPDX-License-Identifier: GPL-2.0-or-later
/* The writeback's reader ahead (wb_ahead.h). */
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

#define SLOTS 64		/* files read and not yet taken */
/* Each side, once it has to wait, is woken a batch later, not once a
 * file: a wake-up per file (a futex call and two context switches on
 * each side) cost more than the writeback's own work on small files. */
#define BATCH 16
#define SMALL (64u << 10)	/* files read ahead: at most this size */
#define WINDOW (64u << 10)	/* the reader's reads of the records */

/* A ring slot and its buffers, kept from file to file: no allocation
 * per file on one thread freed on the other (malloc's arena lock was a
 * tenth of the hand-over). */
struct slot {
	unsigned char *note;
	size_t nlen, note_cap;
	unsigned char *data;
	size_t data_cap;
	int read;		/* data holds the file: else not read */
	uint64_t size;
};

/*
 * The ring: the writeback holds the slot before head (cur) while it
 * copies from it, the n after it are the reader's, read and not taken,
 * and the reader fills the one after those, unlocked: its index,
 * head + n, does not move when the writeback takes one.
 */
struct wb_ahead {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t more, room;
	struct slot ring[SLOTS];
	size_t head, n;		/* the oldest, and how many */
	size_t cur;		/* the slot the writeback holds */
	int have_cur, done, stop;
	int want_more, want_room;	/* a side waits on more, on room */
	const struct source *src;
	int rec_fd;
	uint64_t rec_len;
	const unsigned char *mem;
	size_t mem_len;
};

static void slot_free(struct slot *s)
{
	free(s->note);
	free(s->data);
	memset(s, 0, sizeof(*s));
}

/* The slot the next file goes into, once there is room: NULL to stop. */
static struct slot *room_for_next(struct wb_ahead *a)
{
	struct slot *s = NULL;

	pthread_mutex_lock(&a->mu);
	while (a->n + (size_t)a->have_cur == SLOTS && !a->stop) {
		a->want_room = 1;
		pthread_cond_wait(&a->room, &a->mu);
		a->want_room = 0;
	}
	if (!a->stop)
		s = &a->ring[(a->head + a->n) % SLOTS];
	pthread_mutex_unlock(&a->mu);
	return s;
}

/* The slot room_for_next gave, filled, handed to the writeback. */
static void put(struct wb_ahead *a)
{
	pthread_mutex_lock(&a->mu);
	a->n++;
	if (a->want_more && a->n >= BATCH)
		pthread_cond_signal(&a->more);
	pthread_mutex_unlock(&a->mu);
}

/* One record's file: read whole when small.  1: stop. */
static int fetch(struct wb_ahead *a, struct src_reread *rr,
		 const unsigned char *note, size_t nlen, uint64_t size)
{
	struct slot *s = room_for_next(a);

	if (!s || grow_array(&s->note, &s->note_cap, nlen ? nlen : 1, 1, 64))
		return 1;
	memcpy(s->note, note, nlen);
	s->nlen = nlen;
	s->size = size;
	s->read = size && size <= SMALL &&
		  !grow_array(&s->data, &s->data_cap, (size_t)size, 1, 4096) &&
		  !src_reread(rr, note, nlen, s->data, (size_t)size, 0);
	put(a);
	return 0;
}

/* The records in @p (@len bytes): *used, those whole. 1: stop. */
static int fetch_records(struct wb_ahead *a, struct src_reread *rr,
			 const unsigned char *p, size_t len, size_t *used)
{
	const unsigned char *note;
	size_t k, nlen;
	uint64_t size;

	*used = 0;
	while (*used < len) {
		if (delalloc_record_note(p + *used, len - *used, &k, &note,
					 &nlen, &size) || !k)
			return 0;
		*used += k;
		if (fetch(a, rr, note, nlen, size))
			return 1;
	}
	return 0;
}

static int fetch_spilled(struct wb_ahead *a, struct src_reread *rr)
{
	unsigned char *win = NULL;
	size_t cap = 0, have = 0, used, want;
	uint64_t off = 0;
	int stop = 0;

	while (!stop && off < a->rec_len) {
		if (have == cap && grow_array(&win, &cap, have + 1, 1, WINDOW))
			break;
		want = cap - have;
		if (want > a->rec_len - off)
			want = (size_t)(a->rec_len - off);
		if (spill_read(a->rec_fd, win + have, want, off))
			break;
		off += want;
		have += want;
		stop = fetch_records(a, rr, win, have, &used);
		memmove(win, win + used, have - used);
		have -= used;
	}
	free(win);
	return stop;
}

static void *run(void *arg)
{
	struct wb_ahead *a = arg;
	struct src_reread rr;
	size_t used;

	src_reread_init(&rr, a->src);
	if (!fetch_spilled(a, &rr))
		fetch_records(a, &rr, a->mem, a->mem_len, &used);
	src_reread_end(&rr);
	pthread_mutex_lock(&a->mu);
	a->done = 1;
	pthread_cond_signal(&a->more);
	pthread_mutex_unlock(&a->mu);
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
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->more, NULL);
	pthread_cond_init(&a->room, NULL);
	e = pthread_create(&a->th, NULL, run, a);
	if (e) {
		pthread_cond_destroy(&a->more);
		pthread_cond_destroy(&a->room);
		pthread_mutex_destroy(&a->mu);
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

int wb_ahead_read(struct wb_ahead *a, const void *note, size_t nlen,
		  void *buf, size_t len, uint64_t off)
{
	const struct slot *s;
	size_t have = 0;

	pthread_mutex_lock(&a->mu);
	while (!a->have_cur || !same_note(&a->ring[a->cur], note, nlen)) {
		if (!a->n) {
			a->want_more = 1;
			while (a->n < BATCH && !a->done)
				pthread_cond_wait(&a->more, &a->mu);
			a->want_more = 0;
		}
		/* not the next file (the one being written, after them all) */
		if (!a->n || !same_note(&a->ring[a->head], note, nlen)) {
			pthread_mutex_unlock(&a->mu);
			return 0;
		}
		/* the slot held until now goes back to the reader */
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
	pthread_cond_destroy(&a->more);
	pthread_cond_destroy(&a->room);
	pthread_mutex_destroy(&a->mu);
	free(a);
}
