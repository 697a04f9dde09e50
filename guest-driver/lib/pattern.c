// SPDX-License-Identifier: MIT
/*
 * The CPU side of the pattern and checksum kernels, to check what the GPU
 * computed: VGMEM_K_FILL_PATTERN writes vgmem_pattern_word(seed, i) at word
 * i (little endian), VGMEM_K_CHECKSUM is 64-bit FNV-1a over the bytes.
 */
#include "vgmem_priv.h"

uint64_t vgmem_fnv1a(uint64_t h, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= VGMEM_FNV1A_PRIME;
	}
	return h;
}

uint64_t vgmem_pattern_checksum(uint64_t bytes, uint32_t seed)
{
	uint64_t h = VGMEM_FNV1A_OFFSET;
	uint64_t i, words = bytes / 4;
	uint32_t w;
	unsigned int b;

	for (i = 0; i < words; i++) {
		w = vgmem_pattern_word(seed, i);
		for (b = 0; b < 4; b++) {
			h ^= (w >> (8 * b)) & 0xff;
			h *= VGMEM_FNV1A_PRIME;
		}
	}
	/* The tail holds the low bytes of the next word. */
	w = vgmem_pattern_word(seed, words);
	for (b = 0; b < (bytes & 3); b++) {
		h ^= (w >> (8 * b)) & 0xff;
		h *= VGMEM_FNV1A_PRIME;
	}
	return h;
}
