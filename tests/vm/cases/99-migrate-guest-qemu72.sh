# SPDX-License-Identifier: GPL-2.0 OR MIT
# 99-migrate-guest-qemu72: 98-migrate-guest's live migration of a real L2
# (l2_migrate_guest in tests/vm/l2.sh: 8 MiB of GPU memory under
# continuous checksum checks, mdev on GPU 0 to mdev on GPU 1) between two
# processes of Debian 12's own QEMU 7.2 rebuilt with qemu-patches/ (VFIO
# migration protocol v2; "# vmtest-needs: qemu72": tests/vm/mkqemu72.sh).
#
# QEMU 7.2 switches over once what is left to send fits the downtime limit
# at the bandwidth it measured. Its pending estimate counts the vGPU's
# stop-copy size where the kernel tells it (MIG_DATA_SIZE, 6.2 and later);
# on 6.1 it counts RAM only, and the vGPU's data (a few MiB here) adds to
# the downtime. Either way no parameter beyond QEMU 10's first two is
# needed (7.2 has no avail-switchover-bandwidth): a 2 s limit and the
# bandwidth cap raised from 7.2's default of 32 MiB/s.
#
# First a migration the destination refuses (--refused-first: its mdev's
# quota under what L2 holds): the patched destination fails it saying the
# device refused its data, and the source runs on with its vGPU intact;
# then the real one.
# vmtest-timeout: 2400
# vmtest-needs: qemu qemu72

vg_setup gpus=2 vram_mb=64
set_oversub 6400
info "L1 uptime at case start: $(l1_uptime)s"
l2_migrate_guest --refused-first mig72 "$L2_QEMU72" "downtime-limit 2000" "max-bandwidth 4G"
