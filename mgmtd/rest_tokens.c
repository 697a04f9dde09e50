// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Bearer tokens of the TCP listener (rest_tokens.h): the token file's
 * parser and the constant-time match. Secrets never appear in an error.
 */
#include "rest_tokens.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rest_token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	volatile unsigned char diff = 0;
	size_t i;

	/*
	 * Time depends on the presented length only, never on where the
	 * first difference is or on the secret's length.
	 */
	diff |= (unsigned char)(alen != blen);
	for (i = 0; i < alen; i++)
		diff |= (unsigned char)(a[i] ^ (blen ? b[i % blen] : 0));
	return diff == 0 && blen != 0;
}

const struct rest_token *rest_tokens_match(const struct rest_tokens *t,
					   const char *a, size_t alen)
{
	const struct rest_token *hit = NULL;
	size_t i;

	/* Every token is compared: the time says nothing of which matched. */
	for (i = 0; i < t->n; i++)
		if (rest_token_equal(a, alen, t->v[i].secret, t->v[i].len))
			hit = &t->v[i];
	return hit;
}

void rest_tokens_free(struct rest_tokens *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		explicit_bzero(t->v[i].secret, t->v[i].len);
		free(t->v[i].secret);
	}
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

static bool name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > REST_TOKEN_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

static bool secret_ok(const char *s, size_t n)
{
	size_t i;

	if (n < REST_TOKEN_MIN || n > REST_TOKEN_MAX)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] == 0x7f)
			return false;
	return true;
}

static int add(struct rest_tokens *t, const char *name, size_t nlen,
	       const char *secret, size_t slen, unsigned int line, char *err,
	       size_t errlen)
{
	struct rest_token *nv;
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (strlen(t->v[i].name) == nlen &&
		    !memcmp(t->v[i].name, name, nlen)) {
			snprintf(err, errlen, "line %u: the name %.*s is given twice",
				 line, (int)nlen, name);
			return -EINVAL;
		}
		if (t->v[i].len == slen && !memcmp(t->v[i].secret, secret, slen)) {
			snprintf(err, errlen, "line %u: the token of %.*s is %s's too",
				 line, (int)nlen, name, t->v[i].name);
			return -EINVAL;
		}
	}
	if (t->n == REST_TOKENS_MAX) {
		snprintf(err, errlen, "line %u: more than %d tokens", line,
			 REST_TOKENS_MAX);
		return -EINVAL;
	}
	nv = realloc(t->v, (t->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	t->v = nv;
	memset(&nv[t->n], 0, sizeof(nv[t->n]));
	memcpy(nv[t->n].name, name, nlen);
	nv[t->n].secret = malloc(slen + 1);
	if (!nv[t->n].secret)
		return -ENOMEM;
	memcpy(nv[t->n].secret, secret, slen);
	nv[t->n].secret[slen] = 0;
	nv[t->n].len = slen;
	t->n++;
	return 0;
}

int rest_tokens_parse(const char *text, size_t len, struct rest_tokens *t,
		      char *err, size_t errlen)
{
	const char *p = text, *end = text + len, *eol, *sec;
	unsigned int line = 0, unnamed = 0;
	size_t n, nlen, slen;
	int ret = 0;

	t->v = NULL;
	t->n = 0;
	for (; p < end && !ret; p = eol + (eol < end)) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		line++;
		n = (size_t)(eol - p);
		while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		while (n && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
		}
		if (!n || *p == '#')
			continue;
		nlen = 0;
		while (nlen < n && p[nlen] != ' ' && p[nlen] != '\t')
			nlen++;
		if (nlen == n) {
			/* a token alone: the file's only token, named "token" */
			if (!secret_ok(p, n)) {
				snprintf(err, errlen,
					 "line %u: not a token (%d to %d printable characters without spaces)",
					 line, REST_TOKEN_MIN, REST_TOKEN_MAX);
				ret = -EINVAL;
				continue;
			}
			unnamed = line;
			ret = add(t, "token", 5, p, n, line, err, errlen);
			continue;
		}
		if (!name_ok(p, nlen)) {
			snprintf(err, errlen,
				 "line %u: not a token name (1 to %d of A-Z a-z 0-9 . _ -)",
				 line, REST_TOKEN_NAME_MAX);
			ret = -EINVAL;
			continue;
		}
		sec = p + nlen;
		slen = n - nlen;
		while (slen && (*sec == ' ' || *sec == '\t')) {
			sec++;
			slen--;
		}
		if (!secret_ok(sec, slen)) {
			snprintf(err, errlen,
				 "line %u: the token of %.*s is not %d to %d printable characters without spaces",
				 line, (int)nlen, p, REST_TOKEN_MIN, REST_TOKEN_MAX);
			ret = -EINVAL;
			continue;
		}
		ret = add(t, p, nlen, sec, slen, line, err, errlen);
	}
	if (!ret && !t->n) {
		snprintf(err, errlen, "no token in it");
		ret = -EINVAL;
	}
	if (!ret && unnamed && t->n > 1) {
		snprintf(err, errlen,
			 "line %u: a token without a name among several (write NAME TOKEN)",
			 unnamed);
		ret = -EINVAL;
	}
	if (ret)
		rest_tokens_free(t);
	return ret;
}

int rest_tokens_load(const char *path, struct rest_tokens *t, char *err,
		     size_t errlen)
{
	/* A file of REST_TOKENS_MAX full lines and some comments at most. */
	size_t cap = (size_t)REST_TOKENS_MAX * (REST_TOKEN_MAX + 64) + 1, n;
	char *buf;
	FILE *f;
	int ret;

	t->v = NULL;
	t->n = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, cap, f);
	ret = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!ret && n == cap) {
		snprintf(err, errlen, "larger than %zu bytes", cap - 1);
		ret = -EINVAL;
	}
	if (!ret)
		ret = rest_tokens_parse(buf, n, t, err, errlen);
	explicit_bzero(buf, n);
	free(buf);
	return ret;
}
