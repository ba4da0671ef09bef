#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kernel-checks.sh KDIR: checks, before anything is compiled, that mlx_ext
# can be built against the kernel build tree KDIR with the toolchain it
# will be given (RUSTC, BINDGEN in the environment, default rustc and
# bindgen on PATH). Stops at the first problem with one line saying what is
# wrong and what to do; prints nothing and exits 0 when all is well.
#
# An out-of-tree Rust module links against the kernel crate's metadata
# (rust/libkernel.rmeta and the others) and its procedural macros
# (rust/libmacros.so), which only a full kernel build has: 6.12's
# `make install-extmod-build` (what distributions package as headers)
# ships none of them. The metadata is only usable by the very rustc that
# made it, and the bindings only by the same bindgen: both must be the
# versions the kernel records in CONFIG_RUSTC_VERSION_TEXT and
# CONFIG_BINDGEN_VERSION_TEXT.
set -euo pipefail

fail() {
	printf 'mlx_ext: cannot build against %s: %s\n' "$kdir" "$*" >&2
	exit 1
}

[ $# = 1 ] || { echo "usage: kernel-checks.sh KDIR" >&2; exit 2; }
kdir=$1
rustc=${RUSTC:-rustc}
bindgen=${BINDGEN:-bindgen}

[ -d "$kdir" ] ||
	fail "no such directory (install the kernel's build tree, or pass KDIR=/path/to/kernel/build)"
[ -f "$kdir/Makefile" ] && [ -f "$kdir/.config" ] ||
	fail "not a configured kernel build tree (no Makefile or .config)"

# config NAME: the value of CONFIG_NAME in the tree's .config, or nothing.
config() {
	sed -n "s/^CONFIG_$1=//p" "$kdir/.config" | tail -n1 | sed 's/^"\(.*\)"$/\1/'
}

[ "$(config RUST)" = y ] ||
	fail "the kernel was configured without CONFIG_RUST: mlx_ext is a Rust module (build a kernel with CONFIG_RUST=y)"
case "$(config INFINIBAND)" in
y | m) ;;
*) fail "the kernel was configured without CONFIG_INFINIBAND: mlx_ext extends the RDMA core" ;;
esac
for f in rust/libkernel.rmeta rust/libmacros.so; do
	[ -f "$kdir/$f" ] ||
		fail "no $f: out-of-tree Rust modules need the kernel's Rust build products, which 6.12's install-extmod-build (distribution header packages) does not ship; point KDIR at the full tree the kernel was built in"
done

want=$(config RUSTC_VERSION_TEXT)
have=$("$rustc" --version 2>/dev/null) ||
	fail "rustc '$rustc' does not run (set RUSTC to the rustc that built the kernel: $want)"
[ "$have" = "$want" ] ||
	fail "rustc is '$have' but the kernel was built with '$want': the kernel crate's metadata only loads in that rustc (set RUSTC)"

want=$(config BINDGEN_VERSION_TEXT)
have=$("$bindgen" --version 2>/dev/null) ||
	fail "bindgen '$bindgen' does not run (set BINDGEN to the bindgen that built the kernel: $want)"
[ "$have" = "$want" ] ||
	fail "bindgen is '$have' but the kernel was built with '$want' (set BINDGEN)"

sysroot=$("$rustc" --print sysroot 2>/dev/null) || sysroot=
[ -f "$sysroot/lib/rustlib/src/rust/library/core/src/lib.rs" ] ||
	fail "rustc '$rustc' has no rust-src (its sysroot $sysroot lacks lib/rustlib/src/rust/library; on Debian install rust-web-src, with rustup 'rustup component add rust-src')"
