// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The cost model, in integer arithmetic only (no floating point in sim/):
 *
 *   device_ns = bytes_vram * 1e9 / vram_bw
 *             + (bytes_host + bytes_guest) * 1e9 / pcie_bw
 *
 * An address space's device time is computed from its cumulative byte
 * counters when read, so it does not depend on how the work was split into
 * launches and the VRAM/host ratio of the same workload is exactly
 * vram_bw / pcie_bw whenever the divisions are exact.
 */
#include "sim_internal.h"

/*
 * floor(a * mul / div) without overflow: the 128-bit product by 32-bit
 * halves, then binary long division. Saturates at ~0ull.
 */
u64 sim_muldiv(u64 a, u64 mul, u64 div)
{
	u64 al = a & 0xffffffffull, ah = a >> 32;
	u64 bl = mul & 0xffffffffull, bh = mul >> 32;
	u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	u64 mid = (ll >> 32) + (lh & 0xffffffffull) + (hl & 0xffffffffull);
	u64 lo = (ll & 0xffffffffull) | (mid << 32);
	u64 hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	u64 q = 0, r = 0;
	bool top;
	int i;

	if (WARN_ON(!div))
		return 0;
	if (hi >= div)
		return ~0ull;	/* quotient does not fit in 64 bits */
	r = hi;
	for (i = 63; i >= 0; i--) {
		top = r >> 63;
		r = (r << 1) | ((lo >> i) & 1);
		q <<= 1;
		if (top || r >= div) {
			r -= div;
			q |= 1;
		}
	}
	return q;
}

u64 vg_sim_cost_ns(const struct vg_sim *sim, enum vg_loc loc, u64 bytes)
{
	u64 bw = loc == VG_LOC_VRAM ? sim->vram_bw : sim->pcie_bw;

	return sim_muldiv(bytes, NSEC_PER_SEC, bw);
}

static u64 sim_sat_add(u64 a, u64 b)
{
	u64 s;

	return check_add_overflow(a, b, &s) ? ~0ull : s;
}

void vg_sim_as_cost(struct vg_sim *sim, struct vg_as *as,
		    struct vg_sim_cost *out)
{
	struct sim_cost c;

	sim_as_lock(as);
	c = as->cost;
	sim_as_unlock(as);

	out->bytes_vram = c.bytes_vram;
	out->bytes_host = c.bytes_host;
	out->bytes_guest = c.bytes_guest;
	out->entries = c.entries;
	out->launches = c.launches;
	out->device_ns = sim_sat_add(vg_sim_cost_ns(sim, VG_LOC_VRAM,
						    c.bytes_vram),
				     vg_sim_cost_ns(sim, VG_LOC_HOST,
						    sim_sat_add(c.bytes_host,
								c.bytes_guest)));
}
