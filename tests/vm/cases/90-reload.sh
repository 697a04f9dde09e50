# SPDX-License-Identifier: GPL-2.0 OR MIT
# 90-reload: unload and load the modules 20 times (with an mdev created and
# removed each time when the software GPU is built) and check nothing leaks:
# kmalloc object counts, vmalloc pages and per-cpu memory come back. Each
# cycle also opens the mdev with a guest that fills and checks 4 MiB. The
# kernel log must stay clean (/init checks it after every case).
# vmtest-timeout: 240

CYCLES=20
# A leak of one object per cycle grows a cache by CYCLES objects; in an idle
# VM (slub_debug on, so no per-cpu slab hides objects) the counts move by 2
# at most once kfree_rcu batches have drained.
SLAB_TOLERANCE=8
VMALLOC_TOLERANCE_KB=256
PERCPU_TOLERANCE_KB=64

# "cache objects" lines for every kmalloc cache, then the meminfo counters.
# kvfree_rcu drains its batches every 5 s, so wait 6 s first. Only shell
# builtins while reading: every process spawned allocates objects that are
# freed through RCU and would show as noise. Writing to a cache's "shrink"
# does the same, so it is not used.
snapshot() {
	# Dentries (kmalloc-rcl-* holds long names, such as the 36-character
	# mdev UUIDs) and inodes are caches, not leaks: drop them. One pass
	# frees the leaves; a parent (UUID/vgmem/...) is only unused once its
	# children are gone, so repeat.
	for pass in 1 2 3 4; do
		echo 3 > /proc/sys/vm/drop_caches
		sleep 2
	done
	sleep 6
	for c in /sys/kernel/slab/kmalloc-*; do
		[ -L $c ] && continue
		read -r n rest < $c/objects
		echo "${c##*/} $n"
	done
	while read -r k v rest; do
		case "$k" in
		VmallocUsed:) echo "@vmalloc $v" ;;
		Percpu:) echo "@percpu $v" ;;
		esac
	done < /proc/meminfo
}

cycle() {
	vg_load gpus=2 vram_mb=64 || fail "cycle $1: loading"
	if have_module vgmem_sim; then
		u=$(mdev_create 1g) || exit 1
		[ "$(mdev_attr $u quota)" -gt 0 ] 2>/dev/null || fail "cycle $1: quota of $u"
		# Open it, use the GPU, close it: the VFIO paths are cycled too.
		if command -v vgmem-guest > /dev/null; then
			guest c$1 --dev $u fill-check --size 4M --bo 2M --seed $i > /dev/null
		fi
		mdev_remove $u
	fi
	vg_unload || fail "cycle $1: unloading"
}

i=0
vg_unload || fail "unloading before the first cycle"
# Warm up: the first loads populate caches the kernel keeps (module
# notes, sysfs lookups) and would read as a leak.
cycle warmup1
cycle warmup2
snapshot > /tmp/slab.before

i=1
while [ $i -le $CYCLES ]; do
	cycle $i
	i=$((i + 1))
done
snapshot > /tmp/slab.after

bad=$(awk -v tol=$SLAB_TOLERANCE -v vtol=$VMALLOC_TOLERANCE_KB -v ptol=$PERCPU_TOLERANCE_KB '
	NR == FNR { before[$1] = $2; next }
	{
		d = $2 - before[$1]
		t = tol
		if ($1 == "@vmalloc") t = vtol
		if ($1 == "@percpu") t = ptol
		if (d > t) printf "%s +%d (%d -> %d); ", $1, d, before[$1], $2
	}' /tmp/slab.before /tmp/slab.after)
info "after $CYCLES cycles: $(awk 'NR == FNR { b[$1] = $2; next } $2 != b[$1] { printf "%s %+d ", $1, $2 - b[$1] }' /tmp/slab.before /tmp/slab.after)"
[ -z "$bad" ] || fail "grew over $CYCLES load/unload cycles: $bad"

vg_load || fail "loading after the cycles"
