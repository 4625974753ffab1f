/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A clock over a budget of fixed-size slots in memory, with a spill file
 * (spill.h) behind it: what does not fit goes to the file at its key's
 * place, the least recently used first (a second chance for what was used
 * since the clock last passed), and comes back when asked for.  The
 * staged inodes (image/stage.c) and a commit's captured blocks
 * (image/capture.c) keep their memory flat with it; each keeps its own
 * map from keys to slots, which the clock tells which key left.
 */
#ifndef ORLOV_CLOCK_H
#define ORLOV_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <et/com_err.h>

#define CLOCK_NONE UINT64_MAX

struct clock_slot {
	unsigned char *data;
	uint64_t key;		/* what it holds: its place on the file */
	int ref, dirty;		/* used since the clock last passed; changed
				   since read from the spill file */
};

struct slot_clock {
	size_t size;		/* bytes an item takes */
	struct clock_slot *slot;
	size_t nslot, maxslot, hand;
	int fd;			/* the spill file, or -1 before its first use */
};

/* Items of @size bytes, as many in memory as @budget holds (at least 4). */
errcode_t clock_init(struct slot_clock *k, size_t size, size_t budget);
void clock_free(struct slot_clock *k);

/*
 * A slot for item @key (*s): a new one within the budget, else the
 * clock's choice, whose item goes to the spill file first if it changed
 * there.  *old is the key that left (CLOCK_NONE for a new slot) and
 * *written whether it went to the file.  The slot is neither used nor
 * changed yet; its bytes are the old item's.
 */
errcode_t clock_take(struct slot_clock *k, uint64_t key, size_t *s,
		     uint64_t *old, int *written);
/* Slot @s's item read back from the spill file. */
errcode_t clock_read(struct slot_clock *k, size_t s);
/* Items @key to @key + @n - 1, as the spill file has them, into @buf. */
errcode_t clock_read_file(const struct slot_clock *k, uint64_t key, size_t n,
			  void *buf);

#endif
