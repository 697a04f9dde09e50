/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mgmtd's durable state: operator policy changes, global knobs, which
 * libvirt domain owns each VM, and the event history in one SQLite
 * database.
 *
 * Durability: journal_mode=WAL with synchronous=FULL. Every write is one
 * transaction, and in WAL mode with FULL the WAL is fsync()ed at every
 * COMMIT, so once a put returns 0 the change survives kill -9 and power
 * loss alike. (NORMAL would survive kill -9 too, since the WAL is written
 * before COMMIT returns and only the fsync is deferred to checkpoints, but
 * could lose the last transactions on power loss; operator changes are
 * rare, so FULL costs nothing that matters.) Readers never block the
 * writer in WAL mode. One connection, serialised by the state's mutex.
 */
#ifndef VGMEM_MGMTD_STATE_H
#define VGMEM_MGMTD_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct mg_state;

/* An operator's policy for one VM: only the fields in mask were set. */
struct mg_state_policy {
	char id[MG_ID_LEN];
	unsigned int mask;		/* MG_POL_* */
	struct mg_vm_policy p;
};

/*
 * Creates the file and schema if needed; ":memory:" works for tests.
 * -EBUSY (and an error log line naming the holder's pid) if another
 * process has the database open: <path>.lock is flock()ed until close.
 */
int mg_state_open(const char *path, struct mg_state **out);
void mg_state_close(struct mg_state *st);

/* Replaces the VM's operator policy (mask 0 deletes it). */
int mg_state_put_policy(struct mg_state *st, const char *id,
			const struct mg_vm_policy *p, unsigned int mask);
int mg_state_load_policies(struct mg_state *st, struct mg_state_policy **out,
			   size_t *n);

/* Replaces the stored knobs (mask: which fields were set by operators). */
int mg_state_put_knobs(struct mg_state *st, const struct mg_knobs *k,
		       unsigned int mask);
/* Loads them; *mask 0 if none were ever stored. */
int mg_state_load_knobs(struct mg_state *st, struct mg_knobs *k,
			unsigned int *mask);

/*
 * The libvirt domain (its UUID) that owns the VM id (an mdev UUID): when
 * several domains name one mdev, this one keeps it across restarts.
 * domain NULL deletes the record. get: -ENOENT if none is recorded.
 */
int mg_state_put_owner(struct mg_state *st, const char *id,
		       const char *domain);
int mg_state_get_owner(struct mg_state *st, const char *id,
		       char domain[MG_ID_LEN]);

/*
 * The last refusal reported (error event, error log line) for a libvirt
 * domain (its UUID), so that a domain still refused for the same reason
 * is not reported again at every start of mgmtd. reason NULL deletes it
 * (the domain is managed or gone). get: -ENOENT if none is recorded.
 */
int mg_state_put_report(struct mg_state *st, const char *domain,
			const char *reason);
int mg_state_get_report(struct mg_state *st, const char *domain,
			char reason[MG_WHY_LEN]);

/* Appends events (ids strictly above every stored one), one transaction. */
int mg_state_add_events(struct mg_state *st, const struct mg_event *ev,
			size_t n);
int mg_state_events_since(struct mg_state *st, uint64_t after_id, size_t max,
			  struct mg_event **out, size_t *n);
int mg_state_last_event_id(struct mg_state *st, uint64_t *id);
/* Keeps the newest keep events. */
int mg_state_prune_events(struct mg_state *st, uint64_t keep);

#endif /* VGMEM_MGMTD_STATE_H */
