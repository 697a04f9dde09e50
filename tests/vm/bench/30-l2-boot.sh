# SPDX-License-Identifier: GPL-2.0 OR MIT
# 30-l2-boot: how long a nested guest (L2) with a vgmem mdev takes to boot
# and power off under nested TCG, for the QEMU machine types and vCPU counts
# a case could use, and where L2's kernel spends its boot (initcall_debug,
# the slowest initcalls). One VMBENCH line per variant with the phases of
# tests/vm/l2.sh's l2_wait. Variants run one after the other, on the same
# mdev, so they see the same host load as far as the host allows.
# vmtest-timeout: 3600
# vmtest-needs: qemu

vg_setup gpus=1 vram_mb=64
u=$(mdev_create 1g) || exit 1
echo 'l2_pass booted' > /tmp/boot-run.sh
cat > /tmp/boot-initcalls.sh <<'L2'
echo "slowest initcalls (usecs):"
dmesg | sed -n 's/.*initcall \([^ ]*\) returned .* after \([0-9]*\) usecs/\2 \1/p' |
	sort -rn | head -n 12
l2_pass booted
L2

i=0
for v in "pc 1" "q35 1" "pc 2" "pc 1 initcall_debug"; do
	set -- $v
	i=$((i + 1))
	script=/tmp/boot-run.sh
	[ -n "${3:-}" ] && script=/tmp/boot-initcalls.sh
	# initcall_debug prints thousands of lines: more than the default
	# 128 KiB log buffer holds.
	l2_start boot$i --mdev $u --script $script --machine $1 --smp $2 \
		--append "${3:+$3 log_buf_len=4M}"
	l2_wait boot$i 1200
	echo "VMBENCH l2-boot $1 smp=$2${3:+ $3}: $(cat "$(l2_dir boot$i)/times") (load $(cut -d' ' -f1-3 /proc/loadavg) in L1)"
done
mdev_remove $u
