#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kernel-source.sh: makes sure the 7.x kernel source (Debian's
# $KERNEL7_PACKAGE $KERNEL7_VERSION, lib.sh) is in the cache and prints
# "PACKAGE VERSION DEB" on stdout. Debian's configuration of the same
# version (linux-config-7.N, debian_config_deb in lib.sh) comes with a
# download of the source.
#
# kernel-source.sh config PACKAGE VERSION: makes sure Debian's configuration
# of linux-source-7.N VERSION is in the cache and prints its .deb; it never
# takes another version (scripts/distro-config.sh holds kernel/distro.config
# to it, debian_config in lib.sh).
#
# apt reaches trixie-backports through a private sources list, state and
# cache under $MLX_EXT_CACHE/apt: the machine's own apt configuration is
# read (the archive's URI) and never changed. bookworm's
# debian-archive-keyring verifies the newer suites' signatures
# (../shared/ENVIRONMENT.md, "Kernels beyond 6.12").
#
# The .deb is kept under $MLX_EXT_CACHE/sources, keyed by version, so the
# pin survives the archive dropping it. Where it is neither cached nor in
# the archive, the newest linux-source-7.* there is taken, and stderr says
# "kernel moved: OLD -> NEW" (scripts/check.sh turns it into a KTAP line).
source "$(dirname "$0")/lib.sh"

srcdir=$MLX_EXT_CACHE/sources
deb_of() { echo "$srcdir/${1}_${2}_all.deb"; }

mode=source
if [ "${1:-}" = config ]; then
	[ $# = 3 ] || die "usage: kernel-source.sh [config PACKAGE VERSION]"
	mode=config
	config=$(debian_config_deb "$2" "$3")
	if [ -f "$config" ]; then
		echo "$config"
		exit 0
	fi
else
	# The cached source is enough: its configuration is fetched when asked.
	pinned=$(deb_of "$KERNEL7_PACKAGE" "$KERNEL7_VERSION")
	if [ -f "$pinned" ]; then
		echo "$KERNEL7_PACKAGE $KERNEL7_VERSION $pinned"
		exit 0
	fi
fi

# The archive's URI: the machine's own Debian archive, the source that
# serves the machine's release (VERSION_CODENAME) and its main component
# from a URI ending in /debian, in deb822 (*.sources) or one-line (*.list)
# form.
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
shopt -s nullglob
deb822=(/etc/apt/sources.list.d/*.sources)
oneline=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list)
uri=$(awk -v rel="$codename" '
	# deb822: stanzas separated by blank lines.
	FILENAME ~ /\.sources$/ {
		if ($0 ~ /^[[:space:]]*$/) { u = ""; s = ""; c = ""; next }
		if ($1 == "URIs:") u = $2
		if ($1 == "Suites:") s = " " $0 " "
		if ($1 == "Components:") c = " " $0 " "
		if (u ~ /\/debian\/?$/ && s ~ (" " rel " ") && c ~ / main /) { print u; exit }
		next
	}
	# One line: deb [options] URI SUITE COMPONENTS...
	$1 == "deb" {
		i = 2
		if ($i ~ /^\[/) while ($i !~ /\]$/ && i < NF) i++
		if ($i ~ /^\[/ || $i ~ /\]$/) i++
		main = 0
		for (j = i + 2; j <= NF; j++) if ($j == "main") main = 1
		if ($i ~ /\/debian\/?$/ && $(i + 1) == rel && main) { print $i; exit }
	}' "${deb822[@]}" "${oneline[@]}" 2>/dev/null || true)
[ -n "$uri" ] || die "kernel source: no Debian archive for '$codename' in /etc/apt/sources.list{,.d}: cannot fetch $KERNEL7_PACKAGE"

apt=$MLX_EXT_CACHE/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$srcdir"
echo "deb [arch=amd64] $uri $KERNEL7_SUITE main" >"$apt/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	-o Acquire::Languages=none -o APT::Get::List-Cleanup=false -o APT::Sandbox::User=root)
say "kernel source: apt-get update of $KERNEL7_SUITE (private lists in $apt)"
apt-get "${opts[@]}" -qq update >&2 || die "kernel source: apt-get update of $KERNEL7_SUITE failed (no access to $uri?)"

# download PACKAGE VERSION FILE: PACKAGE=VERSION from the archive into FILE.
download() {
	local tmp got
	tmp=$(mktemp -d "$srcdir/.download.XXXXXX")
	(cd "$tmp" && apt-get "${opts[@]}" -qq download "$1=$2" >&2) ||
		{ rm -rf "$tmp"; die "kernel source: apt-get download $1=$2 failed"; }
	got=("$tmp"/*.deb)
	[ ${#got[@]} = 1 ] || { rm -rf "$tmp"; die "kernel source: apt-get download $1=$2 left no .deb"; }
	mv "${got[0]}" "$3"
	rmdir "$tmp"
}

if [ "$mode" = config ]; then
	say "kernel source: downloading linux-config-${2#linux-source-} $3 (Debian's configuration)"
	download "linux-config-${2#linux-source-}" "$3" "$config"
	echo "$config"
	exit 0
fi

pkg=$KERNEL7_PACKAGE version=$KERNEL7_VERSION
if ! apt-cache "${opts[@]}" madison "$pkg" 2>/dev/null | awk -F' *[|] *' '{ print $2 }' | grep -qxF "$version"; then
	# The newest version of the newest linux-source-7.N.
	read -r pkg version < <(apt-cache "${opts[@]}" search --names-only '^linux-source-7\.[0-9]+$' 2>/dev/null |
		awk '{ print $1 }' | while read -r p; do
			apt-cache "${opts[@]}" madison "$p" | awk -F' *[|] *' -v p="$p" '{ print p, $2 }'
		done | sort -V -k2 | tail -n1) || true
	[ -n "${version:-}" ] ||
		die "kernel source: neither $KERNEL7_PACKAGE $KERNEL7_VERSION nor any linux-source-7.* in $KERNEL7_SUITE"
	echo "kernel moved: $KERNEL7_PACKAGE $KERNEL7_VERSION -> $pkg $version (the pin in scripts/lib.sh is no longer in $KERNEL7_SUITE)" >&2
fi
deb=$(deb_of "$pkg" "$version")
if [ ! -f "$deb" ]; then
	say "kernel source: downloading $pkg $version (about 170 MB)"
	download "$pkg" "$version" "$deb"
fi
config=$(debian_config_deb "$pkg" "$version")
if [ ! -f "$config" ]; then
	say "kernel source: downloading linux-config-${pkg#linux-source-} $version (Debian's configuration)"
	download "linux-config-${pkg#linux-source-}" "$version" "$config"
fi
echo "$pkg $version $deb"
