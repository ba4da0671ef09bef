#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host tests of the table of the distribution's module options
# (kernel/distro.config) and of scripts/distro-config.sh, which checks it:
# its "debian" rows are Debian's values in Debian's own configuration of
# the pinned 7.x kernel (linux-config-7.N, fetched with the source by
# scripts/kernel-source.sh); a table that disagrees with Debian, a built
# .config that disagrees with the table, and a row with no source are each
# refused, naming the option. The built kernel's own .config is checked
# against the table by make check (scripts/check.sh, step_distro_config).
# Prints KTAP.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
table=$MLX_EXT_ROOT/kernel/distro.config
dc=$MLX_EXT_ROOT/scripts/distro-config.sh
read -r pkg version _ < <("$MLX_EXT_ROOT/scripts/kernel-source.sh" 2>"$tmp/err")
# In a subshell: debian_config dies where there is no configuration, which
# the first test then reports.
(debian_config "$pkg" "$version") >"$tmp/debian.config" 2>>"$tmp/err"

# built_from TABLE: a .config holding TABLE's rows, as olddefconfig writes
# them.
built_from() {
	grep -E '^(CONFIG_|# CONFIG_)' "$1"
	echo "CONFIG_UNRELATED=y"
}

test_table_rows_are_debians() {
	[ -s "$tmp/debian.config" ] || { cat "$tmp/err"; echo "no Debian configuration of $pkg $version"; return 1; }
	echo "against Debian's config.amd64_none_amd64 of linux-config-${pkg#linux-source-} $version"
	"$dc" debian "$tmp/debian.config"
}

# Each kind of row the table cites: only "debian" rows are held to
# Debian's file (MODVERSIONS is Ubuntu's, and Debian has it off).
test_only_debian_rows_are_held_to_debian() {
	grep -q '^#= ubuntu' "$table" && grep -q '^#= ours' "$table" || { echo "the table lost a kind of row"; return 1; }
	grep -x '# CONFIG_MODVERSIONS is not set' "$tmp/debian.config" >/dev/null ||
		{ echo "Debian's file sets MODVERSIONS now: make its row a debian one"; return 1; }
	"$dc" debian "$tmp/debian.config"
}

test_a_row_debian_does_not_have_is_refused() {
	sed 's/^CONFIG_MODULE_COMPRESS_XZ=y$/CONFIG_MODULE_COMPRESS_ZSTD=y/' "$table" >"$tmp/t"
	out=$("$dc" debian "$tmp/debian.config" "$tmp/t") && { echo "accepted: $out"; return 1; }
	expect_eq "$out" "CONFIG_MODULE_COMPRESS_ZSTD: the table says y, debian.config has n" "refusal"
}

test_built_config_matches() {
	built_from "$table" >"$tmp/built"
	"$dc" built "$tmp/built" || return 1
	# An option Kconfig turned off, and one it left out.
	sed 's/^CONFIG_GENDWARFKSYMS=y$/# CONFIG_GENDWARFKSYMS is not set/; /^CONFIG_MODULE_SIG_ALL=y$/d' \
		"$tmp/built" >"$tmp/built2"
	out=$("$dc" built "$tmp/built2") && { echo "accepted: $out"; return 1; }
	expect_eq "$out" "CONFIG_GENDWARFKSYMS: the table says y, built2 has n
CONFIG_MODULE_SIG_ALL: the table says y, built2 has n" "refusal" || return 1
	# An unset row, set.
	sed 's/^# CONFIG_DEBUG_INFO_REDUCED is not set$/CONFIG_DEBUG_INFO_REDUCED=y/' "$tmp/built" >"$tmp/built3"
	out=$("$dc" built "$tmp/built3") && { echo "accepted: $out"; return 1; }
	expect_eq "$out" "CONFIG_DEBUG_INFO_REDUCED: the table says n, built3 has y" "refusal"
}

# A row tagged ubuntu or ours whose value is Debian's after all is said to
# be one of Debian's.
test_a_stale_tag_is_refused() {
	sed 's/^#= debian$/#= ours: stale/' "$table" >"$tmp/t"
	out=$("$dc" debian "$tmp/debian.config" "$tmp/t") && { echo "accepted: $out"; return 1; }
	echo "$out" | grep -qx "CONFIG_MODULE_SIG: tagged ours, but Debian's file has y too: tag it debian" ||
		{ echo "$out"; return 1; }
}

test_a_row_without_source_is_refused() {
	{ echo "CONFIG_FIRST=y"; cat "$table"; } >"$tmp/t"
	built_from "$tmp/t" >"$tmp/built"
	out=$("$dc" built "$tmp/built" "$tmp/t") && { echo "accepted: $out"; return 1; }
	expect_eq "$out" "$tmp/t: CONFIG_FIRST has no '#=' source above it" "refusal"
}

ktap_run test_table_rows_are_debians test_only_debian_rows_are_held_to_debian \
	test_a_row_debian_does_not_have_is_refused test_built_config_matches \
	test_a_stale_tag_is_refused test_a_row_without_source_is_refused
