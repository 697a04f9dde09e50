# SPDX-License-Identifier: GPL-2.0 OR MIT
# shellcheck shell=bash
#
# A private apt configuration, for the scripts that fetch Debian packages
# without touching the system's apt or dpkg (fetch-backports.sh,
# fetch-kernel-6.12.sh, build-qemu72.sh): its own sources list, package
# lists, cache and an empty status file under one directory; the system's
# sources are only read, to find its Debian mirror and that mirror's
# keyring. Nothing is installed through it: callers download and unpack
# with dpkg -x (binary packages) or dpkg-source -x (source packages).
#
# Sourced, not run. After `papt_init DIR SUITE...`, "${PAPT[@]}" are the
# options every apt-get and apt-cache call takes. SUITE is a bookworm
# suite: bookworm, bookworm-updates, bookworm-backports or
# bookworm-security (the last from the mirror's debian-security
# sibling); "src:SUITE" adds its deb-src line.
#
#   papt_init DIR SUITE...  the configuration in DIR (created)
#   papt_update [MAX_AGE_MIN]
#                           read the package lists, from the machine's mirror
#                           and else deb.debian.org, unless some are younger
#                           than MAX_AGE_MIN minutes (default 0: always)
#   papt_mirror             the mirror papt_update used
#
# Environment: DEBIAN_MIRROR overrides the mirror (its keyring is then the
# Debian archive keyring). The caller has set -euo pipefail and a die().

# The machine's mirror for bookworm, with its signed-by keyring: a one-line
# "deb [opts] URI bookworm ..." in sources.list(.d/*.list), or a deb822
# stanza in sources.list.d/*.sources whose Suites has bookworm. Prints
# "URI KEYRING" (KEYRING may be empty) or nothing.
papt_find_mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			opts = ""; i = 2
			if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) { opts = opts " " $i; i++ }
				opts = opts " " $i; i++ }
			if ($(i + 1) == "bookworm") {
				key = ""
				if (match(opts, /signed-by=[^] ]*/)) key = substr(opts, RSTART + 10, RLENGTH - 10)
				print $i, key; exit
			}
		}' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# Stanzas are separated by blank lines; comments are dropped.
		awk 'function flush() {
			if (types ~ /(^| )deb( |$)/ && suites ~ /(^| )bookworm( |$)/ && uris != "" && enabled != "no") {
				split(uris, u, " "); print u[1], key; found = 1; exit
			}
			types = suites = uris = key = enabled = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		{ k = tolower($1); sub(/:$/, "", k); $1 = ""; sub(/^ +/, "")
		  if (k == "types") types = $0; else if (k == "suites") suites = $0
		  else if (k == "uris") uris = $0; else if (k == "signed-by") key = $0
		  else if (k == "enabled") enabled = tolower($0) }
		END { if (!found) flush() }' "$f"
	done
}

papt_init() {
	PAPT_DIR=$1
	shift
	PAPT_SUITES=("$@")
	mkdir -p "$PAPT_DIR/lists/partial" "$PAPT_DIR/cache/archives/partial" \
		"$PAPT_DIR/sources.list.d"
	: > "$PAPT_DIR/status"	# nothing is "installed" here
	PAPT=(-o "Dir::Etc::sourcelist=$PAPT_DIR/sources.list"
		-o "Dir::Etc::sourceparts=$PAPT_DIR/sources.list.d"
		-o "Dir::State::lists=$PAPT_DIR/lists"
		-o "Dir::State::status=$PAPT_DIR/status"
		-o "Dir::Cache=$PAPT_DIR/cache"
		-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
		-o "Acquire::Languages=none"
		-o "APT::Architectures=amd64"
		-o "Debug::NoLocking=1")
	# As root apt downloads as _apt, which cannot write into the checkout.
	if [ "$(id -u)" = 0 ]; then PAPT+=(-o "APT::Sandbox::User=root"); fi
}

# The sources list for mirror $1 with keyring $2 (or the archive's).
papt_sources() {
	local uri=$1 key=${2:-/usr/share/keyrings/debian-archive-keyring.gpg} s type
	for s in "${PAPT_SUITES[@]}"; do
		type=deb
		case "$s" in src:*) type=deb-src; s=${s#src:} ;; esac
		case "$s" in
		*-security) echo "$type [signed-by=$key] ${uri%/debian}/debian-security $s main" ;;
		*) echo "$type [signed-by=$key] $uri $s main" ;;
		esac
	done
}

papt_update() {
	local age=${1:-0} m mirrors=()
	if [ "$age" -gt 0 ] && [ -f "$PAPT_DIR/mirror" ] &&
		[ -n "$(find "$PAPT_DIR/lists" -maxdepth 1 \( -name '*Packages*' -o -name '*Sources*' \) \
			-mmin "-$age" 2> /dev/null)" ]; then
		return 0
	fi
	if [ -n "${DEBIAN_MIRROR:-}" ]; then
		mirrors=("$DEBIAN_MIRROR ")
	else
		mapfile -t mirrors < <(papt_find_mirror | head -n 1)
		mirrors+=("http://deb.debian.org/debian ")
	fi
	for m in "${mirrors[@]}"; do
		papt_sources "${m%% *}" "${m#* }" > "$PAPT_DIR/sources.list"
		if apt-get "${PAPT[@]}" -q update > "$PAPT_DIR/update.log" 2>&1 &&
			! grep -qE '^(E:|W: Failed)' "$PAPT_DIR/update.log"; then
			echo "${m%% *}" > "$PAPT_DIR/mirror"
			return 0
		fi
		echo "private-apt: no package lists from ${m%% *} (log: $PAPT_DIR/update.log)" >&2
	done
	die "cannot read the package lists: $(tail -n 3 "$PAPT_DIR/update.log" | tr '\n' ' ')"
}

papt_mirror() {
	cat "$PAPT_DIR/mirror"
}
