#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# install-check.sh KDIR STAGE: what a user with their own kernel does, run
# against kernel build tree KDIR (make check passes the test kernel's) into
# the staging root STAGE: `make modules KDIR=...` then `make
# modules_install KDIR=... INSTALL_MOD_PATH=STAGE`; checks that mlx_ext.ko
# and mlx_ext_sim.ko (and not the test ULP) are in
# lib/modules/<release>/updates/, that depmod indexed them, and that
# modinfo gives the tree's VERSION. Prints KTAP.
source "$(dirname "$0")/lib.sh"
set +e
. "$MLX_EXT_ROOT/tests/vm/ktap.sh"

[ $# = 2 ] || { echo "usage: install-check.sh KDIR STAGE" >&2; exit 2; }
kdir=$1 stage=$2
release=$(cat "$kdir/include/config/kernel.release")
moddir=$stage/lib/modules/$release/updates
# The toolchain the kernel was built with, as a user would pass it.
export RUSTC=$KRUSTC BINDGEN=$KBINDGEN

test_make_modules() {
	make -s -C "$MLX_EXT_ROOT" modules KDIR="$kdir" >"$stage.log" 2>&1 ||
		{ tail -n 30 "$stage.log"; return 1; }
	for m in mlx_ext mlx_ext_sim; do
		[ -f "$MLX_EXT_ROOT/$m.ko" ] || { echo "no $m.ko"; return 1; }
	done
}

test_modules_install_into_stage() {
	rm -rf "$stage"
	mkdir -p "$stage"
	make -s -C "$MLX_EXT_ROOT" modules_install KDIR="$kdir" INSTALL_MOD_PATH="$stage" \
		>"$stage.log" 2>&1 || { tail -n 30 "$stage.log"; return 1; }
	expect_eq "$(cd "$moddir" 2>/dev/null && ls)" "mlx_ext.ko
mlx_ext_sim.ko" "installed in updates/" || return 1
	grep -q "^updates/mlx_ext.ko:" "$stage/lib/modules/$release/modules.dep" ||
		{ echo "depmod did not index updates/mlx_ext.ko"; return 1; }
}

test_modinfo_version() {
	for m in mlx_ext mlx_ext_sim; do
		expect_eq "$(modinfo -F version "$moddir/$m.ko")" "$(cat "$MLX_EXT_ROOT/VERSION")" "$m version" ||
			return 1
	done
}

ktap_run test_make_modules test_modules_install_into_stage test_modinfo_version
