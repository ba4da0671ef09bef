#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Static test of Kbuild's bindgen flag filter: every flag the kernel's own
# rust/Makefile keeps from libclang (bindgen_skip_c_flags) is filtered by
# mlx_ext's copy (mlx_ext_bindgen_skip_c_flags), for each kernel source
# the harness builds (6.12 and the 7.x of scripts/kernel-source.sh). The
# compilers of Ubuntu and Arch (GCC 15, 16) emit flags that GCC 12 here
# never does, so a missing one would only fail on their kernels. And the
# kernel's rust/bindgen_parameters, which mlx_ext carries in its own
# (rust/ib/bindgen_parameters) because a headers package need not have it:
# every line of each tested kernel's is there, but pin-init's
# --with-derive-custom-* (Kbuild says why). Prints KTAP.
source "$(dirname "$0")/../../scripts/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/lib/ktap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# skip_list FILE VAR: the words of the make variable VAR in FILE (its
# continuation lines joined), one per line.
skip_list() {
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1" |
		sed -n "s/^$2[[:space:]]*:=//p" | tr -s ' \t' '\n' | sed '/^$/d'
}

# covered SRC_MAKEFILE: every flag of its list in Kbuild's.
covered() {
	local missing
	skip_list "$1" bindgen_skip_c_flags >"$tmp/kernel"
	skip_list "$MLX_EXT_ROOT/Kbuild" mlx_ext_bindgen_skip_c_flags >"$tmp/ours"
	[ -s "$tmp/kernel" ] || { echo "no bindgen_skip_c_flags in $1"; return 1; }
	missing=$(grep -vxF -f "$tmp/ours" "$tmp/kernel")
	[ -z "$missing" ] || { echo "not filtered by Kbuild: $(echo $missing)"; return 1; }
	echo "$(wc -l <"$tmp/kernel") flags, all filtered"
}

# carried PARAMETERS_FILE: every line of the kernel's bindgen_parameters
# in ours, patterns compared without their quotes.
carried() {
	local missing
	grep -Ev '^#|^$|^--with-derive-custom' "$1" >"$tmp/kparams"
	[ -s "$tmp/kparams" ] || { echo "no parameters in $1"; return 1; }
	grep -Ev '^#|^$' "$MLX_EXT_ROOT/rust/ib/bindgen_parameters" | sed "s/ '\(.*\)'$/ \1/" >"$tmp/ours"
	missing=$(grep -vxF -f "$tmp/ours" "$tmp/kparams")
	[ -z "$missing" ] || { echo "not in rust/ib/bindgen_parameters: $(echo $missing)"; return 1; }
	echo "$(wc -l <"$tmp/kparams") parameters, all carried"
}

unpack_612() {
	[ -d "$tmp/linux-source-6.12" ] ||
		tar -xJf "$KERNEL612_TAR" -C "$tmp" --wildcards '*/rust/Makefile' '*/rust/bindgen_parameters'
}
unpack_7() {
	read -r pkg _ deb < <("$MLX_EXT_ROOT/scripts/kernel-source.sh" 2>/dev/null) || { echo "no 7.x source"; return 1; }
	[ -d "$tmp/$pkg" ] || dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" |
		tar -xJ -C "$tmp" --wildcards '*/rust/Makefile' '*/rust/bindgen_parameters'
}

test_kernel_612() {
	unpack_612 || return 1
	covered "$tmp"/linux-source-6.12/rust/Makefile
}

test_kernel_7() {
	unpack_7 || return 1
	covered "$tmp/$pkg/rust/Makefile"
}

test_parameters_612() {
	unpack_612 || return 1
	carried "$tmp"/linux-source-6.12/rust/bindgen_parameters
}

test_parameters_7() {
	unpack_7 || return 1
	carried "$tmp/$pkg/rust/bindgen_parameters"
}

ktap_run test_kernel_612 test_kernel_7 test_parameters_612 test_parameters_7
