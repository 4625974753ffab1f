/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef ORLOV_LIB_DIGEST_H
#define ORLOV_LIB_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* A 64-bit digest of a byte stream (XXH64), for an identity derived from
 * content: not for anything an adversary chooses. */
struct digest {
	uint64_t v[4], total;
	unsigned char buf[32];
	size_t n;
};

void digest_init(struct digest *d, uint64_t seed);
void digest_update(struct digest *d, const void *p, size_t n);
/* A number, as 8 little-endian bytes (the same digest on any host). */
void digest_u64(struct digest *d, uint64_t v);
uint64_t digest_final(const struct digest *d);

#endif
