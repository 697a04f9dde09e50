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
# The base root (debootstrap --variant=minbase plus the caller's packages)
# is made once and kept as C/base-KEY.tar.zst, KEY a hash of its inputs
# (suite, mirror, apt sources, packages, the caller's recipe version); each
# run unpacks it afresh, so no run sees another's packages. The .debs apt
# downloads are kept in C/archives/ for the next run and the next base.
#
# Needs root (debootstrap, chroot, mounts), debootstrap, zstd and the
# Debian mirror. Environment: MIRROR overrides the mirror read from
# /etc/apt/sources.list*.

PATH=$PATH:/usr/sbin:/sbin

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
	mkdir -p "$C/archives"
	cp -n "$R"/var/cache/apt/archives/*.deb "$C/archives/" 2>/dev/null || true
}

# root_base PACKAGES RECIPE: sets root_base_tar to the cached base root with
# PACKAGES installed (--no-install-recommends), making it first if needed.
root_base()
{
	local pkgs=$1 recipe=$2 key
	root_find_mirror
	key=$( { echo "$SUITE minbase $MIRROR $pkgs $recipe"; [ -n "$root_sources" ] && cat "$root_sources"; } |
		sha256sum | cut -c1-16)
	root_base_tar=$C/base-$key.tar.zst
	[ -f "$root_base_tar" ] && return 0

	stamp "debootstrap --variant=minbase $SUITE from $MIRROR, then $pkgs (once; kept as ${root_base_tar#$ROOT/})"
	mkdir -p "$C"
	root_umount_all
	root_rm || die "deleting the old root $R" "something is still mounted beneath it"
	mkdir -p "$R"
	debootstrap --variant=minbase "$SUITE" "$R" "$MIRROR" > "$C/debootstrap.log" 2>&1 ||
		die "debootstrap $SUITE" "failed: $(tail -n 5 "$C/debootstrap.log")" "log: $C/debootstrap.log"
	# The release, its updates and security, from this machine's sources.
	if [ -n "$root_sources" ]; then
		cp "$root_sources" "$R/etc/apt/sources.list.d/"
		: > "$R/etc/apt/sources.list"
	fi
	cp /etc/resolv.conf "$R/etc/resolv.conf"
	mkdir -p "$R/var/cache/apt/archives"
	cp "$C"/archives/*.deb "$R/var/cache/apt/archives/" 2>/dev/null || true
	# No service is started while the base is made (no systemd runs).
	printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"
	chmod 0755 "$R/usr/sbin/policy-rc.d"
	root_mount_all || die "mounting /proc, /sys, /dev, /run and /tmp in the root"
	in_root "apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs" \
		> "$C/base.log" 2>&1 || die "installing $pkgs in the root" "$(tail -n 10 "$C/base.log")"
	root_save_archives
	in_root "apt-get clean"
	rm -f "$R/usr/sbin/policy-rc.d"
	root_umount_all
	tar -C "$R" -I 'zstd -T0 -3' -cf "$root_base_tar.tmp" . && mv "$root_base_tar.tmp" "$root_base_tar" ||
		die "keeping the base root" "tar failed"
	rm -f $(ls "$C"/base-*.tar.zst | grep -vxF "$root_base_tar")	# bases of other inputs
	stamp "base root kept: $(du -h "$root_base_tar" | cut -f1)"
}

# Unpacks the base root afresh into R, with the archives apt kept.
root_unpack()
{
	stamp "unpacking the base root into ${R#$ROOT/}"
	root_umount_all
	root_rm || die "deleting the old root $R" "something is still mounted beneath it"
	mkdir -p "$R"
	tar -C "$R" -I zstd -xf "$root_base_tar" || die "unpacking $root_base_tar"
	mkdir -p "$R/var/cache/apt/archives"
	cp "$C"/archives/*.deb "$R/var/cache/apt/archives/" 2>/dev/null || true
	cp /etc/resolv.conf "$R/etc/resolv.conf"
}
