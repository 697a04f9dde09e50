# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# A Debian 12 root made with debootstrap, as tests/deb/test_deb.sh (the
# packages' install test) and tests/walk/walk.sh (docs/operations.md walked
# on a booted Debian) use it: sourced, not run.
#
# The caller sets, before sourcing:
#   ROOT   the repository;  C  the cache directory (build/...);
#   R      the root (a directory below C);  SUITE  bookworm;
# and defines die MESSAGE [DETAIL...] (does not return) and stamp MESSAGE.
#
# Roots come in two layers. The common layer (debootstrap --variant=minbase
# plus ROOT_COMMON_PKGS: DKMS and the headers as an operator installs them,
# libc6-dev and pkg-config as a tenant's build image has them) is made once
# and kept as build/debroot/common-KEY.tar.zst; the package test's root is
# that layer. A caller's base root is the common layer plus its own packages
# (the walk's: systemd, the kernel, libvirt, ...), made once and kept as
# C/base-KEY.tar.zst. KEY is a hash of the inputs (suite, mirror, apt
# sources, packages, the recipes' versions, the layer's key); each run
# unpacks a base afresh, so no run sees another's packages. The .debs apt
# downloads are kept in build/debroot/archives/ for every later root: the
# two tests, run one after the other, debootstrap once and fetch what they
# share once.
#
# Needs root (debootstrap, chroot, mounts), debootstrap, zstd and the
# Debian mirror. Environment: MIRROR overrides the mirror read from
# /etc/apt/sources.list*.

PATH=$PATH:/usr/sbin:/sbin

ROOT_COMMON_PKGS="dkms linux-headers-amd64 libc6-dev pkg-config"
# Bump when the recipe of the common layer changes (forces a new debootstrap).
ROOT_COMMON_RECIPE=1
ROOT_COMMON=$ROOT/build/debroot
ROOT_ARCHIVES=$ROOT_COMMON/archives

# ---- the mirror and the apt sources, as this machine's apt has them --------
# Sets MIRROR and root_sources (the deb822 file naming SUITE, or empty).
root_find_mirror()
{
	local f
	root_sources=
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && grep -q "^Suites:.*\b$SUITE\b" "$f" && { root_sources=$f; break; }
	done
	if [ -z "${MIRROR:-}" ]; then
		if [ -n "$root_sources" ]; then
			# The URIs of the stanza whose Suites has the release itself.
			MIRROR=$(awk -v s="$SUITE" 'BEGIN { RS = ""; FS = "\n" }
				{ u = ""; m = 0
				  for (i = 1; i <= NF; i++) {
					if ($i ~ /^URIs:/) { u = $i; sub(/^URIs:[ \t]*/, "", u); sub(/[ \t].*/, "", u) }
					if ($i ~ /^Suites:/ && (" " $i " ") ~ (" " s " ")) m = 1 }
				  if (m && u != "") { print u; exit } }' "$root_sources")
		else
			MIRROR=$(sed -n "s/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) $SUITE .*/\2/p" /etc/apt/sources.list 2>/dev/null | head -n 1)
		fi
	fi
	[ -n "${MIRROR:-}" ] || die "a Debian mirror for $SUITE in /etc/apt/sources.list*" "none found; set MIRROR="
}

# ---- mounts: always undone --------------------------------------------------
root_umount_all()
{
	local m
	# Deepest first; the rbind of /dev brings submounts of its own.
	for m in $(awk -v r="$R" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
}

root_mount_all()
{
	mount -t proc proc "$R/proc" && mount -t sysfs sysfs "$R/sys" &&
		mount --rbind /dev "$R/dev" && mount --make-rslave "$R/dev" &&
		mount -t tmpfs tmpfs "$R/run" && mount -t tmpfs tmpfs "$R/tmp"
}

# Deletes the root, never through a mount that is still there (/dev is the
# host's): refuses while anything is mounted beneath it, and rm stays on
# the root's own file system anyway.
root_rm()
{
	if awk -v r="$R" '$2 == r || index($2, r "/") == 1 { found = 1 } END { exit !found }' /proc/mounts; then
		echo "root: not deleting $R: still mounted beneath it" >&2
		return 1
	fi
	rm -rf --one-file-system "$R"
}

# Runs a shell command in the root, with a clean environment.
in_root()
{
	env -i HOME=/root TERM=dumb LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		chroot "$R" /bin/sh -c "$1"
}

# Keeps what apt downloaded, for the next run and the next base.
root_save_archives()
{
	mkdir -p "$ROOT_ARCHIVES"
	cp -n "$R"/var/cache/apt/archives/*.deb "$ROOT_ARCHIVES/" 2>/dev/null || true
}

# Puts the kept downloads where apt in the root looks first.
root_give_archives()
{
	mkdir -p "$R/var/cache/apt/archives"
	cp "$ROOT_ARCHIVES"/*.deb "$R/var/cache/apt/archives/" 2>/dev/null || true
}

# Installs PACKAGES (--no-install-recommends) into the root R being made,
# with no service started (no systemd runs), logging to LOG.
root_install_base_pkgs()
{
	local pkgs=$1 log=$2
	printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"
	chmod 0755 "$R/usr/sbin/policy-rc.d"
	root_mount_all || die "mounting /proc, /sys, /dev, /run and /tmp in the root"
	in_root "apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs" \
		> "$log" 2>&1 || die "installing $pkgs in the root" "$(tail -n 10 "$log")"
	root_save_archives
	in_root "apt-get clean"
	rm -f "$R/usr/sbin/policy-rc.d"
	root_umount_all
}

# Packs the root R as TAR (atomically).
root_pack()
{
	tar -C "$R" -I 'zstd -T0 -3' -cf "$1.tmp" . && mv "$1.tmp" "$1" ||
		die "keeping the base root" "tar failed"
}

# Sets root_common_tar to the common layer, making it first if needed
# (in R, which it empties).
root_common()
{
	local key
	root_find_mirror
	key=$( { echo "$SUITE minbase $MIRROR $ROOT_COMMON_PKGS $ROOT_COMMON_RECIPE"
		 [ -n "$root_sources" ] && cat "$root_sources"; } | sha256sum | cut -c1-16)
	root_common_tar=$ROOT_COMMON/common-$key.tar.zst
	[ -f "$root_common_tar" ] && return 0

	stamp "debootstrap --variant=minbase $SUITE from $MIRROR, then $ROOT_COMMON_PKGS (once; kept as ${root_common_tar#$ROOT/})"
	mkdir -p "$ROOT_COMMON"
	root_umount_all
	root_rm || die "deleting the old root $R" "something is still mounted beneath it"
	mkdir -p "$R"
	debootstrap --variant=minbase "$SUITE" "$R" "$MIRROR" > "$ROOT_COMMON/debootstrap.log" 2>&1 ||
		die "debootstrap $SUITE" "failed: $(tail -n 5 "$ROOT_COMMON/debootstrap.log")" \
		    "log: $ROOT_COMMON/debootstrap.log"
	# The release, its updates and security, from this machine's sources.
	if [ -n "$root_sources" ]; then
		cp "$root_sources" "$R/etc/apt/sources.list.d/"
		: > "$R/etc/apt/sources.list"
	fi
	cp /etc/resolv.conf "$R/etc/resolv.conf"
	root_give_archives
	root_install_base_pkgs "$ROOT_COMMON_PKGS" "$ROOT_COMMON/common.log"
	root_pack "$root_common_tar"
	root_fresh=$root_common_tar
	rm -f $(ls "$ROOT_COMMON"/common-*.tar.zst | grep -vxF "$root_common_tar")	# other inputs'
	stamp "common layer kept: $(du -h "$root_common_tar" | cut -f1)"
}

# root_base PACKAGES RECIPE: sets root_base_tar to the cached base root,
# the common layer with PACKAGES installed (--no-install-recommends),
# making either first if needed. No PACKAGES: the common layer itself.
root_base()
{
	local pkgs=$1 recipe=$2 key
	root_common
	if [ -z "$pkgs" ]; then
		root_base_tar=$root_common_tar
		return 0
	fi
	key=$(echo "$root_common_tar $pkgs $recipe" | sha256sum | cut -c1-16)
	root_base_tar=$C/base-$key.tar.zst
	[ -f "$root_base_tar" ] && return 0

	stamp "the common layer, then $pkgs (once; kept as ${root_base_tar#$ROOT/})"
	mkdir -p "$C"
	root_unpack_tar "$root_common_tar"
	root_install_base_pkgs "$pkgs" "$C/base.log"
	root_pack "$root_base_tar"
	root_fresh=$root_base_tar
	rm -f $(ls "$C"/base-*.tar.zst | grep -vxF "$root_base_tar")	# bases of other inputs
	stamp "base root kept: $(du -h "$root_base_tar" | cut -f1)"
}

# Empties R and unpacks TAR into it, with the kept downloads. A root R
# that was just made and packed as TAR is TAR already (root_fresh): it is
# kept, which saves unpacking gigabytes on a first run.
root_unpack_tar()
{
	root_umount_all
	if [ "${root_fresh:-}" != "$1" ] || [ ! -d "$R" ]; then
		root_rm || die "deleting the old root $R" "something is still mounted beneath it"
		mkdir -p "$R"
		tar -C "$R" -I zstd -xf "$1" || die "unpacking $1"
	fi
	root_fresh=
	root_give_archives
	cp /etc/resolv.conf "$R/etc/resolv.conf"
}

# Unpacks the base root afresh into R (unless R was just made as it), with
# the downloads kept.
root_unpack()
{
	if [ "${root_fresh:-}" = "$root_base_tar" ] && [ -d "$R" ]; then
		stamp "the base root just made is ${R#$ROOT/}"
	else
		stamp "unpacking the base root into ${R#$ROOT/}"
	fi
	root_unpack_tar "$root_base_tar"
}
