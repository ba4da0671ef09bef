#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds mlx_ext.ko out of tree against the cached test kernel, with the
# kernel's own Rust lints (CLIPPY=1). Prints the kernel directory on stdout;
# the full build log is build/module-build.log.
# With --no-warnings, fails if the build printed any warning.
source "$(dirname "$0")/lib.sh"

kdir=$("$MLX_EXT_ROOT/scripts/build-kernel.sh")
mapfile -t vars < <(kmake_vars)
mkdir -p "$MLX_EXT_BUILD"
log=$MLX_EXT_BUILD/module-build.log
say "module: make -C $(ksrc "$kdir") M=$MLX_EXT_ROOT ${vars[*]} CLIPPY=1 modules"
# Rebuild from scratch so that every warning is seen, not only new ones'.
make -C "$(ksrc "$kdir")" M="$MLX_EXT_ROOT" "${vars[@]}" clean >/dev/null
mod_timeout=${MLX_EXT_MODULE_TIMEOUT:-900}
if ! timeout -k 10 "$mod_timeout" make -C "$(ksrc "$kdir")" M="$MLX_EXT_ROOT" "${vars[@]}" CLIPPY=1 modules >"$log" 2>&1; then
	cat "$log" >&2
	die "module build failed or took over ${mod_timeout}s (log above, also in $log)"
fi
if [ "${1:-}" = --no-warnings ] && grep -qiE '(^|: )warning' "$log"; then
	grep -iE -A8 '(^|: )warning' "$log" >&2
	die "module build printed warnings (see $log)"
fi
echo "$kdir"
