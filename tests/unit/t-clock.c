// SPDX-License-Identifier: GPL-2.0-or-later
/* lib/clock: four slots of 8 bytes; what leaves goes to the spill file
 * only if it changed, the clock passes over what was used since, and
 * what comes back reads as it left. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "tap.h"

/* Item @key in a slot, filled with @key's letter and changed. */
static size_t put(struct slot_clock *k, uint64_t key, uint64_t *old,
		  int *written)
{
	size_t s;

	if (clock_take(k, key, &s, old, written))
		exit(99);
	memset(k->slot[s].data, 'a' + (int)key, k->size);
	k->slot[s].dirty = 1;
	return s;
}

int main(void)
{
	struct slot_clock k;
	uint64_t old, key;
	int written;
	size_t s;
	char buf[16];

	if (clock_init(&k, 8, 32))
		exit(99);
	is_int((int)k.maxslot, 4, "a budget of 32 bytes holds 4 items of 8");
	for (key = 0; key < 4; key++)
		put(&k, key, &old, &written);
	is_int(old == CLOCK_NONE, 1, "within the budget a slot is new");
	is_int(k.fd, -1, "nothing on the spill file yet");
	k.slot[0].ref = 1;	/* item 0 used since */
	s = put(&k, 4, &old, &written);
	is_int((int)old, 1, "the clock passes over the used item 0 and takes item 1's slot");
	is_int(written, 1, "item 1 changed: it went to the spill file");
	is_int((int)s, 1, "slot 1");
	/* item 2 leaves clean after it is read back unchanged */
	s = put(&k, 5, &old, &written);
	is_int((int)old, 2, "then item 2");
	if (clock_take(&k, 2, &s, &old, &written) || clock_read(&k, s))
		exit(99);
	is_int((int)old, 3, "item 2 back in item 3's slot");
	is_int(memcmp(k.slot[s].data, "cccccccc", 8), 0, "item 2 reads as it left");
	if (clock_take(&k, 6, &s, &old, &written))
		exit(99);
	is_int((int)old, 0, "item 0, unused since, leaves");
	is_int(written, 1, "changed: written");
	if (clock_take(&k, 7, &s, &old, &written))
		exit(99);
	is_int((int)old, 4, "item 4 leaves");
	if (clock_take(&k, 8, &s, &old, &written))
		exit(99);
	is_int((int)old, 5, "item 5 leaves");
	if (clock_take(&k, 9, &s, &old, &written))
		exit(99);
	is_int((int)old, 2, "item 2 leaves");
	is_int(written, 0, "unchanged since read: not written again");
	if (clock_read_file(&k, 0, 2, buf))
		exit(99);
	is_int(memcmp(buf, "aaaaaaaabbbbbbbb", 16), 0,
	       "items 0 and 1 read from the file in one go");
	clock_free(&k);
	is_int(k.fd, -1, "freed, the file closed");
	return tap_done();
}
