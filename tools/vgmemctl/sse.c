// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The event stream's framing (text/event-stream): only id: and data:
 * lines matter to vgmemctl; an event's data is handed on when its line
 * ends (mgmtd sends each event's JSON on one data: line).
 */
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

/* A line longer than this is no event of mgmtd's (events hold at most
 * about 1.5 KiB); its rest is dropped rather than buffered without bound. */
#define SSE_MAX_LINE	65536

size_t sse_write(char *p, size_t sz, size_t n, void *priv)
{
	struct sse *s = priv;
	size_t i, len = sz * n;

	for (i = 0; i < len; i++) {
		if (p[i] != '\n') {
			char ch = p[i];

			if (s->line.len < SSE_MAX_LINE &&
			    buf_write(&ch, 1, 1, &s->line) != 1)
				return 0;	/* out of memory: curl aborts */
			continue;
		}
		if (s->line.p && !strncmp(s->line.p, "id: ", 4))
			snprintf(s->last_id, sizeof(s->last_id), "%s", s->line.p + 4);
		else if (s->line.p && !strncmp(s->line.p, "data: ", 6))
			s->on_data(s->priv, s->line.p + 6, s->line.len - 6);
		s->line.len = 0;
		if (s->line.p)
			s->line.p[0] = '\0';
	}
	return len;
}

void sse_free(struct sse *s)
{
	free(s->line.p);
	s->line.p = NULL;
	s->line.len = 0;
}
