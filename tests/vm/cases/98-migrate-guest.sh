# SPDX-License-Identifier: GPL-2.0 OR MIT
# 98-migrate-guest: a real nested guest (L2) with a vgmem vGPU live-migrated
# between two QEMU 10 processes in this VM (VFIO migration protocol v2;
# QEMU 10.0 from bookworm-backports, "# vmtest-needs: qemu10"), from an
# mdev on one GPU to an mdev on another, while a tenant in L2 keeps 8 MiB
# of GPU memory under continuous checksum checks (vgmem-guest --pci
# fill-check --hold: GPU work in flight when the source stops). After the
# switch-over the source's QEMU quits and its mdev is empty; L2, told over
# its second serial port, ends the hold: every check passed on both sides
# of the migration, and new work runs on the destination's vGPU. The
# migration's total time and downtime (QEMU's) are printed. The scenario
# is l2_migrate_guest (tests/vm/l2.sh), shared with 99-migrate-guest-qemu72.
#
# First a migration the destination refuses (--refused-first: its mdev's
# quota under what L2 holds): QEMU 10 there fails the load with vgmem.ko's
# EFBIG, and the source runs on with its vGPU intact; then the real one.
# make check leaves this case out (scripts/check.sh says why); make
# vm-check runs it on 6.1, make vm-check-6.12 VMCASE=98-migrate-guest on 6.12.
# vmtest-timeout: 2400
# vmtest-needs: qemu qemu10

vg_setup gpus=2 vram_mb=64
set_oversub 6400
info "L1 uptime at case start: $(l1_uptime)s"

# QEMU switches over once what is left fits its downtime limit at the
# switch-over bandwidth. What a VFIO device has left it asks the kernel
# (VFIO_DEVICE_FEATURE_MIG_DATA_SIZE, 6.2 and later: vgmem.ko answers with
# its stream's size); without the answer (6.1) QEMU 10 assumes 100 GiB
# and would never switch over, so there, as an operator on such a kernel
# must, we tell it the switch-over bandwidth (avail-switchover-bandwidth)
# so that 100 GiB "fit" 2 s. The downtime QEMU reports is what the stop
# really took.
case "$(uname -r)" in
[0-5].* | 6.[01].*)
	l2_migrate_guest --refused-first mig "$L2_QEMU10" "downtime-limit 2000" \
		"max-bandwidth 4G" "avail-switchover-bandwidth 1000G" ;;
*)
	l2_migrate_guest --refused-first mig "$L2_QEMU10" "downtime-limit 2000" \
		"max-bandwidth 4G" ;;
esac
