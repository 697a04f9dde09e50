# SPDX-License-Identifier: GPL-2.0 OR MIT
# 10-load: the stock VFIO modules and ours load and unload; the software GPUs
# appear as /sys/class/vgmem/vgmemN with their mdev types.
# vmtest-timeout: 60

for m in vfio vfio_iommu_type1 mdev; do
	module_loaded $m || fail "stock module $m is not loaded"
done
[ -c /dev/vfio/vfio ] || fail "/dev/vfio/vfio missing"

modprobe vgmem || fail "modprobe vgmem"
module_loaded vgmem || fail "vgmem not live after modprobe"
info "vgmem loaded: $(cat /sys/module/vgmem/taint 2>/dev/null) taint"

if ! have_module vgmem_sim; then
	rmmod vgmem || fail "rmmod vgmem"
	skip "vgmem_sim.ko is not built yet (vgmem.ko loads and unloads)"
fi

# Two GPUs, then a different count: the class devices follow the parameter.
modprobe vgmem_sim gpus=2 vram_mb=256 || fail "modprobe vgmem_sim gpus=2 vram_mb=256"
for n in 0 1; do
	[ -d $VG_CLASS/vgmem$n ] || fail "$VG_CLASS/vgmem$n missing after loading 2 GPUs"
done
[ ! -e $VG_CLASS/vgmem2 ] || fail "$VG_CLASS/vgmem2 exists with gpus=2"
for t in 1g 2g 4g 8g; do
	d=$(type_dir $t 0)
	[ -d "$d" ] || fail "mdev type $d missing"
	[ -f "$d/available_instances" ] || fail "$d/available_instances missing"
	[ -f "$d/create" ] || fail "$d/create missing"
	info "vgmem0 $t: available_instances $(cat $d/available_instances)"
done

# The chunk policy: cold by default, the module parameter's for GPUs
# registered after a change, and a name the core does not know refused.
PP=/sys/module/vgmem/parameters/policy
expect_eq "$(cat $PP)" cold "the policy parameter's default"
expect_eq "$(cat $VG_CLASS/vgmem0/policy)" cold "a new GPU's policy"
echo lru > $PP 2> /dev/null && fail "policy=lru accepted"
expect_eq "$(cat $PP)" cold "the policy parameter after a refused name"
echo random > $PP || fail "setting the policy parameter to random"

rmmod vgmem_sim || fail "rmmod vgmem_sim"
[ ! -e $VG_CLASS/vgmem0 ] || fail "$VG_CLASS/vgmem0 still present after rmmod vgmem_sim"
modprobe vgmem_sim gpus=1 vram_mb=128 || fail "modprobe vgmem_sim gpus=1 vram_mb=128"
expect_eq "$(cat $VG_CLASS/vgmem0/policy)" random "the policy of a GPU registered after policy=random"
[ -d $VG_CLASS/vgmem0 ] || fail "$VG_CLASS/vgmem0 missing with gpus=1"
[ ! -e $VG_CLASS/vgmem1 ] || fail "$VG_CLASS/vgmem1 exists with gpus=1"

# vgmem is in use while GPUs are registered into it.
rmmod vgmem 2>/dev/null && fail "rmmod vgmem succeeded while vgmem_sim uses it"
vg_unload || fail "unloading vgmem_sim and vgmem"
[ ! -d /sys/module/vgmem ] || fail "vgmem still loaded"

# Leave the default configuration for the next cases.
vg_load || fail "reloading with the defaults ($VG_SIM_PARAMS)"
[ -d $VG_CLASS/vgmem0 ] || fail "$VG_CLASS/vgmem0 missing after reload"
