/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The bearer tokens of mgmtd's TCP listener (token_file), each with the
 * name that policy events give as their author ("by": "token NAME").
 *
 * The file holds either one token alone on its one line (named "token":
 * the format of earlier versions), or one "NAME TOKEN" per line, blank
 * lines and lines starting with '#' ignored. A name is 1 to
 * REST_TOKEN_NAME_MAX characters of [A-Za-z0-9._-]; a token 16 to
 * REST_TOKEN_MAX printable characters without spaces. At most
 * REST_TOKENS_MAX tokens; names and tokens are unique.
 */
#ifndef VGMEM_MGMTD_REST_TOKENS_H
#define VGMEM_MGMTD_REST_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

#define REST_TOKEN_MAX		4096
#define REST_TOKEN_MIN		16
#define REST_TOKEN_NAME_MAX	32
#define REST_TOKENS_MAX		64

struct rest_token {
	char name[REST_TOKEN_NAME_MAX + 1];
	char *secret;		/* malloc()ed, wiped before it is freed */
	size_t len;
};

struct rest_tokens {
	struct rest_token *v;
	size_t n;
};

/*
 * Parses a token file's text (len bytes, need not be NUL-terminated) into
 * *t. 0, or -EINVAL with err naming the line and what is wrong with it
 * (never a secret), or -ENOMEM. *t is empty on error.
 */
int rest_tokens_parse(const char *text, size_t len, struct rest_tokens *t,
		      char *err, size_t errlen);
/* Reads and parses path; -errno of the read, or as rest_tokens_parse. */
int rest_tokens_load(const char *path, struct rest_tokens *t, char *err,
		     size_t errlen);
void rest_tokens_free(struct rest_tokens *t);

/* Constant-time comparison of a presented token with the expected one. */
bool rest_token_equal(const char *a, size_t alen, const char *b, size_t blen);
/*
 * The token presented (alen bytes), compared with every token in constant
 * time: its entry, or NULL if none matches.
 */
const struct rest_token *rest_tokens_match(const struct rest_tokens *t,
					   const char *a, size_t alen);

#endif /* VGMEM_MGMTD_REST_TOKENS_H */
