// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * corrupt BASE OUT SEED START:LEN...: copy BASE to OUT, then set 1 to 8
 * bytes of one of the regions (picked by SEED) to values from SEED.  The
 * generator is splitmix64, so a seed names the same damage everywhere.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/hash.h"

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	unsigned long long start, len;
	uint64_t s;
	ssize_t n;
	int in, out, k, count;

	if (argc < 5) {
		fprintf(stderr, "usage: corrupt BASE OUT SEED START:LEN...\n");
		return 2;
	}
	s = strtoull(argv[3], NULL, 10);
	in = open(argv[1], O_RDONLY);
	out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0) {
		perror("corrupt: open");
		return 1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			perror("corrupt: write");
			return 1;
		}
	k = 4 + (int)(splitmix64(&s) % (uint64_t)(argc - 4));
	if (sscanf(argv[k], "%llu:%llu", &start, &len) != 2 || !len) {
		fprintf(stderr, "corrupt: bad region %s\n", argv[k]);
		return 2;
	}
	count = 1 + (int)(splitmix64(&s) % 8);
	while (count--) {
		unsigned char b = (unsigned char)splitmix64(&s);
		off_t off = (off_t)(start + splitmix64(&s) % len);

		if (pwrite(out, &b, 1, off) != 1) {
			perror("corrupt: pwrite");
			return 1;
		}
	}
	return close(out) ? 1 : 0;
}
