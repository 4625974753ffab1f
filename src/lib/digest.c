// SPDX-License-Identifier: GPL-2.0-or-later
/* XXH64 over a byte stream (digest.h), written from its specification. */
#include "config.h"

#include <string.h>

#include "lib/digest.h"
#include "lib/util.h"

#define XXP1 0x9E3779B185EBCA87ULL
#define XXP2 0xC2B2AE3D27D4EB4FULL
#define XXP3 0x165667B19E3779F9ULL
#define XXP4 0x85EBCA77C2B2AE63ULL
#define XXP5 0x27D4EB2F165667C5ULL

static uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static uint64_t get_le64(const unsigned char *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static uint64_t xx_round(uint64_t acc, uint64_t in)
{
	return rotl64(acc + in * XXP2, 31) * XXP1;
}

static uint64_t xx_merge(uint64_t acc, uint64_t v)
{
	return (acc ^ xx_round(0, v)) * XXP1 + XXP4;
}

void digest_init(struct digest *d, uint64_t seed)
{
	memset(d, 0, sizeof(*d));
	d->v[0] = seed + XXP1 + XXP2;
	d->v[1] = seed + XXP2;
	d->v[2] = seed;
	d->v[3] = seed - XXP1;
}

static void digest_stripe(struct digest *d, const unsigned char *p)
{
	int i;

	for (i = 0; i < 4; i++)
		d->v[i] = xx_round(d->v[i], get_le64(p + 8 * i));
}

void digest_update(struct digest *d, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t k;

	d->total += n;
	if (d->n) {
		k = 32 - d->n < n ? 32 - d->n : n;
		memcpy(d->buf + d->n, p, k);
		d->n += k;
		p += k;
		n -= k;
		if (d->n < 32)
			return;
		digest_stripe(d, d->buf);
		d->n = 0;
	}
	for (; n >= 32; p += 32, n -= 32)
		digest_stripe(d, p);
	memcpy(d->buf, p, n);
	d->n = n;
}

void digest_u64(struct digest *d, uint64_t v)
{
	unsigned char b[8];

	put_le32(b, (uint32_t)v);
	put_le32(b + 4, (uint32_t)(v >> 32));
	digest_update(d, b, sizeof(b));
}

uint64_t digest_final(const struct digest *d)
{
	const unsigned char *p = d->buf, *end = d->buf + d->n;
	uint64_t h;
	int i;

	if (d->total >= 32) {
		h = rotl64(d->v[0], 1) + rotl64(d->v[1], 7) +
		    rotl64(d->v[2], 12) + rotl64(d->v[3], 18);
		for (i = 0; i < 4; i++)
			h = xx_merge(h, d->v[i]);
	} else {
		h = d->v[2] + XXP5;
	}
	h += d->total;
	for (; p + 8 <= end; p += 8)
		h = rotl64(h ^ xx_round(0, get_le64(p)), 27) * XXP1 + XXP4;
	if (p + 4 <= end) {
		h = rotl64(h ^ (uint64_t)get_le32(p) * XXP1, 23) * XXP2 + XXP3;
		p += 4;
	}
	for (; p < end; p++)
		h = rotl64(h ^ *p * XXP5, 11) * XXP1;
	h ^= h >> 33;
	h *= XXP2;
	h ^= h >> 29;
	h *= XXP3;
	return h ^ (h >> 32);
}
