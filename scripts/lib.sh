# SPDX-License-Identifier: GPL-2.0
# Common settings of the mlx_ext scripts. Sourced, not run.

set -euo pipefail

MLX_EXT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Where the kernel build is cached: outside the repository, shared by clones.
MLX_EXT_CACHE=${MLX_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mlx_ext}
# Per-clone build products (initramfs, console logs).
MLX_EXT_BUILD=${MLX_EXT_BUILD:-$MLX_EXT_ROOT/build}

# The kernel's Rust must be built by Debian's rustc, which ships rust-src;
# the rustup toolchain first on PATH has none.
KRUSTC=${KRUSTC:-/usr/bin/rustc}
KCLIPPY=${KCLIPPY:-/usr/bin/clippy-driver}
KRUSTFMT=${KRUSTFMT:-/usr/bin/rustfmt}
# The cargo-installed bindgen-cli first: Debian's bindgen is too old.
if [ -z "${KBINDGEN:-}" ]; then
	if [ -x "$HOME/.cargo/bin/bindgen" ]; then KBINDGEN=$HOME/.cargo/bin/bindgen
	else KBINDGEN=$(command -v bindgen 2>/dev/null || echo "$HOME/.cargo/bin/bindgen"); fi
fi
KERNEL_SRC_TAR=/usr/src/linux-source-6.12.tar.xz

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'mlx_ext: error: %s\n' "$*" >&2; exit 1; }

# The make variables every kernel or module build needs.
kmake_vars() {
	printf '%s\n' LLVM=1 "RUSTC=$KRUSTC" "BINDGEN=$KBINDGEN" \
		"CLIPPY_DRIVER=$KCLIPPY" "RUSTFMT=$KRUSTFMT"
}

# The inputs of the kernel build, one per line. Their hash is the cache key.
# Bump the recipe number when scripts/build-kernel.sh changes how it builds.
KERNEL_RECIPE=1
kernel_inputs() {
	echo "recipe $KERNEL_RECIPE"
	echo "linux-source-6.12 $(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null || echo missing)"
	echo "rustc $("$KRUSTC" --version 2>/dev/null || echo missing)"
	echo "bindgen $("$KBINDGEN" --version 2>/dev/null || echo missing)"
	echo "clang $(clang --version 2>/dev/null | head -n1 || echo missing)"
	echo "lld $(ld.lld --version 2>/dev/null | head -n1 || echo missing)"
	echo "fragment:"
	cat "$MLX_EXT_ROOT/kernel/mlx_ext.config"
}
kernel_key() { kernel_inputs | sha256sum | cut -c1-16; }
kernel_dir() { echo "$MLX_EXT_CACHE/kernel-$(kernel_key)"; }
