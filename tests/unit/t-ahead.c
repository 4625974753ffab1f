// SPDX-License-Identifier: GPL-2.0-or-later
/* source/ahead: with the reader slower than the walk (its reads sleep),
 * the walk, rather than wait for a name, reads the next ones itself; every
 * name is read once, by one of the two, the walk takes each in its order
 * with what was read for it. */
#include "config.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "source/ahead.h"
#include "tap.h"

#define N 300
#define DIR_AT 250	/* a directory: never the reader's */

struct rec {
	pthread_t walk;
	int reads[N];		/* times name i was read */
	int by_reader;		/* names the reader read */
	int stolen;		/* names the walk read inside ahead_take */
	int own;		/* names the walk read after ahead_take said 0 */
	int in_take;		/* the walk is in ahead_take */
};

static void nap(long usec)
{
	struct timespec t = { usec / 1000000, (usec % 1000000) * 1000 };

	nanosleep(&t, NULL);
}

static void fetch(void *arg, int dirfd, const char *name,
		  struct ahead_slot *s)
{
	struct rec *r = arg;
	int i = atoi(name + 1), k;

	(void)dirfd;
	__atomic_add_fetch(&r->reads[i], 1, __ATOMIC_SEQ_CST);
	if (!pthread_equal(pthread_self(), r->walk)) {
		__atomic_add_fetch(&r->by_reader, 1, __ATOMIC_SEQ_CST);
		nap(1000);	/* the reader is the slow one */
	} else {
		if (r->in_take)
			r->stolen++;
		else
			r->own++;
		/* not ahead of the reader before it has read once (it may
		 * start late on a loaded machine): up to 10 s */
		for (k = 0; k < 10000 &&
			    !__atomic_load_n(&r->by_reader, __ATOMIC_SEQ_CST); k++)
			nap(1000);
	}
	s->read = 1;
	s->fd = -1;
	s->hole0 = i + 1;	/* whose slot this is */
}

int main(void)
{
	struct walk_names names = { 0 };
	char buf[16];
	struct rec r;
	struct ahead *a;
	struct ahead_dir *d;
	int i, once = 1, right = 1;

	memset(&r, 0, sizeof(r));
	r.walk = pthread_self();
	for (i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "f%03d", i);
		if (walk_names_add(&names, buf, strlen(buf),
				   i == DIR_AT ? DT_DIR : i % 7 == 3 ? DT_LNK : DT_REG))
			return 99;
	}
	if (ahead_start(&a, fetch, &r) || ahead_dir_new(&d, -1, &names))
		return 99;
	ahead_enter(a, d, -1);
	for (i = 0; i < N; i++) {
		struct ahead_slot s;
		int got;

		r.in_take = 1;
		got = ahead_take(a, d, i, &s);
		r.in_take = 0;
		if (walk_name_type(&names, i) != DT_REG) {
			/* symlinks: claimed but left to the walk; the
			 * directory: never the reader's */
			if (got)
				right = 0;
			continue;
		}
		if (!got) {
			/* not reached by either: the walk's own, as before */
			fetch(&r, -1, walk_name(&names, i), &s);
		} else if (s.hole0 != i + 1) {
			right = 0;
		}
		if (i < DIR_AT)
			nap(10);	/* the walk's own work on the entry */
	}
	for (i = 0; i < N; i++) {
		int want = walk_name_type(&names, i) == DT_REG;

		if (r.reads[i] != want)
			once = 0;
	}
	ahead_enter(a, NULL, -1);
	ahead_dir_free(d);
	ahead_stop(a);
	walk_names_free(&names);
	tap_ok(once, "every regular file read once, nothing else read");
	tap_ok(right, "the walk takes each name with what was read for it");
	tap_ok(r.by_reader > 0, "the reader read names (%d)", r.by_reader);
	tap_ok(r.stolen > 0,
	       "the walk read names ahead of itself while the reader was behind (%d; its own after: %d)",
	       r.stolen, r.own);
	return tap_done();
}
