#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# modules.sh modules|modules_install|clean KDIR: mlx_ext.ko and
# mlx_ext_sim.ko built, installed or cleaned against the kernel tree KDIR, a
# build tree or a distribution's headers package (`make modules KDIR=...`,
# the default being the running kernel's /lib/modules/$(uname -r)/build),
# the way Kbuild builds external modules.
# The test ULP is not built (the test targets build it against their own
# kernel). Before compiling it runs scripts/kernel-checks.sh, which stops
# with one line if the tree or the toolchain cannot build mlx_ext, and
# chooses the toolchain; before installing, its checks of the tree and host
# only (modules_install compiles nothing, and runs as root).
#
# Environment: RUSTC, BINDGEN (default: what kernel-checks.sh finds: the
# rustc the kernel was built with, under its own or its versioned name, and
# a bindgen recent enough), INSTALL_MOD_PATH (a staging
# root, default /), INSTALL_MOD_DIR (default updates), as Kbuild takes
# them. modules_install is Kbuild's: it signs the modules when the kernel
# has CONFIG_MODULE_SIG_ALL and its key (certs/signing_key.pem), and runs
# depmod for that kernel release.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

[ $# = 2 ] || { echo "usage: modules.sh modules|modules_install|clean KDIR" >&2; exit 2; }
target=$1 kdir=$2
rustc=${RUSTC:-rustc}
bindgen=${BINDGEN:-bindgen}

if [ "$target" = modules_install ]; then
	"$root/scripts/kernel-checks.sh" --no-tools "$kdir"
elif [ "$target" != clean ]; then
	tools=$("$root/scripts/kernel-checks.sh" "$kdir")
	rustc=$(sed -n 's/^RUSTC=//p' <<<"$tools")
	bindgen=$(sed -n 's/^BINDGEN=//p' <<<"$tools")
	rustlib=$(sed -n 's/^RUST_LIB=//p' <<<"$tools")
fi
vars=("M=$root" "RUSTC=$rustc" "BINDGEN=$bindgen" MLX_EXT_NO_TESTS=y)
# The kernel crate found outside the tree (Ubuntu's lib-rust package behind
# a broken link): rustc searches there too (KRUSTFLAGS, Makefile:1245 in 7.3).
if [ -n "${rustlib:-}" ] && [ "$rustlib" != "$kdir/rust" ]; then
	vars+=("KRUSTFLAGS=-L $rustlib" "MLX_EXT_RUST_LIB=$rustlib")
fi
# The C side is compiled by the compiler the kernel was built with: for a
# clang kernel, the clang of its major version (LLVM=-NN) where it is
# installed under that name, else the default one. CC and LD are named too:
# dkms 3.0 appends CC=clang and LD=ld.lld to the build command of a clang
# kernel (Debian's dkms 3.0.10, /usr/sbin/dkms:597-611), the unversioned
# ones, which reach Kbuild through MAKEFLAGS and would win over LLVM=-NN;
# a variable on the sub-make's own command line wins over MAKEFLAGS'.
if grep -q '^CONFIG_CC_IS_CLANG=y' "$kdir/.config" 2>/dev/null; then
	major=$(($(sed -n 's/^CONFIG_CLANG_VERSION=//p' "$kdir/.config") / 10000))
	if command -v "clang-$major" >/dev/null; then
		vars+=("LLVM=-$major" "CC=clang-$major")
		! command -v "ld.lld-$major" >/dev/null || vars+=("LD=ld.lld-$major")
	else
		vars+=(LLVM=1)
	fi
fi
case "$target" in
modules)
	say "modules: make -C $kdir ${vars[*]} modules"
	make -C "$kdir" "${vars[@]}" modules
	;;
modules_install)
	[ -f "$root/mlx_ext.ko" ] || { echo "mlx_ext: nothing to install: run 'make modules KDIR=$kdir' first" >&2; exit 1; }
	release=$(cat "$kdir/include/config/kernel.release" 2>/dev/null) ||
		{ echo "mlx_ext: $kdir has no include/config/kernel.release" >&2; exit 1; }
	export INSTALL_MOD_DIR=${INSTALL_MOD_DIR:-updates}
	# Kbuild runs in KDIR: a relative staging root is the caller's.
	if [ -n "${INSTALL_MOD_PATH:-}" ]; then
		INSTALL_MOD_PATH=$(realpath -m "$INSTALL_MOD_PATH")
		export INSTALL_MOD_PATH
	fi
	# Kbuild's modules_install signs (CONFIG_MODULE_SIG_ALL) and runs
	# depmod for the release, in INSTALL_MOD_PATH (scripts/depmod.sh).
	say "modules_install: make -C $kdir ${vars[*]} INSTALL_MOD_PATH=${INSTALL_MOD_PATH:-/} INSTALL_MOD_DIR=$INSTALL_MOD_DIR modules_install ($release)"
	make -C "$kdir" "${vars[@]}" modules_install
	;;
clean)
	make -C "$kdir" "${vars[@]}" clean
	;;
*)
	echo "usage: modules.sh modules|modules_install|clean KDIR" >&2
	exit 2
	;;
esac
