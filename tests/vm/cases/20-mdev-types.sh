# SPDX-License-Identifier: GPL-2.0 OR MIT
# 20-mdev-types: mdevs of every type are created and removed through sysfs;
# available_instances follows the GPU's oversubscription limit exactly; each
# mdev shows its quota and usage; bad requests are refused and change nothing.
# vmtest-timeout: 120

GIB=1073741824
# 256 MiB of VRAM at oversub_pct=1600: 4 GiB of quota to hand out.
vg_setup gpus=2 vram_mb=256
set_oversub 1600

expect_avail() {	# expect_avail GPU A1 A2 A4 A8 WHY
	got="$(avail 1g $1) $(avail 2g $1) $(avail 4g $1) $(avail 8g $1)"
	expect_eq "$got" "$2 $3 $4 $5" "available_instances of 1g 2g 4g 8g on gpu $1 $6"
}

# What schedulers read (deploy/nova, deploy/kubevirt): the parent under
# /sys/class/mdev_bus, each type's id (its directory), device_api, the
# name KubeVirt's mdevNameSelector matches, available_instances.
[ -d /sys/class/mdev_bus/vgmem0/mdev_supported_types ] ||
	fail "vgmem0 is not under /sys/class/mdev_bus (where KubeVirt looks for mdev parents)"
for t in 1g 2g 4g 8g; do
	d=$(type_dir $t)
	[ -d /sys/class/mdev_bus/vgmem0/mdev_supported_types/vgmem-$t ] ||
		fail "type id vgmem-$t missing under /sys/class/mdev_bus/vgmem0"
	expect_eq "$(cat $d/device_api)" "vfio-pci" "$t device_api"
	expect_eq "$(cat $d/name)" "vGPU ${t%g} GiB" "$t name (deploy/kubevirt's mdevNameSelector)"
	case "$(cat $d/available_instances)" in
	'' | *[!0-9]*) fail "$t available_instances is '$(cat $d/available_instances)'" ;;
	esac
	info "$t: $(cat $d/name): $(cat $d/description)"
done
expect_avail 0 4 2 1 0 "at start"
expect_avail 1 4 2 1 0 "at start"

# Each type on its own: create, check its attributes, remove.
for t in 1g 2g 4g; do
	u=$(mdev_create $t) || exit 1
	q=$(mdev_attr $u quota) || exit 1
	expect_eq "$q" "$((${t%g} * GIB))" "quota of a $t mdev"
	expect_eq "$(mdev_attr $u profile)" "$q" "profile of a $t mdev (its type's size)"
	for a in entitlement resident relocated relocations_out relocations_in; do
		v=$(mdev_attr $u $a) || exit 1
		case "$v" in ''|*[!0-9]*) fail "$u/vgmem/$a is '$v', not a decimal" ;; esac
	done
	expect_eq "$(mdev_attr $u resident)" 0 "resident of an unused mdev"
	expect_eq "$(mdev_attr $u relocated)" 0 "relocated of an unused mdev"
	expect_eq "$(basename $(readlink $MDEV_DEVS/$u/mdev_type))" "vgmem-$t" "mdev_type link of $u"
	[ -e $MDEV_DEVS/$u/iommu_group ] || fail "$u has no iommu_group"
	mdev_remove $u
done
expect_avail 0 4 2 1 0 "after create/remove of each type"

# Over the limit: 8g does not fit in 4 GiB.
mdev_try_create 8g > /dev/null && fail "an 8g mdev was admitted on a GPU that admits 4 GiB"
expect_avail 0 4 2 1 0 "after a refused 8g"

# Mixed: 2g then 1g leave 1 GiB; the counts follow.
a=$(mdev_create 2g) || exit 1
expect_avail 0 2 1 0 0 "with one 2g"
expect_avail 1 4 2 1 0 "(other GPU) with one 2g on gpu 0"
b=$(mdev_create 1g) || exit 1
expect_avail 0 1 0 0 0 "with 2g + 1g"
c=$(mdev_create 1g) || exit 1
expect_avail 0 0 0 0 0 "full"
mdev_try_create 1g > /dev/null && fail "a 1g mdev was admitted on a full GPU"

# The same UUID twice is refused, also on another GPU.
echo $a > $(type_dir 1g 1)/create 2>/dev/null && fail "UUID $a accepted twice"
echo not-a-uuid > $(type_dir 1g 1)/create 2>/dev/null && fail "a malformed UUID was accepted"
expect_avail 1 4 2 1 0 "after refused creates on gpu 1"

# Quota changes are admitted against the same limit.
echo $((2 * GIB)) > $MDEV_DEVS/$b/vgmem/quota 2>/dev/null &&
	fail "raising a quota beyond the GPU's limit was accepted"
expect_eq "$(mdev_attr $b quota)" "$GIB" "quota after a refused raise"
echo $((GIB / 2)) > $MDEV_DEVS/$b/vgmem/quota || fail "lowering a quota to 512 MiB"
expect_eq "$(mdev_attr $b quota)" "$((GIB / 2))" "quota after lowering"
expect_avail 0 0 0 0 0 "with 512 MiB free"
echo garbage > $MDEV_DEVS/$b/vgmem/quota 2>/dev/null && fail "quota 'garbage' accepted"
expect_eq "$(mdev_attr $b quota)" "$((GIB / 2))" "quota after garbage"
expect_eq "$(mdev_attr $b profile)" "$GIB" "profile after quota changes (the type's size)"
echo 1 > $MDEV_DEVS/$b/vgmem/profile 2>/dev/null && fail "profile was writable"

# A vGPU pins the software GPU's module.
rmmod vgmem_sim 2>/dev/null && fail "vgmem_sim unloaded while mdevs exist"

mdev_remove $c
mdev_remove $b
expect_avail 0 2 1 0 0 "with one 2g again"
mdev_remove $a
expect_avail 0 4 2 1 0 "after removing all"

# Both GPUs at once, several of each.
us=
for g in 0 1; do
	for t in 1g 1g 2g; do
		u=$(mdev_create $t $g) || exit 1
		us="$us $u"
	done
	expect_avail $g 0 0 0 0 "with 1g+1g+2g"
done
for u in $us; do mdev_remove $u; done
expect_avail 0 4 2 1 0 "at the end"
expect_avail 1 4 2 1 0 "at the end"
