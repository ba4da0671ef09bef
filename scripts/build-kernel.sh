#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the Rust-enabled test kernel from Debian's linux-source-6.12 and the
# fragment kernel/mlx_ext.config, cached outside the repository under a key
# made of all its inputs (see kernel_inputs in lib.sh). Prints the kernel
# directory on stdout.
source "$(dirname "$0")/lib.sh"

dir=$(kernel_dir)
if [ -f "$dir/.complete" ]; then
	say "kernel: reusing cached build $dir"
	echo "$dir"
	exit 0
fi

jobs=${JOBS:-$(($(nproc) + 1))}
say "kernel: no cached build for key $(kernel_key); building in $dir (about 7 min on 2 cores)"
kernel_inputs | sed 's/^/    /' >&2
mkdir -p "$MLX_EXT_CACHE"
# Built in place (a kernel tree holds absolute paths); .complete, written
# last, marks a usable build, so an interrupted one is started over.
rm -rf "$dir"
mkdir -p "$dir"
tar -xf "$KERNEL_SRC_TAR" -C "$dir"
src="$dir/linux-source-6.12"
mapfile -t vars < <(kmake_vars)
km() { make -C "$src" -s "${vars[@]}" "$@"; }

km rustavailable >&2 || die "the Rust toolchain does not satisfy the kernel (see 'make rustavailable' above); run scripts/setup.sh"
say "kernel: configuring (tinyconfig + kernel/mlx_ext.config)"
km tinyconfig >/dev/null
(cd "$src" && scripts/kconfig/merge_config.sh -m -O . .config \
	"$MLX_EXT_ROOT/kernel/mlx_ext.config" >/dev/null)
km olddefconfig >/dev/null

dropped=0
while IFS= read -r line; do
	case "$line" in CONFIG_*=*) ;; *) continue ;; esac
	grep -qx -- "$line" "$src/.config" && continue
	echo "mlx_ext: error: Kconfig dropped '$line' (now: $(grep -E "^(# )?${line%%=*}[= ]" "$src/.config" || echo unset))" >&2
	dropped=1
done <"$MLX_EXT_ROOT/kernel/mlx_ext.config"
((dropped == 0)) || die "the kernel config lost options asked for by kernel/mlx_ext.config (a dependency is missing)"

say "kernel: building bzImage and modules with -j$jobs"
start=$SECONDS
km -j"$jobs" bzImage modules >&2 || die "kernel build failed (log above)"
say "kernel: installing modules"
km INSTALL_MOD_PATH="$dir/modinst" modules_install >/dev/null
kernel_inputs >"$dir/inputs"
echo "$((SECONDS - start))" >"$dir/build-seconds"
touch "$dir/.complete"
say "kernel: built in $((SECONDS - start)) s"
echo "$dir"
