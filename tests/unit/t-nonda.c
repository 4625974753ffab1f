// SPDX-License-Identifier: GPL-2.0-or-later
/* ext4_nonda_switch's watermark (EXT4_FREECLUSTERS_WATERMARK): 4 times
 * percpu_counter_batch, which the online CPUs size, times nr_cpu_ids,
 * the possible CPUs (--possible-cpus); none on a uniprocessor kernel. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model/write.h"
#include "model/ext4/mballoc.h"
#include "tap.h"
#include "fixture.h"

/* Does a write at @free free blocks, none delayed, go undelayed on a
 * kernel of @online CPUs (0: uniprocessor) and @possible possible? */
static int nonda_at(unsigned int online, unsigned int possible, int64_t free)
{
	struct fs_state fs = { 0 };
	struct delalloc da;
	int racy, r;

	memset(&da, 0, sizeof(da));
	fixture_state(&fs, 4, 2048, 8192, 300);
	fs_state_set_cpus(&fs, online);
	if (mb_state_init(&fs, 1))
		exit(99);
	delalloc_start(&da, 12, NULL, 0);
	fs.mb->delalloc = 1;
	fs.freeb.count = free;
	r = ext4_nonda_switch(&fs, &da, 0, possible, &racy);
	delalloc_free(&fs, &da);
	mb_state_free(&fs);
	fs_state_free(&fs);
	return r;
}

int main(void)
{
	is_int(nonda_at(2, 2, 256), 0,
	       "2 CPUs online and possible: the watermark is 4 * 32 * 2 = 256, "
	       "256 free blocks still delay");
	is_int(nonda_at(2, 2, 255), 1, "255 do not");
	is_int(nonda_at(2, 8, 1023), 1,
	       "2 online of 8 possible (-smp 2,maxcpus=8): 4 * 32 * 8 = 1024, "
	       "1023 free blocks do not delay");
	is_int(nonda_at(2, 8, 1024), 0, "1024 do");
	is_int(nonda_at(20, 20, 3199), 1,
	       "20 CPUs: the batch grows to 40, the watermark to 3200");
	is_int(nonda_at(20, 64, 4 * 40 * 64), 0,
	       "20 online of 64: the batch of the online ones, times 64");
	is_int(nonda_at(20, 64, 4 * 40 * 64 - 1), 1, "one below it: not delayed");
	is_int(nonda_at(0, 0, 1), 0,
	       "a uniprocessor kernel has no watermark: 1 free block delays");
	return tap_done();
}
