# SPDX-License-Identifier: GPL-2.0 OR MIT
# bench 40-migrate: the stop phase of a vGPU's VFIO migration in vgmem.ko
# (vgmig-check --bench): a guest with 32 MiB of written BOs migrates
# between mdevs on two GPUs and back, 7 times; each round times the
# source's part (RUNNING -> STOP_COPY: freeze, then the whole stream read
# from the data fd) and the destination's (RESUMING, the stream written,
# -> RUNNING), against a memcpy of the same stream run beside it. The data
# is checked after the last round. Under TCG the times are an emulated
# CPU's; the ratio is what compares. Prints a VMBENCH line; never fails on
# timing.
# vmtest-timeout: 600

command -v vgmig-check > /dev/null || skip "vgmig-check not built (make vm-bins)"
MIB=${VMBENCH_MIGRATE_MIB:-32}
ROUNDS=${VMBENCH_MIGRATE_ROUNDS:-7}
vg_setup gpus=2 vram_mb=64
set_oversub 6400

a=$(mdev_create 1g 0) || exit 1
b=$(mdev_create 1g 1) || exit 1
vgmig-check --bench "$MIB" "$ROUNDS" "$a" "$b" || fail "vgmig-check --bench"
mdev_remove $a
mdev_remove $b
