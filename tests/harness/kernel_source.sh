#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of scripts/kernel-source.sh, which finds the 7.x kernel
# source: a cached .deb of the pin (and of Debian's configuration of it,
# linux-config-7.N) is used without asking apt; a pin the archive no longer
# has is replaced by the newest linux-source-7.*, with "kernel moved: OLD ->
# NEW" on stderr, and that version's configuration comes with it. Each runs with a cache of its own
# (the real cache's .deb hard-linked in, so nothing large is downloaded
# while the pin is the newest). The second needs the Debian archive, as
# setup does. Prints KTAP.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
real=$("$MLX_EXT_ROOT/scripts/kernel-source.sh" 2>/dev/null | awk '{ print $3 }')

realconfig=$(debian_config_deb "$KERNEL7_PACKAGE" "$KERNEL7_VERSION")

# fresh_cache [FILE...]: an empty cache with FILEs in it, by default the
# real pin's two .debs.
fresh_cache() {
	rm -rf "$tmp/cache"
	mkdir -p "$tmp/cache/sources"
	(($#)) || set -- "$real" "$realconfig"
	for f in "$@"; do
		ln "$f" "$tmp/cache/sources/" 2>/dev/null || cp "$f" "$tmp/cache/sources/"
	done
}

test_cached_pin_needs_no_apt() {
	[ -f "$real" ] || { echo "no 7.x source in the real cache"; return 1; }
	fresh_cache
	out=$(MLX_EXT_CACHE=$tmp/cache "$MLX_EXT_ROOT/scripts/kernel-source.sh" 2>"$tmp/err") || { cat "$tmp/err"; return 1; }
	expect_eq "$out" "$KERNEL7_PACKAGE $KERNEL7_VERSION $tmp/cache/sources/$(basename "$real")" || return 1
	[ ! -e "$tmp/cache/apt" ] || { echo "apt was asked for a cached pin"; return 1; }
}

# The source alone is enough to build: its configuration, fetched when
# asked, never moves the version.
test_cached_source_without_config_needs_no_apt() {
	[ -f "$real" ] || { echo "no 7.x source in the real cache"; return 1; }
	fresh_cache "$real"
	out=$(MLX_EXT_CACHE=$tmp/cache "$MLX_EXT_ROOT/scripts/kernel-source.sh" 2>"$tmp/err") || { cat "$tmp/err"; return 1; }
	expect_eq "$out" "$KERNEL7_PACKAGE $KERNEL7_VERSION $tmp/cache/sources/$(basename "$real")" || return 1
	[ ! -e "$tmp/cache/apt" ] || { echo "apt was asked for a cached pin"; return 1; }
	fresh_cache "$realconfig"
	out=$(MLX_EXT_CACHE=$tmp/cache "$MLX_EXT_ROOT/scripts/kernel-source.sh" config "$KERNEL7_PACKAGE" "$KERNEL7_VERSION" 2>"$tmp/err") ||
		{ cat "$tmp/err"; return 1; }
	expect_eq "$out" "$tmp/cache/sources/$(basename "$realconfig")" "the cached configuration" || return 1
	[ ! -e "$tmp/cache/apt" ] || { echo "apt was asked for a cached configuration"; return 1; }
	# A version the archive does not have is refused, not replaced.
	out=$(MLX_EXT_CACHE=$tmp/cache "$MLX_EXT_ROOT/scripts/kernel-source.sh" config "$KERNEL7_PACKAGE" 7.3.0-0~gone 2>&1) &&
		{ echo "accepted: $out"; return 1; }
	echo "$out" | grep -q "apt-get download linux-config-7.3=7.3.0-0~gone failed" || { echo "$out"; return 1; }
}

test_gone_pin_takes_newest() {
	[ -f "$real" ] || { echo "no 7.x source in the real cache"; return 1; }
	fresh_cache
	out=$(MLX_EXT_CACHE=$tmp/cache MLX_EXT_KERNEL7_VERSION=7.3.0-0~gone \
		"$MLX_EXT_ROOT/scripts/kernel-source.sh" 2>"$tmp/err") || { cat "$tmp/err"; return 1; }
	cat "$tmp/err"
	grep -q "^kernel moved: $KERNEL7_PACKAGE 7.3.0-0~gone -> linux-source-7\.[0-9]* " "$tmp/err" ||
		{ echo "no 'kernel moved' line"; return 1; }
	read -r pkg version deb <<<"$out"
	[[ $pkg == linux-source-7.* ]] || { echo "took '$pkg'"; return 1; }
	[ "$version" != 7.3.0-0~gone ] && [ -s "$deb" ] || { echo "no .deb for '$out'"; return 1; }
	fresh_cache "$real"
	MLX_EXT_CACHE=$tmp/cache debian_config "$pkg" "$version" | grep -x 'CONFIG_RUST=y' >/dev/null ||
		{ echo "no Debian configuration with CONFIG_RUST=y for $pkg $version"; return 1; }
	# Not older than the pin, which the archive had when it was written.
	[ "$(printf '%s\n' "$KERNEL7_VERSION" "$version" | sort -V | tail -n1)" = "$version" ] ||
		{ echo "$version is older than the pin $KERNEL7_VERSION"; return 1; }
}

ktap_run test_cached_pin_needs_no_apt test_cached_source_without_config_needs_no_apt \
	test_gone_pin_takes_newest
