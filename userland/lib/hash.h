/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * hash - the hash of a key made of 64-bit words, for libiberty's hash
 * tables: a multiply a word, where iterative_hash() mixes a byte at a time
 * (it took a quarter of reading a capture, and a tenth of naming one).
 */
#ifndef CPROF_HASH_H
#define CPROF_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The hash of the n 64-bit words at p (any alignment), from seed. */
static inline uint32_t hash_words(const void *p, size_t n, uint64_t seed)
{
	uint64_t h = seed * 0x9e3779b97f4a7c15ULL, w;
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(&w, (const char *)p + 8 * i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	h *= 0xc4ceb9fe1a85ec53ULL;
	return (uint32_t)(h ^ h >> 29);
}

#endif
