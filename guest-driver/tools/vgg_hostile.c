// SPDX-License-Identifier: MIT
/*
 * vgmem-guest hostile KIND: a guest doing what docs/abi.md forbids. Each
 * kind does the bad thing, checks the device answered with exactly the
 * documented error (a channel error code in USERD for what the GPU runs,
 * a negative errno for control commands, CTRLQ_ERROR for a broken control
 * queue), and then that a fresh channel of the same guest still works:
 * the damage stays confined to what the guest broke.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "vgg.h"

#define PAGE		4096ull
#define ERR_WAIT_NS	(20ull * 1000000000ull)
#define FAULT_WAIT_NS	(2ull * 1000000000ull)
#define WILD_VA		(VGMEM_VA_END - (16ull << 20))
#define FAR_GPA		0xff00000000ull	/* 1020 GiB: no guest has that much */

/* Wait until the channel reports an error (or ERR_WAIT_NS pass). */
static uint32_t wait_error(struct vgmem_chan *ch, uint64_t *addr)
{
	uint64_t start = vgg_now_ns();
	uint32_t e;

	for (;;) {
		e = vgmem_chan_error(ch, addr);
		if (e || vgg_now_ns() - start > ERR_WAIT_NS)
			return e;
		vgg_sleep_ns(200000);
	}
}

/*
 * With VFIO the device also flags the channel in FAULTED_LO/HI (set from
 * the GPU's thread, so maybe a moment after USERD); acknowledge it.
 */
static int check_faulted(struct vgg_ctx *c, uint32_t id, char *msg, size_t len)
{
	uint32_t reg = id < 32 ? VGMEM_REG_FAULTED_LO : VGMEM_REG_FAULTED_HI;
	uint32_t bit = 1u << (id % 32), val = 0;
	uint64_t start = vgg_now_ns();
	int ret;

	if (!c->vfio)
		return 0;
	for (;;) {
		ret = vgmem_vfio_reg_read(c->dev, reg, &val);
		if (ret) {
			snprintf(msg, len, "reading FAULTED: %d (%s)", ret, strerror(-ret));
			return -1;
		}
		if (val & bit)
			break;
		if (vgg_now_ns() - start > FAULT_WAIT_NS) {
			snprintf(msg, len, "channel %u faulted but FAULTED_%s is 0x%08x",
				 id, id < 32 ? "LO" : "HI", val);
			return -1;
		}
		vgg_sleep_ns(1000000);
	}
	vgmem_vfio_reg_write(c->dev, reg, bit);
	vgmem_vfio_reg_write(c->dev, VGMEM_REG_IRQ_CAUSE, VGMEM_IRQ_CHAN_FAULT);
	return 0;
}

/*
 * One channel-fault case: a fresh channel, the bad thing, the expected
 * error code. Returns VGG_OK or VGG_FAIL with the detail set.
 */
struct chan_case {
	const char *name;
	uint32_t want;
	int (*act)(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild);
};

static int run_chan_case(struct vgg_ctx *c, const struct chan_case *k, char *log,
			 size_t loglen)
{
	struct vgmem_chan *ch;
	uint64_t addr = 0, wild = 0;
	char msg[160];
	uint32_t e, id;
	int ret;

	ret = vgg_chan(c, &ch);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "%s: channel: %d (%s)", k->name, ret,
				  strerror(-ret));
	id = vgmem_chan_id(ch);
	ret = k->act(c, ch, &wild);
	/* The act's own wait saw the error (-EIO) or nothing yet (0). */
	if (ret && ret != -EIO) {
		vgmem_chan_destroy(ch);
		return vgg_detail(c, VGG_FAIL, "%s: expected a channel error, the call returned %d (%s)",
				  k->name, ret, strerror(-ret));
	}
	e = wait_error(ch, &addr);
	if (e != k->want) {
		vgmem_chan_destroy(ch);
		return vgg_detail(c, VGG_FAIL, "%s: channel error %u (%s), want %u (%s)",
				  k->name, e, vgg_chan_error_name(e), k->want,
				  vgg_chan_error_name(k->want));
	}
	if (wild && (addr < wild || addr >= wild + PAGE)) {
		vgmem_chan_destroy(ch);
		return vgg_detail(c, VGG_FAIL, "%s: fault address 0x%llx, want 0x%llx",
				  k->name, (unsigned long long)addr,
				  (unsigned long long)wild);
	}
	/* Sticky: a later submission on it must fail, not run. */
	vgmem_pb_immd(ch, 0, VGMEM_MTHD_NOP, 0);
	ret = vgmem_submit(ch, NULL);
	if (ret != -EIO) {
		vgmem_chan_destroy(ch);
		return vgg_detail(c, VGG_FAIL, "%s: submission on the faulted channel returned %d",
				  k->name, ret);
	}
	if (check_faulted(c, id, msg, sizeof(msg))) {
		vgmem_chan_destroy(ch);
		return vgg_detail(c, VGG_FAIL, "%s: %s", k->name, msg);
	}
	vgmem_chan_destroy(ch);
	vgg_log(c, "case %s: channel error %u %s at 0x%llx", k->name, e,
		vgg_chan_error_name(e), (unsigned long long)addr);
	snprintf(log + strlen(log), loglen - strlen(log), "%s%s=%s",
		 log[0] ? "," : "", k->name, vgg_chan_error_name(e));
	return VGG_OK;
}

static int run_cases(struct vgg_ctx *c, const struct chan_case *k, unsigned int n,
		     const char *kind)
{
	char log[256] = "";
	const char *why;
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = run_chan_case(c, &k[i], log, sizeof(log));
		if (ret)
			return ret;
	}
	if (vgg_sanity(c, &why))
		return vgg_detail(c, VGG_FAIL, "hostile %s: after %s: %s", kind, log, why);
	return vgg_detail(c, VGG_OK, "hostile %s %s; fresh channel ok", kind, log);
}

/* ---- wild-va ------------------------------------------------------------------ */

static int act_wild_kernel(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	(void)c;
	*wild = WILD_VA;
	return vgmem_memset(ch, WILD_VA, PAGE, 0xdeadbeef);
}

static int act_wild_copy(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	uint32_t buf[16];

	(void)c;
	*wild = WILD_VA + PAGE;
	return vgmem_read(ch, WILD_VA + PAGE, buf, sizeof(buf));
}

static int act_wild_sem(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	uint64_t va = WILD_VA + 2 * PAGE;
	uint32_t d[4] = { (uint32_t)(va >> 32) & 0xff, (uint32_t)va, 1,
			  VGMEM_SEM_OP_RELEASE };

	(void)c;
	*wild = va;
	vgmem_pb_inc(ch, 0, VGMEM_MTHD_SEMAPHORE_A, d, 4);
	return vgmem_finish(ch);
}

/* ---- bad-entry ------------------------------------------------------------------ */

static int submit_wait(struct vgmem_chan *ch, uint64_t entry)
{
	uint64_t seq;
	int ret = vgmem_submit_entry(ch, entry, &seq);

	return ret ? ret : vgmem_wait(ch, seq, ERR_WAIT_NS);
}

static int act_entry_rsvd(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	(void)c;
	(void)wild;
	return submit_wait(ch, VGMEM_GP_ENTRY(VGMEM_VFIO_GPA_BASE, 1) | (1ull << 63));
}

static int act_entry_subroutine(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	(void)c;
	(void)wild;
	return submit_wait(ch, VGMEM_GP_ENTRY(VGMEM_VFIO_GPA_BASE, 1) | (0x200ull << 32));
}

static int act_entry_zero_len(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	(void)c;
	(void)wild;
	return submit_wait(ch, VGMEM_GP_ENTRY(VGMEM_VFIO_GPA_BASE, 0));
}

static int act_entry_far_pb(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	(void)c;
	(void)wild;
	return submit_wait(ch, VGMEM_GP_ENTRY(FAR_GPA, 16));
}

static int act_gp_put_range(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	(void)c;
	(void)wild;
	/* The ring has 64 entries: 1000 is past its end. */
	vgmem_chan_userd_write(ch, VGMEM_USERD_GP_PUT, 1000);
	return 0;
}

/* ---- bad-method ------------------------------------------------------------------ */

static int act_unknown_method(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	uint32_t d = 1;

	(void)c;
	(void)wild;
	vgmem_pb_inc(ch, VGMEM_SUBC_COMPUTE, 0x1234, &d, 1);
	return vgmem_finish(ch);
}

static int act_bad_header(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	uint32_t d[2] = { VGMEM_PKHDR(7, 0, VGMEM_MTHD_NOP, 1), 0 };

	(void)c;
	(void)wild;
	vgmem_pb_raw(ch, d, 2);
	return vgmem_finish(ch);
}

static int act_past_end(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	/* Says 100 data dwords follow; the entry ends after 2. */
	uint32_t d[2] = { VGMEM_PKHDR(VGMEM_PKHDR_INC, 0, VGMEM_MTHD_NOP, 100), 0 };

	(void)c;
	(void)wild;
	vgmem_pb_raw(ch, d, 2);
	return vgmem_finish(ch);
}

static int act_unbound_subc(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	uint32_t d = 1;

	(void)c;
	(void)wild;
	vgmem_pb_inc(ch, 6, VGMEM_CE_LAUNCH_DMA, &d, 1);
	return vgmem_finish(ch);
}

static int act_unknown_class(struct vgg_ctx *c, struct vgmem_chan *ch, uint64_t *wild)
{
	uint32_t cls = 0x0000c0deu;

	(void)c;
	(void)wild;
	vgmem_pb_inc(ch, 5, VGMEM_MTHD_SET_OBJECT, &cls, 1);
	return vgmem_finish(ch);
}

static const struct chan_case wild_cases[] = {
	{ "kernel", VGMEM_CHAN_ERR_VA, act_wild_kernel },
	{ "copy", VGMEM_CHAN_ERR_VA, act_wild_copy },
	{ "semaphore", VGMEM_CHAN_ERR_VA, act_wild_sem },
};

static const struct chan_case entry_cases[] = {
	{ "reserved-bit", VGMEM_CHAN_ERR_GPFIFO, act_entry_rsvd },
	{ "subroutine", VGMEM_CHAN_ERR_GPFIFO, act_entry_subroutine },
	{ "zero-length", VGMEM_CHAN_ERR_GPFIFO, act_entry_zero_len },
	{ "gp-put-range", VGMEM_CHAN_ERR_GPFIFO, act_gp_put_range },
	{ "pushbuf-outside", VGMEM_CHAN_ERR_PUSHBUF, act_entry_far_pb },
};

static const struct chan_case method_cases[] = {
	{ "unknown-method", VGMEM_CHAN_ERR_METHOD, act_unknown_method },
	{ "bad-header", VGMEM_CHAN_ERR_METHOD, act_bad_header },
	{ "past-end", VGMEM_CHAN_ERR_METHOD, act_past_end },
	{ "unbound-subchannel", VGMEM_CHAN_ERR_CLASS, act_unbound_subc },
	{ "unknown-class", VGMEM_CHAN_ERR_CLASS, act_unknown_class },
};

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- bad-ctrl --------------------------------------------------------------------- */

struct ctrl_case {
	const char *name;
	struct vgmem_ctrl cmd;
	int want;
};

static int snap_same(const struct vgmem_vm_stats *a, const struct vgmem_vm_stats *b)
{
	return a->allocated == b->allocated && a->quota == b->quota &&
	       a->resident + a->relocated == b->resident + b->relocated;
}

static int ctrl_cases(struct vgg_ctx *c, struct ctrl_case *k, unsigned int n,
		      const char *kind)
{
	struct vgmem_ctrl cmd;
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		cmd = k[i].cmd;
		ret = vgmem_ctrl(c->dev, &cmd);
		if (ret != k[i].want)
			return vgg_detail(c, VGG_FAIL, "hostile %s: %s: got %d (%s), want %d (%s)",
					  kind, k[i].name, ret, strerror(-ret), k[i].want,
					  strerror(-k[i].want));
		vgg_log(c, "case %s: %d (%s)", k[i].name, ret, strerror(-ret));
	}
	return VGG_OK;
}

static int ctrlq_checks(struct vgg_ctx *c)
{
	struct vgmem_vfio_info vi;
	struct vgmem_ctrl b[3];
	uint32_t status = 0;
	int32_t qerr = 0;
	int ret;

	if (!c->vfio || vgmem_vfio_get_info(c->dev, &vi))
		return VGG_OK;
	/* A doorbell more than a ring ahead of CONSUMER stops the queue. */
	ret = vgmem_vfio_ctrlq_bad_producer(c->dev, vi.ctrlq_entries + 1, &status, &qerr);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: producer-ahead: re-arming the queue: %d (%s): %s",
				  ret, strerror(-ret), vgmem_vfio_error());
	if (!(status & VGMEM_STATUS_CTRLQ_ERROR) || qerr != -EINVAL)
		return vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: producer-ahead: STATUS 0x%x CTRLQ_ERROR %d, want the error bit and %d",
				  status, qerr, -EINVAL);
	vgg_log(c, "case producer-ahead: STATUS 0x%x CTRLQ_ERROR %d", status, qerr);
	/* Good and bad commands in one batch: each gets its own answer. */
	memset(b, 0, sizeof(b));
	b[0].op = VGMEM_CTRL_QUERY;
	b[1].op = 0x7777;
	b[2].op = VGMEM_CTRL_QUERY;
	ret = vgmem_vfio_ctrl_batch(c->dev, b, 3);
	if (ret || b[0].status || b[1].status != -EINVAL || b[2].status ||
	    b[0].query.abi_version != VGMEM_ABI_VERSION ||
	    b[2].query.abi_version != VGMEM_ABI_VERSION)
		return vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: mixed batch: %d, statuses %d %d %d",
				  ret, b[0].status, b[1].status, b[2].status);
	vgg_log(c, "case mixed-batch: statuses 0 -EINVAL 0");
	return VGG_OK;
}

static int hostile_bad_ctrl(struct vgg_ctx *c)
{
	struct vgmem_vm_stats before, after;
	struct vgmem_ctrl_query q;
	struct vgmem_chan *ch;
	struct ctrl_case k[24];
	uint64_t fixed;
	const char *why;
	unsigned int n = 0;
	int ret;

	ret = vgmem_query(c->dev, &q);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: QUERY: %d", ret);
	ret = vgg_chan(c, &ch);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: channel: %d", ret);
	fixed = q.va_start + (64ull << 20);
	ret = vgmem_bo_alloc_at(c->dev, 2ull << 20, fixed);
	if (ret) {
		vgmem_chan_destroy(ch);
		return vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: BO at 0x%llx: %d",
				  (unsigned long long)fixed, ret);
	}
	memset(k, 0, sizeof(k));
#define CASE(nm, w)	(k[n].name = (nm), k[n].want = (w), &k[n++].cmd)
	CASE("op-zero", -EINVAL)->op = 0;
	CASE("op-max", -EINVAL)->op = VGMEM_CTRL_OP_MAX;
	CASE("op-huge", -EINVAL)->op = 0xffffffffu;
	{
		struct vgmem_ctrl *x = CASE("query-tail", -EINVAL);

		x->op = VGMEM_CTRL_QUERY;
		x->raw[sizeof(struct vgmem_ctrl_query)] = 1;
	}
	{
		struct vgmem_ctrl *x = CASE("bo-tail", -EINVAL);

		/* Reserved bytes past the op's fields, at the very end. */
		x->op = VGMEM_CTRL_BO_ALLOC;
		x->bo.size = 4096;
		x->raw[sizeof(x->raw) - 1] = 0x80;
	}
	CASE("bo-size-zero", -EINVAL)->op = VGMEM_CTRL_BO_ALLOC;
	{
		struct vgmem_ctrl *x = CASE("bo-size-odd", -EINVAL);

		x->op = VGMEM_CTRL_BO_ALLOC;
		x->bo.size = 4097;
	}
	{
		struct vgmem_ctrl *x = CASE("bo-size-huge", -EINVAL);

		x->op = VGMEM_CTRL_BO_ALLOC;
		x->bo.size = ~0ull & ~4095ull;
	}
	{
		struct vgmem_ctrl *x = CASE("bo-flags", -EINVAL);

		x->op = VGMEM_CTRL_BO_ALLOC;
		x->bo.size = 4096;
		x->bo.flags = 2;
	}
	{
		struct vgmem_ctrl *x = CASE("bo-rsvd", -EINVAL);

		x->op = VGMEM_CTRL_BO_ALLOC;
		x->bo.size = 4096;
		x->bo.rsvd = 1;
	}
	{
		struct vgmem_ctrl *x = CASE("bo-va-unaligned", -EINVAL);

		x->op = VGMEM_CTRL_BO_ALLOC;
		x->bo.size = 4096;
		x->bo.flags = VGMEM_BO_FIXED_VA;
		x->bo.va = q.va_start + 100;
	}
	{
		struct vgmem_ctrl *x = CASE("bo-va-low", -EINVAL);

		x->op = VGMEM_CTRL_BO_ALLOC;
		x->bo.size = 4096;
		x->bo.flags = VGMEM_BO_FIXED_VA;
		x->bo.va = 0;
	}
	{
		struct vgmem_ctrl *x = CASE("bo-va-overlap", -EINVAL);

		x->op = VGMEM_CTRL_BO_ALLOC;
		x->bo.size = 8192;
		x->bo.flags = VGMEM_BO_FIXED_VA;
		x->bo.va = fixed - 4096;
	}
	if (q.quota && q.quota < q.va_end - q.va_start - 4096) {
		struct vgmem_ctrl *x = CASE("bo-over-quota", -ENOSPC);

		x->op = VGMEM_CTRL_BO_ALLOC;
		x->bo.size = (q.quota + 4096) & ~4095ull;
	}
	{
		struct vgmem_ctrl *x = CASE("free-unknown", -ENOENT);

		x->op = VGMEM_CTRL_BO_FREE;
		x->bo.va = fixed + 4096;
	}
	{
		struct vgmem_ctrl *x = CASE("free-stray", -EINVAL);

		x->op = VGMEM_CTRL_BO_FREE;
		x->bo.va = fixed;
		x->bo.size = 4096;
	}
	{
		struct vgmem_ctrl *x = CASE("chan-entries", -EINVAL);

		x->op = VGMEM_CTRL_CHAN_CREATE;
		x->chan.gpfifo_gpa = VGMEM_VFIO_GPA_BASE;
		x->chan.gpfifo_entries = 24;
	}
	{
		struct vgmem_ctrl *x = CASE("chan-unaligned", -EINVAL);

		x->op = VGMEM_CTRL_CHAN_CREATE;
		x->chan.gpfifo_gpa = VGMEM_VFIO_GPA_BASE + 4;
		x->chan.gpfifo_entries = 16;
	}
	{
		struct vgmem_ctrl *x = CASE("destroy-unknown", -ENOENT);

		x->op = VGMEM_CTRL_CHAN_DESTROY;
		x->chan.chan_id = vgmem_chan_id(ch) + 1000;
	}
	{
		struct vgmem_ctrl *x = CASE("destroy-stray", -EINVAL);

		x->op = VGMEM_CTRL_CHAN_DESTROY;
		x->chan.chan_id = vgmem_chan_id(ch);
		x->chan.gpfifo_entries = 16;
	}
#undef CASE
	ret = vgmem_stats(c->dev, &before);
	if (!ret)
		ret = ctrl_cases(c, k, n, "bad-ctrl");
	if (!ret)
		ret = ctrlq_checks(c);
	if (!ret && vgmem_stats(c->dev, &after))
		ret = vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: STATS failed afterwards");
	if (!ret && !snap_same(&before, &after))
		ret = vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: bad commands changed the VM: allocated %llu -> %llu",
				 (unsigned long long)before.allocated,
				 (unsigned long long)after.allocated);
	/* The channel the bad commands named is unharmed. */
	if (!ret && (vgmem_memset(ch, fixed, 2ull << 20, 7) || vgmem_chan_error(ch, NULL)))
		ret = vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: the named channel stopped working");
	vgmem_chan_destroy(ch);
	vgmem_bo_free(c->dev, fixed);
	if (ret)
		return ret;
	if (vgg_sanity(c, &why))
		return vgg_detail(c, VGG_FAIL, "hostile bad-ctrl: %s", why);
	return vgg_detail(c, VGG_OK, "hostile bad-ctrl %u commands refused as documented%s; fresh channel ok",
			  n, c->vfio ? ", queue errors ok" : "");
}

/* ---- ring-outside -------------------------------------------------------------------- */

static int hostile_ring_outside(struct vgg_ctx *c)
{
	struct vgmem_vfio_info vi;
	struct ctrl_case k[4];
	uint64_t ram_end;
	uint32_t status = 0;
	int32_t qerr = 0;
	unsigned int n = 0;
	const char *why;
	int ret;

	if (c->vfio) {
		if (vgmem_vfio_get_info(c->dev, &vi))
			return vgg_detail(c, VGG_FAIL, "hostile ring-outside: no transport info");
		ram_end = vi.ram_gpa + vi.ram_size;
	} else {
		/* The in-process guest's RAM is [0, --ram), 16 MiB by default. */
		ram_end = c->o->ram ? (c->o->ram + PAGE - 1) & ~(PAGE - 1) : 16ull << 20;
	}
	memset(k, 0, sizeof(k));
	k[n].name = "gpfifo-past-end";
	k[n].cmd.chan.gpfifo_gpa = ram_end;
	k[n++].want = -EINVAL;
	k[n].name = "gpfifo-straddling-end";
	k[n].cmd.chan.gpfifo_gpa = ram_end - 64;
	k[n++].want = -EINVAL;
	k[n].name = "gpfifo-far";
	k[n].cmd.chan.gpfifo_gpa = FAR_GPA;
	k[n++].want = -EINVAL;
	if (c->vfio) {
		/* Below the DMA map: guest-physical page 0 is never mapped. */
		k[n].name = "gpfifo-page-zero";
		k[n].cmd.chan.gpfifo_gpa = 0;
		k[n++].want = -EINVAL;
	}
	for (unsigned int i = 0; i < n; i++) {
		k[i].cmd.op = VGMEM_CTRL_CHAN_CREATE;
		k[i].cmd.chan.gpfifo_entries = 16;
	}
	ret = ctrl_cases(c, k, n, "ring-outside");
	if (ret)
		return ret;
	if (c->vfio) {
		ret = vgmem_vfio_ctrlq_bad_base(c->dev, ram_end + (1ull << 20), &status, &qerr);
		if (ret)
			return vgg_detail(c, VGG_FAIL, "hostile ring-outside: control ring outside: re-arming the queue: %d (%s): %s",
					  ret, strerror(-ret), vgmem_vfio_error());
		if (!(status & VGMEM_STATUS_CTRLQ_ERROR) || qerr >= 0)
			return vgg_detail(c, VGG_FAIL, "hostile ring-outside: control ring outside the DMA map: STATUS 0x%x CTRLQ_ERROR %d, want the error bit and a negative errno",
					  status, qerr);
		vgg_log(c, "case ctrlq-outside: STATUS 0x%x CTRLQ_ERROR %d (%s)", status,
			qerr, strerror(-qerr));
	}
	if (vgg_sanity(c, &why))
		return vgg_detail(c, VGG_FAIL, "hostile ring-outside: %s", why);
	return vgg_detail(c, VGG_OK, "hostile ring-outside %u GPFIFO rings refused%s; fresh channel ok",
			  n, c->vfio ? ", control ring outside: CTRLQ_ERROR" : "");
}

/* ---- flood --------------------------------------------------------------------------- */

/* Commands one batch at a time: full rings through VFIO, one by one in-process. */
static int run_batch(struct vgg_ctx *c, struct vgmem_ctrl *b, uint32_t n)
{
	uint32_t i;

	if (c->vfio)
		return vgmem_vfio_ctrl_batch(c->dev, b, n);
	for (i = 0; i < n; i++)
		vgmem_ctrl(c->dev, &b[i]);	/* the status is the answer */
	return 0;
}

static int flood_ctrl(struct vgg_ctx *c, uint32_t count, uint64_t *cmds)
{
	struct vgmem_vfio_info vi;
	struct vgmem_ctrl *b;
	uint64_t *vas;
	uint32_t per = 64, i, nva, round = 0;
	int ret = VGG_OK, r;

	if (c->vfio && !vgmem_vfio_get_info(c->dev, &vi))
		per = vi.ctrlq_entries;
	b = calloc(per, sizeof(*b));
	vas = calloc(per, sizeof(*vas));
	if (!b || !vas) {
		free(b);
		free(vas);
		return vgg_detail(c, VGG_FAIL, "hostile flood: out of memory");
	}
	*cmds = 0;
	while (*cmds < count && !ret) {
		/* A ring of allocations, queries, statistics and bad ops... */
		memset(b, 0, per * sizeof(*b));
		for (i = 0; i < per; i++) {
			switch (i % 4) {
			case 0:
				b[i].op = VGMEM_CTRL_QUERY;
				break;
			case 1:
				b[i].op = VGMEM_CTRL_BO_ALLOC;
				b[i].bo.size = PAGE;
				break;
			case 2:
				b[i].op = VGMEM_CTRL_STATS;
				break;
			default:
				b[i].op = 0x7700 + i;
				break;
			}
		}
		r = run_batch(c, b, per);
		if (r)
			return vgg_detail(c, VGG_FAIL, "hostile flood: round %u: %d (%s): %s",
					  round, r, strerror(-r), vgmem_vfio_error());
		nva = 0;
		for (i = 0; i < per; i++) {
			int want = i % 4 == 3 ? -EINVAL : 0;

			if (b[i].status != want) {
				ret = vgg_detail(c, VGG_FAIL, "hostile flood: round %u command %u (op %u): status %d, want %d",
						 round, i, b[i].op, b[i].status, want);
				continue;
			}
			if (b[i].op == VGMEM_CTRL_QUERY &&
			    b[i].query.abi_version != VGMEM_ABI_VERSION)
				ret = vgg_detail(c, VGG_FAIL, "hostile flood: round %u: QUERY answered ABI %u",
						 round, b[i].query.abi_version);
			if (b[i].op == VGMEM_CTRL_BO_ALLOC)
				vas[nva++] = b[i].bo.va;
		}
		for (i = 0; i < nva && !ret; i++)
			for (uint32_t j = 0; j < i; j++)
				if (vas[i] == vas[j])
					ret = vgg_detail(c, VGG_FAIL, "hostile flood: round %u: VA 0x%llx handed out twice",
							 round, (unsigned long long)vas[i]);
		/* ...then a ring of frees of what the allocations returned. */
		memset(b, 0, per * sizeof(*b));
		for (i = 0; i < nva; i++) {
			b[i].op = VGMEM_CTRL_BO_FREE;
			b[i].bo.va = vas[i];
		}
		r = run_batch(c, b, nva);
		if (r)
			return vgg_detail(c, VGG_FAIL, "hostile flood: round %u frees: %d (%s)",
					  round, r, strerror(-r));
		for (i = 0; i < nva && !ret; i++)
			if (b[i].status)
				ret = vgg_detail(c, VGG_FAIL, "hostile flood: round %u: BO_FREE of 0x%llx: %d",
						 round, (unsigned long long)vas[i], b[i].status);
		*cmds += per + nva;
		round++;
	}
	free(b);
	free(vas);
	return ret;
}

static int flood_gpfifo(struct vgg_ctx *c, uint32_t count)
{
	struct vgmem_chan *ch;
	uint64_t sem = 0;
	uint32_t i, val = 0, d[4];
	int ret;

	ret = vgg_chan(c, &ch);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "hostile flood: channel: %d", ret);
	ret = vgmem_bo_alloc(c->dev, PAGE, &sem);
	if (ret) {
		vgmem_chan_destroy(ch);
		return vgg_detail(c, VGG_FAIL, "hostile flood: BO_ALLOC: %d", ret);
	}
	/* As fast as the ring takes them: one release per entry. */
	for (i = 1; i <= count && !ret; i++) {
		d[0] = (uint32_t)(sem >> 32) & 0xff;
		d[1] = (uint32_t)sem;
		d[2] = i;
		d[3] = VGMEM_SEM_OP_RELEASE;
		vgmem_pb_inc(ch, 0, VGMEM_MTHD_SEMAPHORE_A, d, 4);
		ret = vgmem_submit(ch, NULL);
	}
	if (!ret)
		ret = vgmem_finish(ch);
	if (!ret)
		ret = vgmem_read(ch, sem, &val, sizeof(val));
	if (ret)
		ret = vgg_detail(c, VGG_FAIL, "hostile flood: GPFIFO entry %u: %d (%s), channel error %u",
				 i, ret, strerror(-ret), vgmem_chan_error(ch, NULL));
	else if (val != count ||
		 vgmem_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE) !=
		 (uint32_t)vgmem_chan_submitted(ch))
		ret = vgg_detail(c, VGG_FAIL, "hostile flood: semaphore %u (want %u), ENTRIES_DONE %u of %llu",
				 val, count,
				 vgmem_chan_userd_read(ch, VGMEM_USERD_ENTRIES_DONE),
				 (unsigned long long)vgmem_chan_submitted(ch));
	vgmem_chan_destroy(ch);
	vgmem_bo_free(c->dev, sem);
	return ret;
}

static int hostile_flood(struct vgg_ctx *c)
{
	struct vgmem_vm_stats before, after;
	uint64_t cmds = 0, t0 = vgg_now_ns();
	const char *why;
	int ret;

	ret = vgmem_stats(c->dev, &before);
	if (ret)
		return vgg_detail(c, VGG_FAIL, "hostile flood: STATS: %d", ret);
	ret = flood_ctrl(c, c->o->count, &cmds);
	if (ret)
		return ret;
	vgg_log(c, "control commands %llu in %llu ms", (unsigned long long)cmds,
		(unsigned long long)((vgg_now_ns() - t0) / 1000000));
	t0 = vgg_now_ns();
	ret = flood_gpfifo(c, c->o->count);
	if (ret)
		return ret;
	vgg_log(c, "gpfifo entries %u in %llu ms", c->o->count,
		(unsigned long long)((vgg_now_ns() - t0) / 1000000));
	ret = vgmem_stats(c->dev, &after);
	if (ret || after.allocated != before.allocated)
		return vgg_detail(c, VGG_FAIL, "hostile flood: allocated %llu before, %llu after (%d)",
				  (unsigned long long)before.allocated,
				  (unsigned long long)after.allocated, ret);
	if (vgg_sanity(c, &why))
		return vgg_detail(c, VGG_FAIL, "hostile flood: %s", why);
	return vgg_detail(c, VGG_OK, "hostile flood %llu control commands, %u GPFIFO entries, none lost; fresh channel ok",
			  (unsigned long long)cmds, c->o->count);
}

int vgg_cmd_hostile(struct vgg_ctx *c)
{
	switch (c->o->kind) {
	case VGG_H_WILD_VA:
		return run_cases(c, wild_cases, N(wild_cases), "wild-va");
	case VGG_H_BAD_ENTRY:
		return run_cases(c, entry_cases, N(entry_cases), "bad-entry");
	case VGG_H_BAD_METHOD:
		return run_cases(c, method_cases, N(method_cases), "bad-method");
	case VGG_H_BAD_CTRL:
		return hostile_bad_ctrl(c);
	case VGG_H_RING_OUTSIDE:
		return hostile_ring_outside(c);
	case VGG_H_BAR:
		return vgg_hostile_bar(c);
	default:
		return hostile_flood(c);
	}
}
