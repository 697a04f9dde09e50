# SPDX-License-Identifier: GPL-2.0 OR MIT
# 32-intx: the vGPU's INTx as QEMU drives it with KVM's irqfd: automasked
# on firing, unmasked through an eventfd (ACTION_UNMASK + DATA_EVENTFD) and
# delivered again while the level is high; the eventfd refused without INTx,
# as the trigger itself and twice (and it refused as the trigger); inert once removed; gone with INTx's
# disable and with the device's close (vgirq-check checks each).
# vmtest-timeout: 120

command -v vgirq-check > /dev/null || skip "vgirq-check not built (make vm-bins)"
vg_setup gpus=1 vram_mb=64

u=$(mdev_create 1g) || exit 1
vgirq-check $u || fail "vgirq-check on $u"
# Twice on the same mdev: nothing of the first run's eventfds is left over.
vgirq-check $u || fail "vgirq-check on $u, second run"
mdev_remove $u
