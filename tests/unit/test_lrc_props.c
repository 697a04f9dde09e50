// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Property test of the LRC file cache against a sequential reference model
 * of lazy release consistency: random interleavings of writes by the host
 * CPU and four GPU contexts on two software GPUs, with acquire, release,
 * msync and host fsync, and a host writer outside the cache (writing the
 * store behind its back, like pwrite(2) or virtiofsd for another VM),
 * under a roomy or a tiny VRAM budget.
 *
 * Every byte of the file belongs to one writer (the CPU or a context),
 * interleaved at a random granularity (64 bytes to 4 KiB) so that writers
 * share 4 KiB pages (false sharing everywhere) without racing on a byte;
 * each writes only its own bytes (byte-exact merges of finer interleaving
 * are test_lrc_cache's and test_lrc_merge's). The model:
 *  - home[b]: the released value of b (what an acquirer must see);
 *  - view[k][b]: what context k sees; its own writes land there;
 *  - a context's release publishes its bytes (home = view) in the range,
 *    its acquire releases and then refreshes its view from home;
 *  - a host write lands in home at once (the host has one replica);
 *  - an outside write lands in home at once too, but the cache sees it
 *    only at its next look at the store (any acquire, msync, fsync):
 *    until then host reads may still return the old bytes (ext[b]).
 * Checks: a context always reads its own bytes as it wrote them; right
 * after an acquire it reads home; host reads see home; after fsync the
 * store holds home. Bytes another writer changed and has not released may
 * legitimately show up early (LRC allows it), so they are not checked
 * until released. At the end every writer releases and the file must
 * equal home exactly.
 */
#include "lrc_fixture.h"

#define KiB	1024ull
#define GP	(64 * KiB)
#define FSIZE	(256 * KiB)
#define NCTX	4
#define OUT	(NCTX + 1)	/* the writer outside the cache */
#define NW	(NCTX + 2)	/* writer 0 is the CPU */
#define NOPS	260

/* Host-RAM budget of the host copies (0: unlimited); see the tests below. */
static u64 host_budget;
static u64 host_evictions;	/* over all seeds */
/*
 * BOs hold all of each GPU's VRAM, so every replica is a host replica
 * (evict.c); odd seeds free the BOs half-way, and replicas move to VRAM.
 */
static bool vram_full;
static u64 host_reps_max, promotions;	/* over all seeds */

struct model {
	u8 home[FSIZE];
	u8 view[NCTX][FSIZE];
	u8 dirty[NCTX][FSIZE];	/* written, not released */
	u8 ext[FSIZE];		/* written outside, the cache has not looked */
	u32 gran;
};

static u32 owner_of(const struct model *m, u64 b)
{
	return (u32)((b / m->gran) % NW);
}

/* Not yet released by its (GPU) owner: may show up early or not. */
static bool in_flux(const struct model *m, u64 b)
{
	u32 w = owner_of(m, b);

	if (w == OUT)
		return m->ext[b];
	return w && m->dirty[w - 1][b];
}

static void model_release(struct model *m, u32 k, u64 off, u64 len)
{
	u64 b;

	for (b = off; b < off + len; b++) {
		if (owner_of(m, b) == k + 1 && m->dirty[k][b]) {
			m->home[b] = m->view[k][b];
			m->dirty[k][b] = 0;
		}
	}
}

static void model_acquire(struct model *m, u32 k, u64 off, u64 len)
{
	model_release(m, k, off, len);
	memcpy(m->view[k] + off, m->home + off, len);
}

/*
 * Context k's GPU writes its bytes of [off, off + len), and only those (a
 * kernel writing others' bytes would race with them): one copy-engine
 * copy per run of its bytes, all in one submission.
 */
static void gpu_write_owned(struct lfx *x, struct model *m, struct lfx_vm *v,
			    u32 k, u64 va, u64 off, u64 len)
{
	u64 b, e;
	bool any = false;

	memcpy(tg_ptr(x->gpu[v->gpu].g, v->xfer), m->view[k] + off, len);
	for (b = off; b < off + len; b = e) {
		if (owner_of(m, b) != k + 1) {
			e = b + 1;
			continue;
		}
		for (e = b; e < off + len && owner_of(m, e) == k + 1; e++)
			;
		t_ce(v->t, v->xfer + (b - off), va + b, (u32)(e - b),
		     (u32)(e - b), (u32)(e - b), 1, VGMEM_CE_LAUNCH_SRC_PHYS);
		any = true;
	}
	if (any)
		assert_int_equal(lfx_run(v->t), 0);
}

static u64 rnd(struct vg_rand *r, u64 n)
{
	return vg_rand_below(r, (u32)n);
}

static void run_seed(u64 seed)
{
	struct lfx x;
	struct lfx_vm *v[NCTX];
	struct ms_file *f;
	struct vg_lrc_file *hf;
	struct model *m = calloc(1, sizeof(*m));
	struct vg_rand r;
	u64 va[NCTX], off, len, b, hog_bo[LFX_GPUS] = { 0 };
	struct lfx_vm *hog[LFX_GPUS] = { NULL };
	u8 *buf = malloc(FSIZE);
	u32 op, k, i;
	bool tiny;

	vg_rand_seed(&r, seed);
	tiny = rnd(&r, 2);
	m->gran = (u32[]){ 64, 192, 1000, 4096 }[rnd(&r, 4)];
	/*
	 * Host copies that back replicas stay: with a host budget, the tiny
	 * VRAM budget makes room for the host budget's evictions.
	 */
	if (host_budget)
		tiny = true;
	lfx_init(&x, 2, 64ull << 20, tiny ? 2 * GP : 8 * GP);
	assert_int_equal(vg_lrc_set_host_budget(x.lrc, host_budget), 0);
	f = ms_add(&x.ms, "/srv/share0", "p.bin", FSIZE);
	lfx_pattern(f->data, FSIZE, (u32)seed);
	memcpy(m->home, f->data, FSIZE);
	for (k = 0; k < NCTX; k++) {
		v[k] = lfx_vm(&x, k % 2);
		assert_int_equal(vg_lrc_map(v[k]->ctx, 1, "p.bin", 0, FSIZE,
					    VGMEM_FILE_RW, &va[k]), 0);
		memcpy(m->view[k], m->home, FSIZE);
	}
	for (i = 0; vram_full && i < 2; i++) {
		hog[i] = lfx_vm(&x, i);
		assert_int_equal(vg_bo_alloc(hog[i]->vm, 64ull << 20, 0,
					     &hog_bo[i]), 0);
	}
	assert_int_equal(vg_lrc_host_open(x.lrc, "/srv/share0", "p.bin", true,
					  &hf), 0);

	for (op = 0; op < NOPS; op++) {
		u32 kind = (u32)rnd(&r, 110);
		u64 gpo = rnd(&r, FSIZE / GP) * GP;
		u64 gpl = (1 + rnd(&r, FSIZE / GP - gpo / GP)) * GP;

		off = rnd(&r, FSIZE);
		len = 1 + rnd(&r, min_t(u64, FSIZE - off, 3 * 4096));
		k = (u32)rnd(&r, NCTX);
		if (vram_full) {
			struct vg_lrc_stats st = lfx_stats(&x);

			host_reps_max = max(host_reps_max, st.replicas_host);
			if (hog_bo[0])
				assert_int_equal(st.vram_used, 0);
			if (op == NOPS / 2 && (seed & 1)) {
				for (i = 0; i < 2; i++) {
					assert_int_equal(vg_bo_free(hog[i]->vm,
								    hog_bo[i]),
							 0);
					hog_bo[i] = 0;
				}
			}
		}
		if (kind < 35) {
			/* GPU write: new values for k's bytes, its view elsewhere. */
			for (b = off; b < off + len; b++) {
				if (owner_of(m, b) == k + 1) {
					m->view[k][b] = (u8)vg_rand_next(&r);
					m->dirty[k][b] = 1;
				}
			}
			gpu_write_owned(&x, m, v[k], k, va[k], off, len);
		} else if (kind < 50) {
			/* GPU read: its own bytes are what it wrote. */
			lfx_gpu_read(&x, v[k], va[k] + off, buf, (u32)len);
			for (b = off; b < off + len; b++)
				if (owner_of(m, b) == k + 1 &&
				    buf[b - off] != m->view[k][b])
					fail_msg("seed %llu op %u ctx %u gran %u: own byte %llu is %u, want %u (dirty %u)",
						 (unsigned long long)seed, op, k,
						 m->gran, (unsigned long long)b,
						 buf[b - off], m->view[k][b],
						 m->dirty[k][b]);
		} else if (kind < 62) {
			assert_int_equal(vg_lrc_release(v[k]->ctx,
							va[k] + gpo, gpl), 0);
			model_release(m, k, gpo, gpl);
		} else if (kind < 74) {
			/* Acquire, then read the range at once: home. */
			assert_int_equal(vg_lrc_acquire(v[k]->ctx,
							va[k] + gpo, gpl), 0);
			model_acquire(m, k, gpo, gpl);
			memset(m->ext, 0, FSIZE);	/* the store was looked at */
			lfx_gpu_read(&x, v[k], va[k] + gpo, buf, (u32)gpl);
			for (b = gpo; b < gpo + gpl; b++)
				if ((!in_flux(m, b) || owner_of(m, b) == k + 1) &&
				    buf[b - gpo] != m->view[k][b])
					fail_msg("seed %llu op %u ctx %u gran %u: after acquire [%llu,+%llu) byte %llu (owner %u) is %u, want %u",
						 (unsigned long long)seed, op, k,
						 m->gran, (unsigned long long)gpo,
						 (unsigned long long)gpl,
						 (unsigned long long)b,
						 owner_of(m, b), buf[b - gpo],
						 m->view[k][b]);
		} else if (kind < 84) {
			/* Host write of the CPU's bytes (read-modify-write). */
			assert_int_equal(vg_lrc_host_read(hf, off, buf, len),
					 (s64)len);
			for (b = off; b < off + len; b++) {
				if (owner_of(m, b) == 0) {
					m->home[b] = (u8)vg_rand_next(&r);
					buf[b - off] = m->home[b];
				} else if (!in_flux(m, b)) {
					assert_int_equal(buf[b - off],
							 m->home[b]);
				}
			}
			/* Others' bytes go back as read: no change to them. */
			for (b = off; b < off + len; b++)
				if (owner_of(m, b) && in_flux(m, b))
					break;
			if (b == off + len) {
				assert_int_equal(vg_lrc_host_write(hf, off, buf,
								   len),
						 (s64)len);
			} else {
				/* Write only the CPU's bytes, byte runs. */
				for (b = off; b < off + len; b++)
					if (owner_of(m, b) == 0)
						assert_int_equal(
							vg_lrc_host_write(hf, b,
								buf + (b - off), 1), 1);
			}
		} else if (kind < 94) {
			assert_int_equal(vg_lrc_host_read(hf, off, buf, len),
					 (s64)len);
			for (b = off; b < off + len; b++)
				if (!in_flux(m, b))
					assert_int_equal(buf[b - off],
							 m->home[b]);
		} else if (kind < 97) {
			assert_int_equal(vg_lrc_sync(v[k]->ctx, va[k] + gpo,
						     gpl), 0);
			model_release(m, k, gpo, gpl);
			memset(m->ext, 0, FSIZE);
		} else if (kind >= 100) {
			/* The outside writer: its bytes, straight to the store. */
			for (b = off; b < off + len; b++) {
				if (owner_of(m, b) != OUT)
					continue;
				m->home[b] = (u8)vg_rand_next(&r);
				m->ext[b] = 1;
				ms_ext_write(f, b, &m->home[b], 1);
			}
		} else {
			assert_int_equal(vg_lrc_host_fsync(hf), 0);
			memset(m->ext, 0, FSIZE);
			for (b = 0; b < FSIZE; b++)
				if (!in_flux(m, b))
					assert_int_equal(f->data[b], m->home[b]);
		}
	}
	/* Everyone releases; the file after fsync is the model's. */
	for (k = 0; k < NCTX; k++) {
		assert_int_equal(vg_lrc_release(v[k]->ctx, va[k], 0), 0);
		model_release(m, k, 0, FSIZE);
	}
	assert_int_equal(vg_lrc_host_fsync(hf), 0);
	for (i = 0; i < FSIZE; i++)
		if (f->data[i] != m->home[i])
			fail_msg("seed %llu gran %u: byte %u is %u, want %u",
				 (unsigned long long)seed, m->gran, i,
				 f->data[i], m->home[i]);
	assert_int_equal(vg_lrc_host_read(hf, 0, buf, FSIZE), (s64)FSIZE);
	assert_memory_equal(buf, m->home, FSIZE);
	if (tiny)
		assert_true(lfx_stats(&x).evictions > 0);
	host_evictions += lfx_stats(&x).host_evictions;
	promotions += lfx_stats(&x).promotions;
	vg_lrc_host_close(hf);
	lfx_fini(&x);
	free(buf);
	free(m);
}

static void test_lrc_model(void **state)
{
	u64 seed;

	(void)state;
	host_budget = 0;
	for (seed = 1; seed <= 8; seed++)
		run_seed(seed);
}

/*
 * The same under a host-RAM budget of one GPU page for the host copies:
 * they are dropped (dirty ones written back) and read again all the time.
 */
static void test_lrc_model_host_budget(void **state)
{
	u64 seed;

	(void)state;
	host_budget = GP;
	host_evictions = 0;
	for (seed = 1; seed <= 8; seed++)
		run_seed(seed);
	assert_true(host_evictions > 0);
	host_budget = 0;
}

/*
 * The same with every GPU's VRAM held by BOs: replicas live in host RAM
 * (mapped to the GPU) and the model still holds; odd seeds free the BOs
 * half-way and the replicas move to VRAM.
 */
static void test_lrc_model_vram_full(void **state)
{
	u64 seed;

	(void)state;
	host_budget = 0;
	vram_full = true;
	host_reps_max = 0;
	promotions = 0;
	for (seed = 1; seed <= 8; seed++)
		run_seed(seed);
	vram_full = false;
	assert_true(host_reps_max > 0);
	assert_true(promotions > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lrc_model),
		cmocka_unit_test(test_lrc_model_host_budget),
		cmocka_unit_test(test_lrc_model_vram_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
