# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Helpers for the scripts run inside the nested guest (L2, busybox sh):
# /l2/init sources this before /l2/run.sh. A script reports with l2_pass and
# l2_fail (lines L1's l2_wait judges) and ends with its status.

l2_pass() {
	echo "L2 PASS $*"
}

l2_fail() {
	echo "L2 FAIL $*"
	return 1
}

# l2_vggd ARGS...: the guest driver's checks (vggd-check ARGS), their PASS
# and FAIL lines as L2's; an exit status other than 0 fails too.
l2_vggd() {
	{ vggd-check "$@"; echo "rc=$?" > /tmp/gd.rc; } |
		sed 's/^PASS /L2 PASS /; s/^FAIL /L2 FAIL /'
	[ "$(cat /tmp/gd.rc)" = rc=0 ] || l2_fail "vggd-check $*: $(cat /tmp/gd.rc)"
}

# l2_uptime: seconds since L2's kernel started, for phase timings.
l2_uptime() {
	cut -d' ' -f1 /proc/uptime
}

# l2_mount_share TAG DIR: loads virtio-fs (the module closure L1's
# mkl2.sh put into /l2/share-modules, in dependency order) and mounts
# the share L1's virtiofsd serves under TAG at DIR.
l2_mount_share() {
	for ko in $(cat /l2/share-modules/order); do
		# Already loaded (a second share) is fine: the mount decides.
		insmod "/l2/share-modules/$ko" 2>/dev/null
	done
	mkdir -p "$2"
	out=$(mount -t virtiofs "$1" "$2" 2>&1) || {
		l2_fail "mount virtiofs $1 on $2: $out"
		return 1
	}
}
