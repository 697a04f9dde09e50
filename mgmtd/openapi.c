// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Embeds mgmtd/openapi.json at build time. The assembler reads the file
 * relative to the directory the compiler runs in (the repository root, as
 * the Makefile does it); the Makefile makes this object depend on the file.
 */
#include "openapi.h"

__asm__(".section .rodata\n"
	".balign 16\n"
	".type vg_openapi_start, @object\n"
	"vg_openapi_start:\n"
	".incbin \"mgmtd/openapi.json\"\n"
	"vg_openapi_end:\n"
	".byte 0\n"
	".previous\n");

extern const char vg_openapi_start[] __asm__("vg_openapi_start");
extern const char vg_openapi_end[] __asm__("vg_openapi_end");

const char *mg_openapi_text(size_t *len)
{
	if (len)
		*len = (size_t)(vg_openapi_end - vg_openapi_start);
	return vg_openapi_start;
}
