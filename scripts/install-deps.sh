#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Installs the Debian packages vgmem needs to build and test. Idempotent and
# quick when everything is present: it asks dpkg first and only runs
# apt-get (update + install) for what is missing. Needs root for that.
set -euo pipefail

PKGS=(
	build-essential		# gcc, make, libc headers
	pkg-config
	libcmocka-dev		# unit and integration tests
	libjansson-dev		# vgmem-sim scenario files
	libdrm-dev		# nouveau class ids (libdrm/nouveau/nvif/class.h)
	linux-headers-amd64	# make module (pulls the matching linux-kbuild)
	kmod			# modinfo/insmod for the module
	coreutils		# timeout(1) for the per-test limit
	qemu-system-x86		# tests/vm: boots Debian's kernel under TCG
	busybox-static		# tests/vm: the test VM's userspace
	cpio			# tests/vm: initramfs
	binutils		# tests/vm: strip/readelf for the initramfs
	libvirt-dev		# mgmtd: libvirt domains, events, migration
	libsqlite3-dev		# mgmtd: durable state (policy, events)
	libxml2-dev		# mgmtd: domain XML (hostdev mdev, metadata)
	libmicrohttpd-dev	# mgmtd REST server
	libcurl4-openssl-dev	# vgmemctl and the REST tests
	zlib1g-dev		# mgmtd: gzip of cached REST answers
	wrk			# make bench: REST load generator
	libvirt-daemon-system	# test_mgmtd_libvirtd: a private libvirtd (qemu driver)
	libvirt-clients		# test_mgmtd_libvirtd: virsh define/metadata
	libvirt-daemon-driver-qemu	# test_mgmtd_migrate: live migration between two private libvirtds (with qemu-system-x86, virsh)
)

missing=()
for p in "${PKGS[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing ${missing[*]} and not root; install them with apt-get" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
