/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The project's two non-cryptographic hashes, one copy each: splitmix64
 * for reproducible pseudo-random sequences (a seed names the same sequence
 * everywhere) and 64-bit FNV-1a for keys derived from bytes.  Neither is
 * for anything an adversary chooses.
 */
#ifndef ORLOV_HASH_H
#define ORLOV_HASH_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64 (Steele, Lea, Flood 2014): the next value of the sequence
 * @state walks. */
static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 64-bit FNV-1a: start from FNV1A64_INIT, feed bytes in order. */
#define FNV1A64_INIT 0xcbf29ce484222325ULL
#define FNV1A64_PRIME 0x100000001b3ULL

static inline uint64_t fnv1a64_byte(uint64_t h, unsigned char b)
{
	return (h ^ b) * FNV1A64_PRIME;
}

static inline uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n--)
		h = fnv1a64_byte(h, *s++);
	return h;
}

#endif
