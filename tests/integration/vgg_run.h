/* SPDX-License-Identifier: MIT */
/*
 * vgmem-guest run in-process through vgg_main, as the VM tests run the
 * program, for the test_vgmem_guest*.c programs: its exit status, what it
 * printed and its last line (the RESULT line). Include after <cmocka.h>.
 */
#ifndef VGMEM_TESTS_VGG_RUN_H
#define VGMEM_TESTS_VGG_RUN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/vgmem-guest-inproc/inproc.h"

/*
 * The in-process host --inproc runs on: the host side's, or NULL to run as
 * the vgmem-guest a tenant installs (no --inproc there).
 */
static const struct vgg_inproc *vgg_run_inproc = &vgg_inproc_host;

#define VGG_RUN_MAX_ARGS	40

struct run {
	int rc;
	char *out;
	char *err;
	char last[1024];	/* the last line of out */
};

static inline void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* vgg_main on an argument vector (NULL-terminated); the program name is added. */
static inline void runv(struct run *r, const char *const *args)
{
	char *argv[VGG_RUN_MAX_ARGS];
	size_t olen = 0, elen = 0;
	FILE *out, *err;
	const char *p, *end;
	int argc = 0;

	argv[argc++] = "vgmem-guest";
	while (*args && argc < VGG_RUN_MAX_ARGS - 1)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	memset(r, 0, sizeof(*r));
	out = open_memstream(&r->out, &olen);
	err = open_memstream(&r->err, &elen);
	assert_non_null(out);
	assert_non_null(err);
	r->rc = vgg_main(argc, argv, out, err, vgg_run_inproc);
	fclose(out);
	fclose(err);

	end = r->out + olen;
	while (end > r->out && end[-1] == '\n')
		end--;
	p = end;
	while (p > r->out && p[-1] != '\n')
		p--;
	snprintf(r->last, sizeof(r->last), "%.*s", (int)(end - p), p);
}

/* The same on a NULL-terminated argument list. */
static inline void run(struct run *r, ...)
{
	const char *args[VGG_RUN_MAX_ARGS];
	const char *a;
	va_list ap;
	int n = 0;

	va_start(ap, r);
	while ((a = va_arg(ap, const char *)) && n < VGG_RUN_MAX_ARGS - 2)
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	runv(r, args);
}

static inline bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Exit status 0 and a RESULT ok line, or the test fails with both outputs. */
#define assert_ok(r)							\
	do {								\
		if ((r)->rc != 0 || !starts((r)->last, "RESULT ok "))	\
			fail_msg("rc %d, last line '%s', stderr '%s'",	\
				 (r)->rc, (r)->last, (r)->err);		\
	} while (0)

#endif /* VGMEM_TESTS_VGG_RUN_H */
