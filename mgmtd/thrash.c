// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Thrash detection (mgmtd.h, mg_thrash_step). A VM that holds more than its
 * entitlement and keeps relocating is paying suspend-copy-resume cycles
 * that fair sharing alone cannot remove: its working set does not fit in
 * what this GPU can give it. After thrash_window_s of that, mgmtd advises
 * (and, if configured, performs) a live migration to a host with room.
 * Pure function of its inputs and a clock passed in, so tests drive it
 * without sleeping.
 */
#include <string.h>

#include "mgmtd.h"

void mg_thrash_reset(struct mg_thrash *t)
{
	memset(t, 0, sizeof(*t));
}

enum mg_thrash_verdict mg_thrash_step(struct mg_thrash *t,
				      const struct vgmem_vm_stats *st,
				      uint64_t entitlement, int64_t now_ms,
				      int64_t window_ms, int64_t grace_ms)
{
	uint64_t moves = st->reloc_out_chunks + st->reloc_in_chunks;
	bool active = t->primed && moves > t->last_moves;
	bool above = st->allocated > entitlement && st->relocated > 0;
	bool was_advised = t->advisory;

	t->last_moves = moves;
	t->primed = true;

	if (!above || (t->since_ms && !active &&
		       now_ms - t->last_active_ms > grace_ms)) {
		/* the episode (if any) is over */
		t->since_ms = 0;
		t->last_active_ms = 0;
		t->advisory = false;
		return was_advised ? MG_THRASH_CLEAR : MG_THRASH_NONE;
	}
	if (!active)
		return MG_THRASH_NONE;	/* above, quiet, within grace */
	if (!t->since_ms)
		t->since_ms = now_ms;
	t->last_active_ms = now_ms;
	if (!t->advisory && now_ms - t->since_ms >= window_ms) {
		t->advisory = true;
		return MG_THRASH_RAISE;
	}
	return MG_THRASH_NONE;
}
