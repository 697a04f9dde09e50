/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Shared by the fuzz harnesses (tests/fuzz/fuzz_*.c): a broken invariant
 * aborts, which libFuzzer reports as a crash and saves the input.
 */
#ifndef VGMEM_FUZZ_UTIL_H
#define VGMEM_FUZZ_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((format(printf, 1, 2), noreturn))
static inline void fuzz_die(const char *fmt, ...)
{
	va_list ap;

	fputs("fuzz: invariant broken: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* A NUL-terminated copy of the input (the parsers take C strings). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		fuzz_die("malloc");
	for (size_t i = 0; i < size; i++)
		s[i] = (char)data[i];
	s[size] = 0;
	return s;
}

#endif /* VGMEM_FUZZ_UTIL_H */
