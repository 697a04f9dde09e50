# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Helpers of the host-side scripts that stage programs into the VM images
# (mkinitramfs.sh, mkl2.sh, mklibvirt.sh; bash). Not the in-VM lib.sh.

# ldd_libs PROG...: the shared libraries the programs need, at the paths ldd
# names ("libx.so => /path (addr)"), and the dynamic loader ("/path
# (addr)"), each once, sorted. Programs that do not exist are left out.
ldd_libs() {
	local b
	for b in "$@"; do
		[ -e "$b" ] || continue
		ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
	done | sort -u
}
