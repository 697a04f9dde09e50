/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mgmtd internals shared by model.c, libvirt.c, thrash.c and main.c (the
 * REST side uses model.h only).
 */
#ifndef VGMEM_MGMTD_MGMTD_H
#define VGMEM_MGMTD_MGMTD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "config.h"
#include "backend.h"

/* ---- model.c: what libvirt.c and config-defined VMs feed in ---------- */

/*
 * A VM (domain) became known, with the policy its definition carries
 * (meta_mask: which fields it set; MG_POL_QUOTA is required). Not started.
 * -EINVAL with why if the policy is invalid (nothing is changed).
 */
int mg_vm_define(struct mg *mg, const char *id, const char *name,
		 const struct mg_vm_policy *meta, unsigned int meta_mask,
		 enum mg_vm_source src, char *why, size_t whylen);
/*
 * The _text forms take the sizes as the domain wrote them
 * (mg_domain_parse_text(), mg_metadata_parse_text()), so that a refusal
 * quotes the attributes: "domain web1: min='8GiB' is above max='1GiB'"
 * (txt NULL: as the forms without, sizes shown from their values).
 */
int mg_vm_define_text(struct mg *mg, const char *id, const char *name,
		      const struct mg_vm_policy *meta, unsigned int meta_mask,
		      const struct mg_pol_text *txt, enum mg_vm_source src,
		      char *why, size_t whylen);
/*
 * It started: defines it as above, places it on a GPU (gpu < 0: the one
 * with most room), checks admission and starts it on the backend. On
 * error an "error" event says why and the VM stays stopped.
 */
int mg_vm_start(struct mg *mg, const char *id, const char *name,
		const struct mg_vm_policy *meta, unsigned int meta_mask,
		int gpu, enum mg_vm_source src, char *why, size_t whylen);
int mg_vm_start_text(struct mg *mg, const char *id, const char *name,
		     const struct mg_vm_policy *meta, unsigned int meta_mask,
		     const struct mg_pol_text *txt, int gpu,
		     enum mg_vm_source src, char *why, size_t whylen);
int mg_vm_stop(struct mg *mg, const char *id);
/* The domain was undefined: forgets a stopped VM (-EBUSY if running). */
int mg_vm_forget(struct mg *mg, const char *id);
/*
 * Live metadata change: validated and admitted as an operator change is,
 * applied, or refused with an "error" event and the VM's error text set
 * (nothing else changes). gpu: the placement it asks for (-1: any). A
 * stopped VM takes it for its next start; a running VM cannot move
 * between GPUs, so a gpu other than its own is refused with -EBUSY (a gpu
 * that does not exist with -EINVAL).
 */
int mg_vm_set_meta(struct mg *mg, const char *id,
		   const struct mg_vm_policy *meta, unsigned int meta_mask,
		   int gpu, char *why, size_t whylen);
int mg_vm_set_meta_text(struct mg *mg, const char *id,
			const struct mg_vm_policy *meta, unsigned int meta_mask,
			const struct mg_pol_text *txt, int gpu, char *why,
			size_t whylen);
/*
 * adopt_mdevs: every vGPU the backend shows that no VM has becomes a
 * running VM of source "backend" (its mdev UUID as id, its quota); such
 * VMs whose vGPU is gone are stopped and forgotten. No-op when the
 * setting is off. Call without the lock (the timer does, every tick).
 */
int mg_adopt_backend_vms(struct mg *mg);
/*
 * The VM's virtio-fs shares (shares.c): the valid ones (mg_share_check()
 * passed) replace the VM's table, and go to the backend at once if it is
 * running, else when it starts. A VM never given a table (config,
 * adopted) leaves the backend's table alone. bad: why some of the definition's shares
 * were refused ("" or NULL: none were); it becomes an "error" event
 * (op "shares"), a log line and the VM's error. -ENOENT (no such VM),
 * -EINVAL (a share in shares that is not valid, or too many: nothing
 * changes), or the backend's error (the table is kept for the next
 * start, the error reported).
 */
int mg_vm_set_shares(struct mg *mg, const char *id,
		     const struct mg_share *shares, size_t n,
		     const char *bad);
/*
 * Which libvirt domain (its UUID) owns VM id, when several name its mdev
 * (libvirt.c decides): recorded in the state database, so that the choice
 * survives a restart. domain NULL forgets it. get: -ENOENT ("") if none
 * is recorded.
 */
int mg_vm_owner_set(struct mg *mg, const char *id, const char *domain);
int mg_vm_owner_get(struct mg *mg, const char *id, char domain[MG_ID_LEN]);
/* Sets a VM's info.error alone (a refusal already reported before). */
void mg_vm_note_error(struct mg *mg, const char *id, const char *msg);
/* Records a VM's definition error (bad metadata): event, log, info.error. */
void mg_vm_report_error(struct mg *mg, const char *id, const char *name,
			const char *msg);

/* Queues an event (detail: printf format producing a JSON object) and
 * delivers it (persist, then subscribers). Must not be called with the
 * model lock held; model.c uses its own locked variant. */
void mg_emit(struct mg *mg, const char *type, const char *vm,
	     const char *detail_fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Copies src into dst[len], truncating; always NUL-terminated. */
static inline void mg_strlcpy(char *dst, const char *src, size_t len)
{
	size_t n = 0;

	if (!len)
		return;
	while (src && src[n] && n + 1 < len) {
		dst[n] = src[n];
		n++;
	}
	dst[n] = 0;
}

/* JSON string escaping into dst (always NUL-terminated, truncates). */
void mg_json_escape(char *dst, size_t len, const char *src);

/*
 * One timer period at now_mono_ms: counters, fault/relocation events,
 * thrash detection, recompute (daemon.c; tests call it directly with a
 * recompute_ms too long for the timer to interfere).
 */
void mg_tick(struct mg *mg, int64_t now_mono_ms);

/* The backend (tests reach the embedded guests through it). */
struct mg_backend *mg_get_backend(struct mg *mg);
const struct mg_config *mg_get_config(struct mg *mg);
int64_t mg_now_ms(void);		/* wall clock */
int64_t mg_mono_ms(void);		/* monotonic */

/* ---- thrash.c: migration advisories --------------------------------- */

struct mg_thrash {
	int64_t since_ms;		/* monotonic start of the episode; 0: none */
	int64_t last_active_ms;		/* last tick with relocation activity */
	uint64_t last_moves;		/* reloc_out + reloc_in chunks last tick */
	bool primed;			/* last_moves is valid */
	bool advisory;
};

enum mg_thrash_verdict {
	MG_THRASH_NONE = 0,
	MG_THRASH_RAISE,		/* the episode just reached the window */
	MG_THRASH_CLEAR,		/* an advised episode ended */
};

/*
 * One observation of a running VM at now_ms (monotonic). A tick is
 * "thrashing" when the VM holds more than its entitlement, some of it is
 * relocated, and its relocation counters advanced; the episode survives
 * quiet ticks for up to grace_ms, and ends when the VM is no longer above
 * its entitlement with relocated memory, or was quiet for longer. An
 * episode lasting window_ms raises the advisory once.
 */
enum mg_thrash_verdict mg_thrash_step(struct mg_thrash *t,
				      const struct vgmem_vm_stats *st,
				      uint64_t entitlement, int64_t now_ms,
				      int64_t window_ms, int64_t grace_ms);
/* Forget the episode (VM stopped). */
void mg_thrash_reset(struct mg_thrash *t);

/* ---- libvirt.c ------------------------------------------------------- */

struct mg_libvirt;

#define MG_XMLNS	"https://vgmem.dev/xmlns/vgmem/1"

/*
 * Connects to uri, registers lifecycle and metadata-change callbacks,
 * syncs every domain and runs the event loop on its own thread.
 */
int mg_libvirt_start(struct mg *mg, const char *uri, struct mg_libvirt **out);
void mg_libvirt_stop(struct mg_libvirt *lv);
bool mg_libvirt_connected(struct mg_libvirt *lv);
/* The virConnectPtr (tests drive the test driver through it). */
void *mg_libvirt_conn(struct mg_libvirt *lv);
/*
 * Asynchronous live migration of the domain of VM id to dest_uri (daemon.c asks for
 * it on a thrash advisory): peer to peer, persistent at the destination,
 * undefined at the source; a domain with vGPUs names free mdevs of the
 * same types there (migdest.c); data_uri (NULL: libvirt's choice) is
 * where QEMU's stream goes. Its outcome goes to mg_migration_result().
 * 0 once the migration thread runs; -ENOENT (no such domain), -ENOTCONN.
 */
int mg_libvirt_migrate(struct mg_libvirt *lv, const char *id,
		       const char *domain, const char *dest_uri,
		       const char *data_uri);
/*
 * The outcome of a migration of VM id (domain name) to dest: err 0 is
 * success, else -errno with reason (libvirt's message). Counted
 * (vgmem_migrations_total{result}), an event (advisory "migrated", or an
 * error {"op":"migrate"}), a log line. Nothing else changes: a VM whose
 * migration failed keeps running here with its advisory raised.
 */
void mg_migration_result(struct mg *mg, const char *id, const char *name,
			 const char *dest, int err, const char *reason);
/* model.c tells mgmtd which libvirt to use for migrations. */
void mg_set_libvirt(struct mg *mg, struct mg_libvirt *lv);

/*
 * Domain XML -> what mgmtd needs (pure; tested on its own). mdev: the
 * first vgmem-capable mdev hostdev's UUID ("" if none). Returns 0 with
 * meta filled (mask 0 if there is no <vgmem:gpu>), or -EINVAL with err.
 */
int mg_domain_parse(const char *xml, char *mdev, size_t mdevlen,
		    struct mg_vm_policy *meta, unsigned int *mask, int *gpu,
		    char *err, size_t errlen);
/* The same, with the size attributes as written in *txt. */
int mg_domain_parse_text(const char *xml, char *mdev, size_t mdevlen,
			 struct mg_vm_policy *meta, unsigned int *mask,
			 int *gpu, struct mg_pol_text *txt, char *err,
			 size_t errlen);
/*
 * Whether the domain's <metadata> has an element in a namespace that is
 * nearly vgmem's (its URI says "vgmem" but is not exactly MG_XMLNS: a
 * typo, another version, http for https): 1 with that URI in uri (cut to
 * len), 0 if none, -EINVAL if the XML is not a domain. Such metadata is
 * not vgmem's and is not read; this only lets mgmtd say so.
 */
int mg_domain_near_ns(const char *xml, char *uri, size_t len);
/*
 * The domain's virtio-fs shares (<filesystem type='mount'> with <driver
 * type='virtiofs'/>, <source dir=.../>, <target dir=.../>, optional
 * <readonly/>), each checked with mg_share_check(): the valid ones in
 * *out (malloc()ed, NULL if none) by id, and for the others one sentence
 * each in bad (""  if every share is valid). 0, or -EINVAL with bad
 * saying why the XML could not be read, or -ENOMEM.
 */
int mg_domain_shares(const char *xml, struct mg_share **out, size_t *n,
		     char *bad, size_t badlen);
/*
 * A share the operator may give: a tag of 1..36 bytes, a source that is
 * absolute, shorter than MG_SHARE_PATH_LEN, without '.' or '..'
 * components, and an existing directory. 0 or -EINVAL (-ENOENT,
 * -ENOTDIR for the directory) with err naming the share.
 */
int mg_share_check(const struct mg_share *s, char *err, size_t errlen);
/*
 * For migration (migdest.c), pure as the above. mg_domain_mdevs: the UUIDs
 * (lower case) of every mdev hostdev of a domain, in order; -EINVAL for XML
 * that is not a domain or an mdev hostdev without a valid UUID, -E2BIG for
 * more than max. mg_domain_set_mdev: the XML with the mdev hostdev naming
 * `from` naming `to` instead (*out malloc()ed; -EINVAL with err if there
 * is none). mg_nodedev_mdev: a libvirt node device's XML -> the UUID and
 * the mdev type id of an mdev (<capability type='mdev'> with <type id=...>
 * and <uuid>); -ENOENT if it is another kind of device, -EINVAL if it is
 * not a node device or lacks either.
 */
int mg_domain_mdevs(const char *xml, char (*uuids)[MG_ID_LEN], size_t max,
		    size_t *n);
int mg_domain_set_mdev(const char *xml, const char *from, const char *to,
		       char **out, char *err, size_t errlen);
int mg_nodedev_mdev(const char *xml, char *uuid, size_t ulen, char *type,
		    size_t tlen);
/*
 * The <gpu .../> element alone, as virDomainGetMetadata() answers (without
 * a namespace, or in ours).
 */
int mg_metadata_parse(const char *xml, struct mg_vm_policy *meta,
		      unsigned int *mask, int *gpu, char *err, size_t errlen);
int mg_metadata_parse_text(const char *xml, struct mg_vm_policy *meta,
			   unsigned int *mask, int *gpu,
			   struct mg_pol_text *txt, char *err, size_t errlen);

#endif /* VGMEM_MGMTD_MGMTD_H */
