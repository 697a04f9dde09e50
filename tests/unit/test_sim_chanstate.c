// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A channel's execution state carried to another software GPU
 * (channel_save/channel_load, host-module/sim/chanstate.c): a checksum
 * launch cut short on one GPU finishes on the other with the result an
 * uncut one computes, while the original, started again, gets the same.
 * Then bytes that no channel could have written are refused, each with
 * the channel unchanged.
 */
#include "test_sim_util.h"
#include "host-module/sim/sim_internal.h"

#define VA0	0x100000000ull
#define SRC	(16ull << 20)		/* checksummed: many engine turns */
#define RES	(VA0 + SRC)		/* the u64 result */
#define MEM	(SRC + 4096)

static const struct vg_gpu_ops *ops;

struct side {
	struct vg_sim *sim;
	struct vg_as *as;
	struct vg_mem *mem;
	u8 *cpu;
};

static void side_init(struct side *s)
{
	s->sim = t_sim(4ull << 20, 0);
	assert_int_equal(ops->as_create(s->sim, &s->as), 0);
	s->mem = t_map_new(s->sim, s->as, VA0, MEM, VG_LOC_HOST);
	s->cpu = ops->mem_host_addr(s->sim, s->mem);
	assert_non_null(s->cpu);
}

static void side_fini(struct side *s)
{
	ops->unmap(s->sim, s->as, VA0, MEM);
	ops->mem_free(s->sim, s->mem);
	ops->as_destroy(s->sim, s->as);
	vg_sim_destroy(s->sim);
}

/* The channel's state is mid-launch: a job with some of its bytes done. */
static bool mid_launch(struct tchan *t)
{
	return READ_ONCE(t->ch->job.kind) == SIM_JOB_CP &&
	       READ_ONCE(t->ch->job.off) > 0;
}

/* A channel of sim on the same ring in the same guest memory as t's. */
static struct vg_bchan *twin(struct tchan *t, struct side *s, u8 **userd)
{
	struct vg_channel_desc d;
	struct vg_bchan *ch;

	memset(&d, 0, sizeof(d));
	d.gpfifo_gpa = t->ring_gpa;
	d.gpfifo_entries = t->entries;
	d.gmem = &t->gmem;
	d.fault_cb = t_fault_cb;
	d.fault_priv = t;
	assert_int_equal(ops->channel_create(s->sim, s->as, &d, &ch,
					     (void **)userd), 0);
	assert_int_equal(ops->channel_stop(s->sim, ch, T_TIMEOUT), 0);
	return ch;
}

static void test_launch_finishes_elsewhere(void **state)
{
	struct side a, b;
	struct tg *g = tg_new();
	struct tchan *t;
	struct vg_bchan *bch;
	u8 *buf = malloc(VG_CHAN_STATE_MAX), *userd;
	u64 want, i;
	int n = -1, tries;

	(void)state;
	assert_non_null(buf);
	side_init(&a);
	side_init(&b);
	for (i = 0; i < SRC; i++)
		a.cpu[i] = (u8)(i * 2654435761u >> 13);
	want = t_fnv(a.cpu, SRC);
	t = t_chan(a.sim, a.as, g, 16);
	t_bind(t);
	/*
	 * Catch the launch mid-way: stop it once it has begun. A starved
	 * test thread may find it finished: then launch it again.
	 */
	for (tries = 0; tries < 20; tries++) {
		memset(a.cpu + SRC, 0, 8);
		k_range(t, VGMEM_K_CHECKSUM, VA0, SRC, RES);
		t_submit(t);
		T_WAIT(mid_launch(t) ||
		       t_userd(t, VGMEM_USERD_GP_GET) == t->put);
		assert_int_equal(ops->channel_stop(a.sim, t->ch, T_TIMEOUT), 0);
		if (mid_launch(t))
			break;
		ops->channel_start(a.sim, t->ch);
		assert_int_equal(t_idle(t), 0);
	}
	assert_true(tries < 20);
	n = ops->channel_save(a.sim, t->ch, buf, VG_CHAN_STATE_MAX);
	assert_true(n > 16);
	/* Too small a buffer: -ENOSPC. A running channel: -EBUSY. */
	assert_int_equal(ops->channel_save(a.sim, t->ch, buf, (u32)n - 1),
			 -ENOSPC);

	/* The migration: memory and USERD as they are, then the state. */
	memcpy(b.cpu, a.cpu, MEM);
	/*
	 * A byte the launch has hashed already, changed on the destination:
	 * a channel that goes on from the saved progress never reads it
	 * again, one that started over would hash it into another result.
	 */
	b.cpu[0] ^= 0x5a;
	bch = twin(t, &b, &userd);
	memcpy(userd, t->userd, VGMEM_USERD_SIZE);
	assert_int_equal(ops->channel_load(b.sim, bch, buf, (u32)n), 0);
	ops->channel_start(b.sim, bch);
	assert_int_equal(ops->channel_idle_wait(b.sim, bch, T_TIMEOUT), 0);
	assert_int_equal(*(u32 *)(userd + VGMEM_USERD_ERROR), 0);
	assert_int_equal(*(u32 *)(userd + VGMEM_USERD_GP_GET), t->put);
	assert_memory_equal(b.cpu + SRC, &want, 8);

	/* The source, started again (a cancelled migration), agrees. */
	ops->channel_start(a.sim, t->ch);
	assert_int_equal(t_idle(t), 0);
	assert_memory_equal(a.cpu + SRC, &want, 8);
	assert_int_equal(ops->channel_save(a.sim, t->ch, buf, VG_CHAN_STATE_MAX),
			 -EBUSY);

	ops->channel_destroy(b.sim, bch);
	t_chan_free(t);
	side_fini(&a);
	side_fini(&b);
	tg_free(g);
	free(buf);
}

static void put32(u8 *p, u32 v)
{
	memcpy(p, &v, 4);
}

static u32 get32(const u8 *p)
{
	u32 v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Field offsets in version 1 (chanstate.c's walk): the 16-byte header,
 * gp_get, error, parked, in_entry, entries_done, pb.gpa (8), pb.ndw,
 * pb.pos, pb.type, pb.subc, ...
 */
#define OFF_GP_GET	16
#define OFF_ERROR	20
#define OFF_PARKED	24
#define OFF_IN_ENTRY	28
#define OFF_NDW		44
#define OFF_POS		48
#define OFF_SUBC	56
#define OFF_JOB_KIND	(16 + 4 * 5 + 8 + 4 * 6 + 8 + 4 * 2 + 8 + 4)

static void expect_refused(struct side *s, struct vg_bchan *ch, const u8 *good,
			   u32 n, u8 *bad, u32 bad_len)
{
	u8 before[VG_CHAN_STATE_MAX], after[VG_CHAN_STATE_MAX];
	int m;

	m = ops->channel_save(s->sim, ch, before, sizeof(before));
	assert_true(m > 0);
	assert_int_equal(ops->channel_load(s->sim, ch, bad, bad_len), -EINVAL);
	assert_int_equal(ops->channel_save(s->sim, ch, after, sizeof(after)), m);
	assert_memory_equal(before, after, (size_t)m);
	memcpy(bad, good, n);
}

static void test_hostile_state(void **state)
{
	struct side a;
	struct tg *g = tg_new();
	struct tchan *t;
	u8 good[VG_CHAN_STATE_MAX], bad[VG_CHAN_STATE_MAX + 8];
	int n;

	(void)state;
	side_init(&a);
	t = t_chan(a.sim, a.as, g, 16);
	t_bind(t);
	t_run(t);
	assert_int_equal(ops->channel_stop(a.sim, t->ch, T_TIMEOUT), 0);
	n = ops->channel_save(a.sim, t->ch, good, sizeof(good));
	assert_true(n > 16);
	/* Its own state loads back as it is. */
	assert_int_equal(ops->channel_load(a.sim, t->ch, good, (u32)n), 0);
	memcpy(bad, good, (size_t)n);

	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n - 1);
	bad[n] = 0;
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n + 1);
	bad[0] ^= 1;				/* magic */
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	put32(bad + 4, 2);			/* version */
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	put32(bad + OFF_GP_GET, 16);		/* past the ring */
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	put32(bad + OFF_ERROR, 99);
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	put32(bad + OFF_PARKED, 2);
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	/* A job or a parked acquire outside an entry. */
	put32(bad + OFF_PARKED, 1);
	assert_int_equal(get32(bad + OFF_IN_ENTRY), 0);
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	put32(bad + OFF_IN_ENTRY, 1);
	put32(bad + OFF_NDW, 4);
	put32(bad + OFF_POS, 5);		/* past the entry */
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	put32(bad + OFF_IN_ENTRY, 1);
	put32(bad + OFF_SUBC, 8);
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	put32(bad + OFF_IN_ENTRY, 1);
	put32(bad + OFF_JOB_KIND, 9);
	expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	/* The bound classes: subchannel 1's is compute; make it unknown. */
	{
		u32 at;

		for (at = 16; at + 4 <= (u32)n; at += 4)
			if (get32(good + at) == VGMEM_CLASS_COMPUTE)
				break;
		assert_true(at + 4 <= (u32)n);
		put32(bad + at, 0xb0c1);
		expect_refused(&a, t->ch, good, (u32)n, bad, (u32)n);
	}
	/* Loading into a running channel: -EBUSY, nothing changed. */
	ops->channel_start(a.sim, t->ch);
	assert_int_equal(ops->channel_load(a.sim, t->ch, good, (u32)n), -EBUSY);
	/* Still a working channel. */
	k_range(t, VGMEM_K_MEMSET, VA0, 4096, 7);
	t_run(t);
	t_chan_free(t);
	side_fini(&a);
	tg_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launch_finishes_elsewhere),
		cmocka_unit_test(test_hostile_state),
	};

	ops = vg_sim_gpu_ops();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
