#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# install-check.sh KDIR STAGE: what a user with their own kernel does, run
# against kernel build tree KDIR (make check passes the test kernel's) into
# the staging root STAGE: `make modules KDIR=...` then `make
# modules_install KDIR=... INSTALL_MOD_PATH=STAGE`; checks that mlx_ext.ko
# and mlx_ext_sim.ko (and not the test ULP) are in
# lib/modules/<release>/updates/, that depmod indexed them, and that
# modinfo gives the tree's VERSION; then `make headers_install
# DESTDIR=STAGE` and the sample ULP (samples/mlx_ext_caps), copied out of
# the tree and built against the installed files only. Prints KTAP.
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

test_headers_install() {
	dir=$(make -s -C "$MLX_EXT_ROOT" headers_install KDIR="$kdir" DESTDIR="$stage" 2>"$stage.log") ||
		{ cat "$stage.log"; return 1; }
	expect_eq "$dir" "$stage/usr/src/mlx_ext/$(uname -m)/$release" "where" || return 1
	expect_eq "$(cd "$dir" && find . -type f | sort | tr '\n' ' ')" \
		"./Module.symvers ./include/mlx_ext/mlx_ext.h ./include/mlx_ext/version.h " "files" || return 1
	grep -q "^#define MLX_EXT_RELEASE \"$(cat "$MLX_EXT_ROOT/VERSION")\"$" "$dir/include/mlx_ext/version.h" ||
		{ echo "version.h: $(cat "$dir/include/mlx_ext/version.h")"; return 1; }
	# Every export of mlx_ext.ko, nothing else.
	expect_eq "$(cut -f2 "$dir/Module.symvers" | sort | tr '\n' ' ')" \
		"$(grep -o 'EXPORT_SYMBOL_GPL([a-z_]*)' "$MLX_EXT_ROOT/rust/helpers/export.c" |
			sed 's/.*(\(.*\))/\1/' | sort | tr '\n' ' ')" "symbols" || return 1
}

# The sample ULP, copied where nothing of mlx_ext's tree is near, built with
# the two Kbuild lines a ULP needs, against the installed files only.
test_sample_builds_against_installed_files() {
	dir=$stage/usr/src/mlx_ext/$(uname -m)/$release
	src=$stage/sample
	rm -rf "$src"
	cp -r "$MLX_EXT_ROOT/samples/mlx_ext_caps" "$src"
	vars=(M="$src" MLX_EXT_DIR="$dir" RUSTC="$RUSTC" BINDGEN="$BINDGEN")
	if grep -q '^CONFIG_CC_IS_CLANG=y' "$kdir/.config"; then vars+=(LLVM=1); fi
	make -C "$kdir" "${vars[@]}" modules >"$stage.log" 2>&1 || { tail -n 30 "$stage.log"; return 1; }
	if grep -E 'WARNING|undefined' "$stage.log"; then return 1; fi
	deps=$(modinfo -F depends "$src/mlx_ext_caps.ko")
	case ",$deps," in
	*,mlx_ext,*) echo "depends: $deps" ;;
	*) echo "depends '$deps' lacks mlx_ext"; return 1 ;;
	esac
}

ktap_run test_make_modules test_modules_install_into_stage test_modinfo_version \
	test_headers_install test_sample_builds_against_installed_files
