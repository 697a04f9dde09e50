/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The OpenAPI 3.0 description of the REST API: mgmtd/openapi.json, a
 * hand-written file embedded into the binary at build time (openapi.c,
 * .incbin), served as GET /v1/openapi.json.
 */
#ifndef VGMEM_MGMTD_OPENAPI_H
#define VGMEM_MGMTD_OPENAPI_H

#include <stddef.h>

/* The document, NUL-terminated, and its length without the NUL. */
const char *mg_openapi_text(size_t *len);

#endif /* VGMEM_MGMTD_OPENAPI_H */
