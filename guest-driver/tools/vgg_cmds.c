// SPDX-License-Identifier: MIT
/*
 * vgmem-guest commands that behave: info, workload, fill-check,
 * submit-loop, alloc. Each prints "name value" progress lines, fills the
 * RESULT details and returns VGG_OK or VGG_FAIL; it frees whatever it
 * allocated on every path, so a guest that fails leaves no BOs behind.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "vgg.h"

#define MiB		(1ull << 20)
#define PAGE		4096ull
#define CHAN_ENTRIES	64
#define CHAN_STAGING	(256u << 10)
#define BO_DEFAULT	(4 * MiB)
#define ALLOC_BO_MAX	(64 * MiB)
#define SAMPLE		4096u		/* bytes checked per chunk by alloc */
#define SAMPLES_MAX	256u		/* checksums per submission: scratch slots */

/* ---- shared helpers ------------------------------------------------------- */

int vgg_detail(struct vgg_ctx *c, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return ret;
}

void vgg_log(struct vgg_ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(c->out, fmt, ap);
	va_end(ap);
	fputc('\n', c->out);
	fflush(c->out);
}

uint64_t vgg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vgg_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

const char *vgg_chan_error_name(uint32_t e)
{
	static const char *const n[] = {
		"OK", "GPFIFO", "PUSHBUF", "METHOD", "CLASS", "VA", "GUEST_MEM",
		"ARG", "KILLED",
	};

	return e < sizeof(n) / sizeof(n[0]) ? n[e] : "UNKNOWN";
}

int vgg_chan(struct vgg_ctx *c, struct vgmem_chan **ch)
{
	int ret = vgmem_chan_create(c->dev, CHAN_ENTRIES, 0, CHAN_STAGING, ch);

	if (ret)
		vgg_log(c, "error channel-create %d (%s)%s%s", ret, strerror(-ret),
			c->vfio ? ": " : "", c->vfio ? vgmem_vfio_error() : "");
	return ret;
}

int vgg_verify(struct vgmem_chan *ch, uint64_t va, uint64_t bytes, uint32_t seed,
	       uint64_t scratch, uint64_t want, uint64_t *got)
{
	int ret;

	(void)seed;
	*got = 0;
	ret = vgmem_checksum(ch, va, bytes, scratch, got);
	if (ret)
		return ret;
	return *got == want ? 0 : -EILSEQ;
}

/* What went wrong with a channel operation, for the RESULT line. */
static const char *why(struct vgg_ctx *c, struct vgmem_chan *ch, int ret,
		       char *buf, size_t len)
{
	uint64_t addr = 0;
	uint32_t e = ch ? vgmem_chan_error(ch, &addr) : 0;

	if (e)
		snprintf(buf, len, "%d (%s), channel error %u %s at 0x%llx", ret,
			 strerror(-ret), e, vgg_chan_error_name(e),
			 (unsigned long long)addr);
	else
		snprintf(buf, len, "%d (%s)%s%s", ret, strerror(-ret),
			 c->vfio && (ret == -ETIMEDOUT || ret == -EIO) ? ": " : "",
			 c->vfio && (ret == -ETIMEDOUT || ret == -EIO) ?
			 vgmem_vfio_error() : "");
	return buf;
}

int vgg_sanity(struct vgg_ctx *c, const char **whyp)
{
	static char buf[320];
	struct vgmem_chan *ch = NULL;
	uint64_t va = 0, scratch = 0, got;
	char w[256];
	int ret;

	*whyp = "";
	ret = vgg_chan(c, &ch);
	if (ret) {
		snprintf(buf, sizeof(buf), "fresh channel: create: %d (%s)", ret,
			 strerror(-ret));
		*whyp = buf;
		return ret;
	}
	ret = vgmem_bo_alloc(c->dev, PAGE, &scratch);
	if (!ret)
		ret = vgmem_bo_alloc(c->dev, 64 << 10, &va);
	if (!ret)
		ret = vgmem_fill_pattern(ch, va, 64 << 10, 0x5a5a);
	if (!ret)
		ret = vgg_verify(ch, va, 64 << 10, 0x5a5a, scratch,
				 vgmem_pattern_checksum(64 << 10, 0x5a5a), &got);
	if (ret) {
		snprintf(buf, sizeof(buf), "fresh channel: fill and checksum: %s",
			 why(c, ch, ret, w, sizeof(w)));
		*whyp = buf;
	}
	vgmem_chan_destroy(ch);
	if (va)
		vgmem_bo_free(c->dev, va);
	if (scratch)
		vgmem_bo_free(c->dev, scratch);
	return ret;
}

static void print_stats(struct vgg_ctx *c, const char *prefix)
{
	struct vgmem_vm_stats st;

	if (vgmem_stats(c->dev, &st))
		return;
	vgg_log(c, "%sallocated %llu resident %llu relocated %llu reloc_out_chunks %llu reloc_in_chunks %llu suspends %llu faults %llu",
		prefix, (unsigned long long)st.allocated,
		(unsigned long long)st.resident, (unsigned long long)st.relocated,
		(unsigned long long)st.reloc_out_chunks,
		(unsigned long long)st.reloc_in_chunks,
		(unsigned long long)st.suspends, (unsigned long long)st.faults);
}

/* ---- info ------------------------------------------------------------------ */

static void print_hist(struct vgg_ctx *c, const char *name, const __u64 *h)
{
	char line[24 * 21 + 64];
	size_t n = 0;
	int i;

	n += snprintf(line + n, sizeof(line) - n, "%s", name);
	for (i = 0; i < VGMEM_HIST_BUCKETS; i++)
		n += snprintf(line + n, sizeof(line) - n, " %llu",
			      (unsigned long long)h[i]);
	vgg_log(c, "%s", line);
}

/* A line of the VM's stats table: "name value", or a histogram's line. */
static void info_stat(struct vgg_ctx *c, const char *name, int kind,
		      const __u64 *v)
{
	if (kind == VGMEM_STAT_HIST)
		print_hist(c, name, v);
	else
		vgg_log(c, "%s %llu", name, (unsigned long long)*v);
}

/*
 * The VM's shares (VGMEM_CTRL_SHARES), one line each: what a file map may
 * name, and the virtio-fs tag that says which mount it is. A host without
 * the command (an older one) is not an error of info.
 */
static void print_shares(struct vgg_ctx *c)
{
	struct vgmem_share_info s[VGMEM_SHARES_MAX];
	unsigned int total = 0;
	int n, i;

	n = vgmem_shares(c->dev, s, VGMEM_SHARES_MAX, &total);
	if (n < 0) {
		vgg_log(c, "shares unavailable: %d (%s)", n, strerror(-n));
		return;
	}
	vgg_log(c, "shares %u", total);
	for (i = 0; i < n; i++)
		vgg_log(c, "share id=%u ro=%u tag=%s", s[i].id,
			s[i].flags & VGMEM_SHARE_F_RO ? 1 : 0, s[i].tag);
}

int vgg_cmd_info(struct vgg_ctx *c)
{
	struct vgmem_ctrl_query q;
	struct vgmem_vm_stats st;
	struct vgmem_vfio_info vi;
	int ret;

	ret = vgmem_query(c->dev, &q);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "info: QUERY: %d (%s)", ret, strerror(-ret));
	ret = vgmem_stats(c->dev, &st);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "info: STATS: %d (%s)", ret, strerror(-ret));
	vgg_log(c, "transport %s", c->vfio ? "vfio" : "inproc");
	if (c->vfio && !vgmem_vfio_get_info(c->dev, &vi)) {
		vgg_log(c, "pci_id %04x:%04x", vi.vendor, vi.device);
		vgg_log(c, "iommu %s", vi.iommu_type == 3 ? "type1v2" : "type1");
		vgg_log(c, "guest_ram 0x%llx+%llu free %llu",
			(unsigned long long)vi.ram_gpa, (unsigned long long)vi.ram_size,
			(unsigned long long)vi.ram_free);
		vgg_log(c, "ctrlq_entries %u", vi.ctrlq_entries);
		vgg_log(c, "userd %s", vi.userd_mmap ? "mmap" : "read/write");
		vgg_log(c, "irq %s", vi.irq ? "msi-eventfd" : "polled");
	}
	vgg_log(c, "abi_version %u", q.abi_version);
	vgg_log(c, "max_channels %u", q.max_channels);
	vgg_log(c, "quota %llu", (unsigned long long)q.quota);
	vgg_log(c, "chunk_size %llu", (unsigned long long)q.chunk_size);
	vgg_log(c, "va_start 0x%llx", (unsigned long long)q.va_start);
	vgg_log(c, "va_end 0x%llx", (unsigned long long)q.va_end);
	vgg_log(c, "entitlement %llu", (unsigned long long)st.entitlement);
	/* allocated ... faults, in the order of <uapi/vgmem_stats.h> */
#define INFO_STAT(f, attr, kind, ...)				\
	info_stat(c, #f, kind, (const __u64 *)&st.f);
	VGMEM_VM_STATS(INFO_STAT)
#undef INFO_STAT
	print_shares(c);

	if (q.abi_version != VGMEM_ABI_VERSION)
		return vgg_detail(c, VGG_FAIL, "info: ABI version %u, want %u",
				  q.abi_version, VGMEM_ABI_VERSION);
	if (!q.max_channels || q.max_channels > VGMEM_MAX_CHANNELS)
		return vgg_detail(c, VGG_FAIL, "info: max_channels %u", q.max_channels);
	if (q.va_start < VGMEM_VA_START || q.va_end > VGMEM_VA_END ||
	    q.va_start >= q.va_end)
		return vgg_detail(c, VGG_FAIL, "info: VA range 0x%llx-0x%llx",
				  (unsigned long long)q.va_start,
				  (unsigned long long)q.va_end);
	if (q.chunk_size < PAGE || (q.chunk_size & (q.chunk_size - 1)))
		return vgg_detail(c, VGG_FAIL, "info: chunk_size %llu",
				  (unsigned long long)q.chunk_size);
	return vgg_detail(c, VGG_OK, "info abi=%u channels=%u quota=%llu chunk=%llu allocated=%llu resident=%llu relocated=%llu",
			  q.abi_version, q.max_channels, (unsigned long long)q.quota,
			  (unsigned long long)q.chunk_size,
			  (unsigned long long)st.allocated,
			  (unsigned long long)st.resident,
			  (unsigned long long)st.relocated);
}

/* ---- workload ---------------------------------------------------------------- */

int vgg_cmd_workload(struct vgg_ctx *c)
{
	const struct vgg_opts *o = c->o;
	const char *name = vgmem_workload_name((enum vgmem_workload)o->kind);
	uint64_t bo = o->bo ? o->bo : (o->ws < BO_DEFAULT ? o->ws : BO_DEFAULT);
	struct vgmem_chan *ch;
	uint64_t t0, ms;
	char w[256];
	int ret;

	ret = vgg_chan(c, &ch);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "workload %s: channel: %d (%s)", name, ret,
				  strerror(-ret));
	vgg_log(c, "workload %s ws %llu bo %llu iters %u seed %llu", name,
		(unsigned long long)o->ws, (unsigned long long)bo, o->iters,
		(unsigned long long)o->seed);
	t0 = vgg_now_ns();
	ret = vgmem_workload_run(c->dev, ch, (enum vgmem_workload)o->kind, o->ws, bo,
				 o->iters, o->seed);
	ms = (vgg_now_ns() - t0) / 1000000;
	if (ret) {
		why(c, ch, ret, w, sizeof(w));
		vgmem_chan_destroy(ch);
		return vgg_detail(c, VGG_FAIL, "workload %s ws=%llu: %s", name,
				  (unsigned long long)o->ws, w);
	}
	print_stats(c, "");
	vgmem_chan_destroy(ch);
	return vgg_detail(c, VGG_OK, "workload %s ws=%llu iters=%u ms=%llu", name,
			  (unsigned long long)o->ws, o->iters, (unsigned long long)ms);
}

/* ---- BO sets shared by fill-check and alloc ---------------------------------- */

struct boset {
	uint32_t n;
	uint64_t *va, *size;
	uint32_t *seed;
	uint64_t *want;		/* expected checksum of the whole BO */
	uint64_t scratch;
};

static void boset_free(struct vgg_ctx *c, struct boset *s)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		vgmem_bo_free(c->dev, s->va[i]);
	if (s->scratch)
		vgmem_bo_free(c->dev, s->scratch);
	free(s->va);
	free(s->size);
	free(s->seed);
	free(s->want);
	memset(s, 0, sizeof(*s));
}

static int boset_alloc(struct vgg_ctx *c, struct boset *s, uint64_t total, uint64_t bo,
		       const char *cmd)
{
	uint64_t nr, left;
	uint32_t i;
	int ret;

	memset(s, 0, sizeof(*s));
	total = (total + PAGE - 1) & ~(PAGE - 1);
	bo = (bo + PAGE - 1) & ~(PAGE - 1);
	nr = (total + bo - 1) / bo;
	if (nr > (1u << 20))
		return vgg_detail(c, VGG_FAIL, "%s: %llu BOs are too many", cmd,
				  (unsigned long long)nr);
	s->va = calloc(nr, sizeof(*s->va));
	s->size = calloc(nr, sizeof(*s->size));
	s->seed = calloc(nr, sizeof(*s->seed));
	s->want = calloc(nr, sizeof(*s->want));
	if (!s->va || !s->size || !s->seed || !s->want) {
		boset_free(c, s);
		return vgg_detail(c, VGG_FAIL, "%s: out of memory", cmd);
	}
	ret = vgmem_bo_alloc(c->dev, PAGE, &s->scratch);
	if (ret) {
		s->scratch = 0;
		boset_free(c, s);
		return vgg_detail(c, VGG_FAIL, "%s: BO_ALLOC of the scratch page: %d (%s)",
				  cmd, ret, strerror(-ret));
	}
	left = total;
	for (i = 0; i < nr; i++) {
		s->size[i] = left < bo ? left : bo;
		ret = vgmem_bo_alloc(c->dev, s->size[i], &s->va[i]);
		if (ret) {
			vgg_detail(c, VGG_FAIL, "%s: BO_ALLOC %u of %llu (%llu bytes): %d (%s)",
				   cmd, i, (unsigned long long)nr,
				   (unsigned long long)s->size[i], ret, strerror(-ret));
			boset_free(c, s);
			return VGG_FAIL;
		}
		s->n++;
		left -= s->size[i];
	}
	vgg_log(c, "allocated %llu bytes in %u BOs", (unsigned long long)total, s->n);
	return VGG_OK;
}

/* ---- fill-check ---------------------------------------------------------------- */

static int verify_all(struct vgg_ctx *c, struct vgmem_chan *ch, struct boset *s,
		      const char *when)
{
	uint64_t got;
	char w[256];
	uint32_t i;
	int ret;

	for (i = 0; i < s->n; i++) {
		ret = vgg_verify(ch, s->va[i], s->size[i], s->seed[i], s->scratch,
				 s->want[i], &got);
		if (ret == -EILSEQ)
			return vgg_detail(c, VGG_FAIL, "fill-check: %s: BO %u at 0x%llx: checksum 0x%016llx, want 0x%016llx",
					  when, i, (unsigned long long)s->va[i],
					  (unsigned long long)got,
					  (unsigned long long)s->want[i]);
		if (ret)
			return vgg_detail(c, VGG_FAIL, "fill-check: %s: BO %u: %s", when, i,
					  why(c, ch, ret, w, sizeof(w)));
	}
	return VGG_OK;
}

static volatile sig_atomic_t hold_stop;

static void hold_on_stop(int sig)
{
	(void)sig;
	hold_stop = 1;
}

/*
 * A hold (fill-check's and alloc's) lasts SECONDS, or until SIGTERM or
 * SIGINT, after which the BOs are still checked and freed: a harness ends
 * a workload whose lifetime it cannot know in advance (another VM's run,
 * a live migration) and still learns whether its bytes survived. Between
 * hold_begin and hold_end the signals set hold_stop; the harness may
 * signal once it has seen the "hold ready" line.
 */
static void hold_begin(struct vgg_ctx *c, double seconds,
		       struct sigaction old[2])
{
	const int sigs[] = { SIGTERM, SIGINT };
	struct sigaction sa;
	unsigned int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = hold_on_stop;
	sa.sa_flags = SA_RESTART;	/* the checks under way go on */
	sigemptyset(&sa.sa_mask);
	hold_stop = 0;
	for (i = 0; i < 2; i++)
		sigaction(sigs[i], &sa, &old[i]);
	vgg_log(c, "hold ready %.1f s", seconds);
}

static void hold_end(const struct sigaction old[2])
{
	sigaction(SIGTERM, &old[0], NULL);
	sigaction(SIGINT, &old[1], NULL);
}

/* alloc's hold: idle. Returns true when a signal ended it. */
static bool alloc_hold(struct vgg_ctx *c, double seconds)
{
	uint64_t end = vgg_now_ns() + (uint64_t)(seconds * 1e9);
	struct sigaction old[2];

	hold_begin(c, seconds, old);
	while (!hold_stop && vgg_now_ns() < end)
		vgg_sleep_ns(10000000ull);
	hold_end(old);
	return hold_stop;
}

int vgg_cmd_fill_check(struct vgg_ctx *c)
{
	const struct vgg_opts *o = c->o;
	uint64_t bo = o->bo ? o->bo : (o->size < BO_DEFAULT ? o->size : BO_DEFAULT);
	uint64_t t_end, last_log, rounds = 0, checks = 0;
	struct vgmem_chan *ch;
	struct boset s;
	char w[256], when[64];
	uint32_t l, i;
	int ret;

	ret = vgg_chan(c, &ch);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "fill-check: channel: %d (%s)", ret,
				  strerror(-ret));
	ret = boset_alloc(c, &s, o->size, bo, "fill-check");
	if (ret)
		goto out_chan;
	for (l = 0; l < o->loops; l++) {
		for (i = 0; i < s.n; i++) {
			s.seed[i] = (uint32_t)(o->seed + (uint64_t)l * 1000003u + i);
			ret = vgmem_fill_pattern(ch, s.va[i], s.size[i], s.seed[i]);
			if (ret) {
				ret = vgg_detail(c, VGG_FAIL, "fill-check: loop %u: fill BO %u: %s",
						 l, i, why(c, ch, ret, w, sizeof(w)));
				goto out_free;
			}
			/* BOs of one size share a seed pattern's prefix cost only. */
			s.want[i] = vgmem_pattern_checksum(s.size[i], s.seed[i]);
		}
		snprintf(when, sizeof(when), "loop %u", l);
		ret = verify_all(c, ch, &s, when);
		if (ret)
			goto out_free;
		checks += s.n;
		vgg_log(c, "loop %u ok", l);
	}
	if (o->hold > 0) {
		struct sigaction old[2];

		t_end = vgg_now_ns() + (uint64_t)(o->hold * 1e9);
		last_log = vgg_now_ns();
		hold_begin(c, o->hold, old);
		while (!hold_stop && vgg_now_ns() < t_end) {
			snprintf(when, sizeof(when), "hold round %llu",
				 (unsigned long long)rounds);
			ret = verify_all(c, ch, &s, when);
			if (ret)
				goto out_free;
			rounds++;
			checks += s.n;
			if (vgg_now_ns() - last_log >= 1000000000ull) {
				vgg_log(c, "hold round %llu ok", (unsigned long long)rounds);
				last_log = vgg_now_ns();
			}
		}
		hold_end(old);
		if (hold_stop)
			vgg_log(c, "hold ended early by a signal after %llu rounds",
				(unsigned long long)rounds);
	}
	print_stats(c, "");
	ret = vgg_detail(c, VGG_OK, "fill-check size=%llu bos=%u loops=%u hold_rounds=%llu checks=%llu",
			 (unsigned long long)o->size, s.n, o->loops,
			 (unsigned long long)rounds, (unsigned long long)checks);
out_free:
	/* The GPU is idle: every operation above waited for completion. */
	boset_free(c, &s);
out_chan:
	vgmem_chan_destroy(ch);
	return ret;
}

/* ---- submit-loop -------------------------------------------------------------- */

static void queue_sem(struct vgmem_chan *ch, uint64_t va, uint32_t payload, uint32_t op)
{
	uint32_t d[4] = { (uint32_t)(va >> 32) & 0xff, (uint32_t)va, payload, op };

	vgmem_pb_inc(ch, 0, VGMEM_MTHD_SEMAPHORE_A, d, 4);
}

int vgg_cmd_submit_loop(struct vgg_ctx *c)
{
	const struct vgg_opts *o = c->o;
	uint64_t sem = 0, seq, t0, ms, last_log;
	uint32_t i, done, prev_done, val = 0;
	struct vgmem_chan *ch;
	char w[256];
	int ret;

	ret = vgg_chan(c, &ch);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "submit-loop: channel: %d (%s)", ret,
				  strerror(-ret));
	ret = vgmem_bo_alloc(c->dev, PAGE, &sem);
	if (ret) {
		sem = 0;
		ret = vgg_detail(c, VGG_FAIL, "submit-loop: BO_ALLOC: %d (%s)", ret,
				 strerror(-ret));
		goto out;
	}
	ret = vgmem_memset(ch, sem, PAGE, 0);
	if (ret) {
		ret = vgg_detail(c, VGG_FAIL, "submit-loop: clearing the semaphore: %s",
				 why(c, ch, ret, w, sizeof(w)));
		goto out;
	}
	prev_done = vgmem_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE);
	t0 = last_log = vgg_now_ns();
	for (i = 1; i <= o->count; i++) {
		/* Entry i can only finish after entry i - 1 released i - 1. */
		queue_sem(ch, sem, i - 1, VGMEM_SEM_OP_ACQUIRE);
		queue_sem(ch, sem, i, VGMEM_SEM_OP_RELEASE);
		ret = vgmem_submit(ch, &seq);
		if (ret) {
			ret = vgg_detail(c, VGG_FAIL, "submit-loop: submit %u: %s", i,
					 why(c, ch, ret, w, sizeof(w)));
			goto out;
		}
		done = vgmem_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE);
		if ((uint32_t)(done - prev_done) > (1u << 31) ||
		    (uint32_t)((uint32_t)seq - done) > (1u << 31)) {
			ret = vgg_detail(c, VGG_FAIL, "submit-loop: ENTRIES_DONE went from %u to %u with %llu submitted",
					 prev_done, done, (unsigned long long)seq);
			goto out;
		}
		prev_done = done;
		if (vgg_now_ns() - last_log >= 1000000000ull) {
			vgg_log(c, "submitted %u done %u", i, done);
			last_log = vgg_now_ns();
		}
	}
	ret = vgmem_finish(ch);
	if (ret) {
		ret = vgg_detail(c, VGG_FAIL, "submit-loop: waiting for the last entry: %s",
				 why(c, ch, ret, w, sizeof(w)));
		goto out;
	}
	ms = (vgg_now_ns() - t0) / 1000000;
	done = vgmem_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE);
	if (done != (uint32_t)vgmem_chan_submitted(ch)) {
		ret = vgg_detail(c, VGG_FAIL, "submit-loop: ENTRIES_DONE %u after all %llu entries completed",
				 done, (unsigned long long)vgmem_chan_submitted(ch));
		goto out;
	}
	ret = vgmem_read(ch, sem, &val, sizeof(val));
	if (ret || val != o->count) {
		ret = ret ? vgg_detail(c, VGG_FAIL, "submit-loop: reading the semaphore: %s",
				       why(c, ch, ret, w, sizeof(w))) :
			vgg_detail(c, VGG_FAIL, "submit-loop: semaphore %u, want %u", val,
				   o->count);
		goto out;
	}
	ret = vgg_detail(c, VGG_OK, "submit-loop count=%u ms=%llu per_entry_us=%llu",
			 o->count, (unsigned long long)ms,
			 (unsigned long long)(ms * 1000 / o->count));
out:
	vgmem_chan_destroy(ch);
	if (sem)
		vgmem_bo_free(c->dev, sem);
	return ret;
}

/* ---- alloc ------------------------------------------------------------------- */

/* FNV-1a of the pattern's bytes [off, off + len), off a multiple of 4. */
static uint64_t pattern_fnv_at(uint32_t seed, uint64_t off, uint32_t len)
{
	uint64_t h = VGMEM_FNV1A_OFFSET;
	uint32_t i, w;
	unsigned int b;

	for (i = 0; i < len / 4; i++) {
		w = vgmem_pattern_word(seed, off / 4 + i);
		for (b = 0; b < 4; b++) {
			h ^= (w >> (8 * b)) & 0xff;
			h *= VGMEM_FNV1A_PRIME;
		}
	}
	return h;
}

struct sample {
	uint32_t bo;
	uint64_t off;
};

/* Check the samples in batches: one checksum kernel each, results in scratch. */
static int check_samples(struct vgg_ctx *c, struct vgmem_chan *ch, struct boset *s,
			 const struct sample *smp, uint32_t n)
{
	uint64_t got[SAMPLES_MAX], res;
	uint32_t a[VGMEM_CP_NARGS], i, k, b;
	char w[256];
	int ret;

	for (b = 0; b < n; b += SAMPLES_MAX) {
		k = n - b < SAMPLES_MAX ? n - b : SAMPLES_MAX;
		for (i = 0; i < k; i++) {
			uint64_t va = s->va[smp[b + i].bo] + smp[b + i].off;

			res = s->scratch + 8ull * i;
			a[0] = (uint32_t)va;
			a[1] = (uint32_t)(va >> 32);
			a[2] = SAMPLE;
			a[3] = 0;
			a[4] = (uint32_t)res;
			a[5] = (uint32_t)(res >> 32);
			a[6] = a[7] = 0;
			vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_KERNEL,
				     (const uint32_t[]){ VGMEM_K_CHECKSUM }, 1);
			vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_ARG(0), a,
				     VGMEM_CP_NARGS);
			vgmem_pb_immd(ch, VGMEM_SUBC_COMPUTE, VGMEM_CP_LAUNCH, 0);
			if (i % 32 == 31) {
				ret = vgmem_submit(ch, NULL);
				if (ret)
					goto err;
			}
		}
		ret = vgmem_finish(ch);
		if (!ret)
			ret = vgmem_read(ch, s->scratch, got, 8ull * k);
		if (ret)
			goto err;
		for (i = 0; i < k; i++) {
			const struct sample *p = &smp[b + i];
			uint64_t want = pattern_fnv_at(s->seed[p->bo], p->off, SAMPLE);

			if (got[i] != want)
				return vgg_detail(c, VGG_FAIL, "alloc: BO %u at 0x%llx offset %llu: checksum 0x%016llx, want 0x%016llx",
						  p->bo, (unsigned long long)s->va[p->bo],
						  (unsigned long long)p->off,
						  (unsigned long long)got[i],
						  (unsigned long long)want);
		}
	}
	return VGG_OK;
err:
	return vgg_detail(c, VGG_FAIL, "alloc: checking samples: %s",
			  why(c, ch, ret, w, sizeof(w)));
}

int vgg_cmd_alloc(struct vgg_ctx *c)
{
	const struct vgg_opts *o = c->o;
	uint64_t bo = o->bo ? o->bo : (o->size < ALLOC_BO_MAX ? o->size : ALLOC_BO_MAX);
	struct vgmem_ctrl_query q;
	struct vgmem_vm_stats st;
	struct sample *smp = NULL;
	struct vgmem_chan *ch;
	uint64_t chunk, off, nsmp = 0, t0;
	struct boset s;
	char w[256];
	uint32_t i;
	int ret;

	ret = vgmem_query(c->dev, &q);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "alloc: QUERY: %d (%s)", ret, strerror(-ret));
	chunk = q.chunk_size >= PAGE ? q.chunk_size : 2 * MiB;
	ret = vgg_chan(c, &ch);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "alloc: channel: %d (%s)", ret,
				  strerror(-ret));
	ret = boset_alloc(c, &s, o->size, bo, "alloc");
	if (ret)
		goto out_chan;
	/* Touch: a pattern, so a chunk that came back wrong shows. */
	for (i = 0; i < s.n; i++) {
		s.seed[i] = (uint32_t)(0xa110c000u + i);
		ret = vgmem_fill_pattern(ch, s.va[i], s.size[i], s.seed[i]);
		if (ret) {
			ret = vgg_detail(c, VGG_FAIL, "alloc: fill BO %u: %s", i,
					 why(c, ch, ret, w, sizeof(w)));
			goto out_free;
		}
		nsmp += (s.size[i] + chunk - 1) / chunk;
	}
	print_stats(c, "before_hold ");
	t0 = vgg_now_ns();
	if (o->hold > 0 && alloc_hold(c, o->hold))
		vgg_log(c, "hold ended early by a signal after %.1f s",
			(double)(vgg_now_ns() - t0) / 1e9);
	print_stats(c, "after_hold ");

	/* One page per chunk, at an offset that moves from chunk to chunk. */
	smp = calloc(nsmp, sizeof(*smp));
	if (!smp) {
		ret = vgg_detail(c, VGG_FAIL, "alloc: out of memory");
		goto out_free;
	}
	nsmp = 0;
	for (i = 0; i < s.n; i++) {
		for (off = 0; off < s.size[i]; off += chunk) {
			uint64_t in = ((nsmp * 7919) % (chunk / PAGE)) * PAGE;

			if (off + in + SAMPLE > s.size[i])
				in = s.size[i] - off > SAMPLE ? s.size[i] - off - SAMPLE : 0;
			smp[nsmp].bo = i;
			smp[nsmp].off = (off + in) & ~3ull;
			nsmp++;
		}
	}
	ret = check_samples(c, ch, &s, smp, (uint32_t)nsmp);
	if (ret)
		goto out_free;
	if (vgmem_stats(c->dev, &st))
		memset(&st, 0, sizeof(st));
	ret = vgg_detail(c, VGG_OK, "alloc size=%llu bos=%u held_ms=%llu samples=%llu resident=%llu relocated=%llu",
			 (unsigned long long)o->size, s.n,
			 (unsigned long long)((vgg_now_ns() - t0) / 1000000),
			 (unsigned long long)nsmp, (unsigned long long)st.resident,
			 (unsigned long long)st.relocated);
out_free:
	free(smp);
	boset_free(c, &s);
out_chan:
	vgmem_chan_destroy(ch);
	return ret;
}

/* ---- share ------------------------------------------------------------------ */

int vgg_cmd_share(struct vgg_ctx *c)
{
	const struct vgg_opts *o = c->o;
	int ret;

	if (o->share_bind)
		ret = vgmem_pci_share_bind(c->dev, o->tag, o->dir);
	else
		ret = vgmem_pci_share_unbind(c->dev, o->tag);
	if (ret) {
		fprintf(c->err, "vgmem-guest: %s\n", vgmem_pci_error());
		return vgg_detail(c, VGG_FAIL, "share %s %s: %d %s", o->share_bind ?
				  "bind" : "unbind", o->tag, ret, vgmem_pci_error());
	}
	if (o->share_bind)
		return vgg_detail(c, VGG_OK, "share bind tag=%s dir=%s", o->tag, o->dir);
	return vgg_detail(c, VGG_OK, "share unbind tag=%s", o->tag);
}
