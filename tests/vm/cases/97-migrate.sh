# SPDX-License-Identifier: GPL-2.0 OR MIT
# 97-migrate: VFIO migration (protocol v2) of a vGPU between two mdevs on
# two GPUs, driven by vgmig-check as both the guest and its VMM: the source
# short of VRAM (part of the guest's memory in host RAM), a busy channel and
# one parked on a semaphore; cancels at STOP and STOP_COPY leave the source
# running; garbage, cut and foreign-device streams, and the real one while
# the destination's quota is cut below the guest's vGPU (EFBIG), are
# refused with the destination left empty; the real stream moves the guest, whose parked
# channel goes on and whose every byte checks out, and whose file map (a
# file of a share both vGPUs have, written and not released) is in the
# file before the stream ends and at its VA on the destination. Then the kernel log has
# each refusal with its reason, and both mdevs are clean. On 6.2 and later
# the same with pre-copy (vgmig-check --precopy): the guest writes, frees
# and allocates while the stream is read, the stop sends only what it
# wrote last, and every BO arrives as it last wrote it; before 6.2 the
# device must not offer pre-copy.
# vmtest-timeout: 400

command -v vgmig-check > /dev/null || skip "vgmig-check not built (make vm-bins)"
vg_setup gpus=2 vram_mb=16
set_oversub 6400

src=$(mdev_create 1g 0) || exit 1
dst=$(mdev_create 1g 1) || exit 1
# Share 1 of both vGPUs is one directory (shared storage): a file map goes.
share=/tmp/vgmig-share
mkdir -p $share
dd if=/dev/zero bs=64k count=4 2> /dev/null | tr '\0' '3' > $share/f.bin
vgmem-nl set-shares $src --share 1:$share > /dev/null || fail "shares of $src"
vgmem-nl set-shares $dst --share 1:$share > /dev/null || fail "shares of $dst"
vgmig-check $src $dst $share || fail "vgmig-check $src -> $dst"
log=$(dmesg)
echo "$log" | grep -q "migration stream refused: not a vgmem migration stream" ||
	fail "no log line for the garbage stream"
echo "$log" | grep -q "migration stream refused: the stream ended after" ||
	fail "no log line for the stream cut short"
echo "$log" | grep -q "migration stream refused: device state refused: config space of another device" ||
	fail "no log line for the foreign config space"
echo "$log" | grep -q "migration stream refused: the VM's vGPU had a quota of .*, this vGPU's quota is 2097152" ||
	fail "no log line for the vGPU over the destination's quota"
# Closed: both VMs are gone, nothing is left allocated.
expect_eq "$(mdev_attr $src allocated)" 0 "allocated on the source after the guest left"
expect_eq "$(mdev_attr $dst allocated)" 0 "allocated on the destination after close"
vgmig-check --precopy $src $dst || fail "vgmig-check --precopy $src -> $dst"
expect_eq "$(mdev_attr $src allocated)" 0 "allocated on the source after the pre-copy"
expect_eq "$(mdev_attr $dst allocated)" 0 "allocated on the destination after the pre-copy"
mdev_remove $src
mdev_remove $dst
